#ifndef ALCEDO_CAVIF_SHIM_H
#define ALCEDO_CAVIF_SHIM_H
#include <avif/avif.h>
#endif

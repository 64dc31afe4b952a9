#ifndef ALCEDO_CHEIF_SHIM_H
#define ALCEDO_CHEIF_SHIM_H
#include <libheif/heif.h>
#endif

#ifndef ALCEDO_JPEG_H
#define ALCEDO_JPEG_H
#include <stddef.h>
#include <stdint.h>

/* The libjpeg API version Alcedo was compiled against (JPEG_LIB_VERSION, e.g. 62). */
int alcedo_jpeg_lib_version(void);

#endif

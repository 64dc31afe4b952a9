#ifndef ALCEDO_CODECS_H
#define ALCEDO_CODECS_H
/* C shims for libraries whose error paths Swift cannot take directly (libjpeg's setjmp/longjmp). */
#include <stddef.h>
#include <stdint.h>

#include "alcedo_jpeg.h"
#include "alcedo_pixels.h"
#include "alcedo_malloc.h"
#include "alcedo_png_write.h"

#endif

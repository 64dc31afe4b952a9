#include <stdio.h>
#include <stddef.h>
#include <jpeglib.h>
#include "alcedo_jpeg.h"

int alcedo_jpeg_lib_version(void) {
    return JPEG_LIB_VERSION;
}

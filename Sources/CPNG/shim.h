#ifndef ALCEDO_CPNG_SHIM_H
#define ALCEDO_CPNG_SHIM_H
#include <png.h>

/* Function-like macros of the simplified API do not import into Swift: re-export them. */
static const unsigned int ALCEDO_PNG_FORMAT_RGBA = PNG_FORMAT_RGBA;
static const unsigned int ALCEDO_PNG_IMAGE_VERSION = PNG_IMAGE_VERSION;

static inline unsigned long alcedo_png_image_row_stride(const png_image *image) {
    return (unsigned long)PNG_IMAGE_ROW_STRIDE(*image);
}
static inline unsigned long alcedo_png_image_buffer_size(const png_image *image, unsigned long stride) {
    return (unsigned long)PNG_IMAGE_BUFFER_SIZE(*image, stride);
}
static inline int alcedo_png_image_failed(const png_image *image) {
    return PNG_IMAGE_FAILED(*image);
}
#endif

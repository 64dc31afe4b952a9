#ifndef ALCEDO_CPNG_SHIM_H
#define ALCEDO_CPNG_SHIM_H
#include <png.h>
#include <zlib.h>

/* Function-like and composite macros of the simplified API do not import into Swift: re-export them. */
static const unsigned int ALCEDO_PNG_FORMAT_GRAY = PNG_FORMAT_GRAY;
static const unsigned int ALCEDO_PNG_FORMAT_GA = PNG_FORMAT_GA;
static const unsigned int ALCEDO_PNG_FORMAT_RGB = PNG_FORMAT_RGB;
static const unsigned int ALCEDO_PNG_FORMAT_RGBA = PNG_FORMAT_RGBA;
static const unsigned int ALCEDO_PNG_FORMAT_RGBA_COLORMAP = PNG_FORMAT_RGBA_COLORMAP;
static const unsigned int ALCEDO_PNG_IMAGE_VERSION = PNG_IMAGE_VERSION;
/* Untagged 16-bit files are sRGB-encoded (libpng's simplified API otherwise assumes linear). */
static const unsigned int ALCEDO_PNG_IMAGE_FLAG_16BIT_sRGB = PNG_IMAGE_FLAG_16BIT_sRGB;
static const unsigned int ALCEDO_PNG_IMAGE_WARNING = PNG_IMAGE_WARNING;

static inline unsigned long alcedo_png_image_row_stride(const png_image *image) {
    return (unsigned long)PNG_IMAGE_ROW_STRIDE(*image);
}
static inline unsigned long alcedo_png_image_buffer_size(const png_image *image, unsigned long stride) {
    return (unsigned long)PNG_IMAGE_BUFFER_SIZE(*image, stride);
}
static inline int alcedo_png_image_failed(const png_image *image) {
    return PNG_IMAGE_FAILED(*image);
}
/* The largest PNG png_image_write_to_memory can produce for `image` (8-bit, no colour-map). */
static inline png_alloc_size_t alcedo_png_image_png_size_max(const png_image *image) {
    return PNG_IMAGE_PNG_SIZE_MAX(*image);
}

/* zlib's CRC-32 (the PNG chunk checksum) and Adler-32 (the zlib stream checksum). */
static inline unsigned long alcedo_crc32(unsigned long crc, const unsigned char *bytes, unsigned int count) {
    return crc32(crc, bytes, count);
}
static inline unsigned long alcedo_adler32(unsigned long adler, const unsigned char *bytes, unsigned int count) {
    return adler32(adler, bytes, count);
}

/* inflateInit is a macro: wrap it for Swift. */
static inline int alcedo_inflate_init(z_stream *stream) {
    return inflateInit(stream);
}
#endif

#ifndef ALCEDO_CAVIF_H
#define ALCEDO_CAVIF_H
/*
 * libavif, loaded with dlopen on first use instead of at program start: libavif brings
 * libaom, dav1d, rav1e, SVT-AV1 and libgav1 with it, whose loading costs every process a few
 * milliseconds and megabytes even when it never sees an AVIF file.
 *
 * The types and constants come from libavif's own header; the functions Alcedo calls are
 * reached through the table below, filled by alcedo_avif_load().
 */
#include <avif/avif.h>

#define ALCEDO_AVIF_FUNCTIONS(X) \
    X(avifVersion) \
    X(avifResultToString) \
    X(avifRWDataFree) \
    X(avifImageCreate) \
    X(avifImageDestroy) \
    X(avifImageSetProfileICC) \
    X(avifImageSetMetadataExif) \
    X(avifImageSetMetadataXMP) \
    X(avifImageRGBToYUV) \
    X(avifImageYUVToRGB) \
    X(avifRGBImageSetDefaults) \
    X(avifDecoderCreate) \
    X(avifDecoderDestroy) \
    X(avifDecoderSetIOMemory) \
    X(avifDecoderParse) \
    X(avifDecoderNextImage) \
    X(avifDecoderNthImageTiming) \
    X(avifEncoderCreate) \
    X(avifEncoderDestroy) \
    X(avifEncoderAddImage) \
    X(avifEncoderFinish)

/// The libavif functions Alcedo calls, each non-NULL in a table alcedo_avif_load() returns.
typedef struct alcedo_avif_api {
#define ALCEDO_AVIF_FIELD(name) __typeof__(name) *name;
    ALCEDO_AVIF_FUNCTIONS(ALCEDO_AVIF_FIELD)
#undef ALCEDO_AVIF_FIELD
} alcedo_avif_api;

/// Loads libavif (once; later calls return the same answer) and returns its function table,
/// or NULL when the library cannot be loaded, lacks a function, or is not the version of
/// the header Alcedo was built with; alcedo_avif_load_error() then says why. Thread-safe.
const alcedo_avif_api *alcedo_avif_load(void);

/// Why alcedo_avif_load() returned NULL, or NULL when it did not.
const char *alcedo_avif_load_error(void);

#endif

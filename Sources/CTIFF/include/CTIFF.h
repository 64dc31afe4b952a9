#ifndef ALCEDO_CTIFF_H
#define ALCEDO_CTIFF_H
/*
 * libtiff, loaded with dlopen on first use instead of at program start: libtiff brings
 * libjbig, libLerc, libdeflate, libzstd, liblzma and libwebp with it, whose loading costs
 * every process time and memory even when it never sees a TIFF file.
 *
 * The types and constants come from libtiff's own header; the functions are reached through
 * the table below, filled by alcedo_tiff_load(). libtiff's variadic TIFFGetField and
 * TIFFSetField, its printf-style error handlers and its client I/O callbacks cannot be
 * called or written in Swift: the small functions after the table do that in C.
 */
#include <stddef.h>
#include <stdint.h>
#include <tiffio.h>

#define ALCEDO_TIFF_FUNCTIONS(X) \
    X(TIFFGetVersion) \
    X(TIFFOpenOptionsAlloc) \
    X(TIFFOpenOptionsFree) \
    X(TIFFOpenOptionsSetMaxSingleMemAlloc) \
    X(TIFFOpenOptionsSetErrorHandlerExtR) \
    X(TIFFOpenOptionsSetWarningHandlerExtR) \
    X(TIFFClientOpenExt) \
    X(TIFFClose) \
    X(TIFFNumberOfDirectories) \
    X(TIFFSetDirectory) \
    X(TIFFIsTiled) \
    X(TIFFIsBigEndian) \
    X(TIFFIsBigTIFF) \
    X(TIFFIsCODECConfigured) \
    X(TIFFStripSize64) \
    X(TIFFTileSize64) \
    X(TIFFScanlineSize64) \
    X(TIFFTileRowSize64) \
    X(TIFFNumberOfStrips) \
    X(TIFFNumberOfTiles) \
    X(TIFFComputeStrip) \
    X(TIFFComputeTile) \
    X(TIFFReadEncodedStrip) \
    X(TIFFReadEncodedTile) \
    X(TIFFGetStrileOffset) \
    X(TIFFGetStrileByteCount) \
    X(TIFFRGBAImageOK) \
    X(TIFFRGBAImageBegin) \
    X(TIFFRGBAImageGet) \
    X(TIFFRGBAImageEnd) \
    X(TIFFWriteEncodedStrip) \
    X(TIFFWriteDirectory) \
    X(TIFFFindField) \
    X(TIFFFieldDataType)

/// libtiff's variadic functions: Swift cannot call them, so only the C functions below do.
#define ALCEDO_TIFF_VARIADIC_FUNCTIONS(X) \
    X(TIFFGetField) \
    X(TIFFGetFieldDefaulted) \
    X(TIFFSetField)

/// The libtiff functions Alcedo calls, each non-NULL in a table alcedo_tiff_load() returns.
typedef struct alcedo_tiff_api {
#define ALCEDO_TIFF_FIELD(name) __typeof__(name) *name;
    ALCEDO_TIFF_FUNCTIONS(ALCEDO_TIFF_FIELD)
#undef ALCEDO_TIFF_FIELD
} alcedo_tiff_api;

/// Loads libtiff (once; later calls return the same answer) and returns its function table,
/// or NULL when the library cannot be loaded, lacks a function or is older than 4.5;
/// alcedo_tiff_load_error() then says why. Thread-safe.
const alcedo_tiff_api *alcedo_tiff_load(void);

/// Why alcedo_tiff_load() returned NULL, or NULL when it did not.
const char *alcedo_tiff_load_error(void);

/// The first error and the first warning libtiff reported for one handle, and how many.
typedef struct alcedo_tiff_messages {
    char error[512];
    char warning[512];
    int errors;
    int warnings;
} alcedo_tiff_messages;

/// A TIFF opened over bytes in memory or an open file (read), or a growing memory buffer (write).
typedef struct alcedo_tiff_file {
    TIFF *tiff;
    /* Reading from a file: its descriptor (read with pread, never mapped), else -1. */
    int descriptor;
    /* Reading: the caller's bytes, never copied or written. Writing: a malloc'd buffer. */
    const uint8_t *data;
    uint8_t *output;
    uint64_t size;
    uint64_t capacity;
    uint64_t position;
    int writing;
    int write_failed;
    alcedo_tiff_messages messages;
} alcedo_tiff_file;

/// Opens `size` bytes at `data` for reading (they must outlive the file). Every libtiff
/// error and warning goes to `file->messages`, never to stderr. No single allocation
/// libtiff makes may exceed `max_single_allocation` bytes (0: libtiff's default). Returns
/// 0 on success; on failure the messages say why and `file->tiff` is NULL.
int alcedo_tiff_open_memory(alcedo_tiff_file *file, const void *data, uint64_t size, int64_t max_single_allocation);

/// Opens the file at `descriptor` for reading (it must stay open until the file is closed):
/// libtiff reads the directories and each strip or tile with pread, into buffers of its own, so
/// the file is never held whole. `size` is the file's size. Otherwise as
/// alcedo_tiff_open_memory.
int alcedo_tiff_open_descriptor(alcedo_tiff_file *file, int descriptor, uint64_t size, int64_t max_single_allocation);

/// Opens a TIFF for writing into a growing memory buffer ("w", or "w8" for BigTIFF).
int alcedo_tiff_open_writer(alcedo_tiff_file *file, const char *mode);

/// Closes the handle (for a writer, flushing the last directory) and, for a writer, hands the
/// bytes to the caller in `*bytes` (free() them) with their count; returns 0 on success.
int alcedo_tiff_close(alcedo_tiff_file *file, uint8_t **bytes, uint64_t *count);

/// TIFFGetField for a tag holding one 16-bit value; returns 1 when the tag is present.
int alcedo_tiff_get_u16(TIFF *tiff, uint32_t tag, uint16_t *value);
/// TIFFGetFieldDefaulted for a tag holding one 16-bit value.
int alcedo_tiff_get_u16_defaulted(TIFF *tiff, uint32_t tag, uint16_t *value);
/// TIFFGetField for a tag holding one 32-bit value.
int alcedo_tiff_get_u32(TIFF *tiff, uint32_t tag, uint32_t *value);
/// The ICC profile (TIFFTAG_ICCPROFILE): its bytes, owned by libtiff, and their count.
int alcedo_tiff_get_icc(TIFF *tiff, uint32_t *count, const void **bytes);
/// The ExtraSamples tag: the count and the values, owned by libtiff.
int alcedo_tiff_get_extra_samples(TIFF *tiff, uint16_t *count, const uint16_t **values);
/// The Colormap tag: three arrays of 2^bits 16-bit entries, owned by libtiff.
int alcedo_tiff_get_colormap(TIFF *tiff, const uint16_t **red, const uint16_t **green, const uint16_t **blue);
/// The InkSet tag, 1 (CMYK) when absent.
uint16_t alcedo_tiff_ink_set(TIFF *tiff);
/// The WhitePoint tag's chromaticity (x, y); 0 when absent.
int alcedo_tiff_get_white_point(TIFF *tiff, float *x, float *y);

/// TIFFSetField for a tag holding one 16-bit value (passed as int, as libtiff reads it).
int alcedo_tiff_set_u16(TIFF *tiff, uint32_t tag, uint16_t value);
/// TIFFSetField for a tag holding one 32-bit value.
int alcedo_tiff_set_u32(TIFF *tiff, uint32_t tag, uint32_t value);
/// TIFFSetField for the ICC profile.
int alcedo_tiff_set_icc(TIFF *tiff, uint32_t count, const void *bytes);
/// TIFFSetField for ExtraSamples.
int alcedo_tiff_set_extra_samples(TIFF *tiff, uint16_t count, const uint16_t *values);
/// The bytes of a tag holding an array (the XMP packet, 700; the IPTC block, 33723, whose
/// count libtiff keeps in 32-bit words: turned into bytes here), owned by libtiff.
int alcedo_tiff_get_bytes(TIFF *tiff, uint32_t tag, uint32_t *count, const void **bytes);
/// TIFFSetField for a tag holding an array of bytes (the IPTC block is written as 32-bit
/// words when libtiff types it so: `count` must then be a multiple of 4).
int alcedo_tiff_set_bytes(TIFF *tiff, uint32_t tag, uint32_t count, const void *bytes);
/// TIFFSetField for an ASCII tag.
int alcedo_tiff_set_string(TIFF *tiff, uint32_t tag, const char *value);

/// Reads the current directory through libtiff's RGBA interface (the path for layouts
/// Alcedo does not convert itself: subsampled YCbCr without JPEG, CIE L*a*b*, LogLuv…) into
/// `raster` (`width * height` pixels, RGBA bytes, associated alpha, rows top to bottom as
/// stored: the Orientation tag is not applied). Returns 1 on success.
int alcedo_tiff_read_rgba(TIFF *tiff, uint32_t *raster, uint32_t width, uint32_t height, char message[1024]);

#endif

#ifndef ALCEDO_PNG_WRITE_H
#define ALCEDO_PNG_WRITE_H

#include <stddef.h>
#include <stdint.h>

/// How the rows of a PNG are filtered before compression.
enum {
    /// Per row, the filter whose output has the smallest sum of absolute values (the PNG
    /// specification's recommended heuristic; libpng's "all filters").
    ALCEDO_PNG_FILTER_ADAPTIVE = 0,
    /// No filter on any row.
    ALCEDO_PNG_FILTER_NONE = 1,
    /// Sub on every row.
    ALCEDO_PNG_FILTER_SUB = 2,
    /// Up on every row.
    ALCEDO_PNG_FILTER_UP = 3,
    /// Paeth on every row.
    ALCEDO_PNG_FILTER_PAETH = 4,
    /// Adaptive or none, whichever compresses a sample of the rows (one band of 8 rows in
    /// every 64) smaller: photographs and gradients filter well, flat-coloured screenshots and
    /// line art compress better unfiltered. When adaptive wins, the image is compressed at
    /// `level` - 2 (at least 1): on such content the higher levels gain about 1% of the bytes
    /// for 40 to 50% more time (measured with libdeflate 1.14 on photos and alpha images).
    ALCEDO_PNG_FILTER_AUTO = 5,
};

/// One PNG to write: 8-bit samples, `channels` per pixel (1 gray, 2 gray + alpha, 3 RGB,
/// 4 RGBA), or one palette index per pixel when `palette` is set.
typedef struct {
    const uint8_t *pixels;
    size_t stride;
    uint32_t width;
    uint32_t height;
    /// The channels written: 1 gray, 2 gray + alpha, 3 RGB, 4 RGBA.
    int channels;
    /// The channels of `pixels`: the same as `channels`, or 4 (RGBA) to write `channels` of
    /// them (gray from red, its alpha from the fourth) without a repacked copy.
    int source_channels;
    /// `palette_count` RGB triples (1 to 256), or NULL for true colour or gray.
    const uint8_t *palette;
    int palette_count;
    /// Alpha of the first `alpha_count` palette entries (a tRNS chunk), or NULL.
    const uint8_t *palette_alpha;
    int alpha_count;
    /// 1 for Adam7 interlacing.
    int interlaced;
    /// libdeflate's compression level, 0 (stored) to 12 (zlib's scale up to 9).
    int level;
    /// An ALCEDO_PNG_FILTER_ value; palette images are never filtered.
    int filter;
    /// 1 to write an sRGB chunk (perceptual intent).
    int srgb;
} alcedo_png_write_params;

/// Encodes `params` into a new buffer (`*out`, `*out_size`; free it with free()).
/// Returns 0 on success, -1 for invalid parameters, -2 when memory ran out.
int alcedo_png_write(const alcedo_png_write_params *params, uint8_t **out, size_t *out_size);

#endif

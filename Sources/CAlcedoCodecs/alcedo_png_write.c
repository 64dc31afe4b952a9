// A PNG writer: rows filtered here, the zlib stream made by libdeflate, chunks with their CRC.
// 8-bit samples only (gray, gray + alpha, RGB, RGBA, or palette indices), Adam7 optional.

#include "alcedo_png_write.h"

#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint8_t *data;
    size_t size;
    size_t capacity;
    int failed;
} png_buffer;

static void put(png_buffer *buffer, const void *bytes, size_t count) {
    if (buffer->failed || count == 0) return;
    if (count > buffer->capacity - buffer->size) {
        size_t capacity = buffer->capacity ? buffer->capacity : 4096;
        while (count > capacity - buffer->size) {
            if (capacity > SIZE_MAX / 2) { buffer->failed = 1; return; }
            capacity *= 2;
        }
        uint8_t *grown = realloc(buffer->data, capacity);
        if (!grown) { buffer->failed = 1; return; }
        buffer->data = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->data + buffer->size, bytes, count);
    buffer->size += count;
}

static void put32(uint8_t *at, uint32_t value) {
    at[0] = (uint8_t)(value >> 24); at[1] = (uint8_t)(value >> 16);
    at[2] = (uint8_t)(value >> 8); at[3] = (uint8_t)value;
}

/// One chunk: length, type, data, CRC of type and data.
static void chunk(png_buffer *buffer, const char type[4], const uint8_t *data, size_t count) {
    uint8_t header[8];
    put32(header, (uint32_t)count);
    memcpy(header + 4, type, 4);
    put(buffer, header, 8);
    put(buffer, data, count);
    uint32_t crc = libdeflate_crc32(0, type, 4);
    if (count) crc = libdeflate_crc32(crc, data, count);
    uint8_t trailer[4];
    put32(trailer, crc);
    put(buffer, trailer, 4);
}

/// Writes filter type `type` of `row` (above it `prior`, never NULL: a row of zeros for the first
/// one) into `out` (without the type byte) and returns the sum of the outputs read as signed
/// bytes' magnitudes, the adaptive heuristic's measure. The first `bpp` bytes have no left
/// neighbour and are done apart, so that the main loops have no branch and vectorize.
static uint64_t magnitude_sum(const uint8_t *out, size_t count) {
    uint64_t sum = 0;
    for (size_t i = 0; i < count; i++) {
        int8_t v = (int8_t)out[i];
        sum += (uint64_t)(v < 0 ? -v : v);
    }
    return sum;
}

static void filter_row(int type, const uint8_t *restrict row, const uint8_t *restrict prior, size_t count, size_t bpp,
                       uint8_t *restrict out) {
    size_t head = bpp < count ? bpp : count;
    size_t i;
    switch (type) {
    case 0:
        memcpy(out, row, count);
        return;
    case 1:
        for (i = 0; i < head; i++) out[i] = row[i];
        for (i = head; i < count; i++) out[i] = (uint8_t)(row[i] - row[i - bpp]);
        return;
    case 2:
        for (i = 0; i < count; i++) out[i] = (uint8_t)(row[i] - prior[i]);
        return;
    case 3:
        for (i = 0; i < head; i++) out[i] = (uint8_t)(row[i] - (prior[i] >> 1));
        for (i = head; i < count; i++) out[i] = (uint8_t)(row[i] - ((row[i - bpp] + prior[i]) >> 1));
        return;
    default:
        for (i = 0; i < head; i++) out[i] = (uint8_t)(row[i] - prior[i]);
        for (i = head; i < count; i++) {
            int a = row[i - bpp], b = prior[i], c = prior[i - bpp];
            int pa = b - c, pb = a - c, pc = pa + pb;
            pa = pa < 0 ? -pa : pa;
            pb = pb < 0 ? -pb : pb;
            pc = pc < 0 ? -pc : pc;
            int predicted = (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
            out[i] = (uint8_t)(row[i] - predicted);
        }
        return;
    }
}

/// Filters `row` (above it `above`) into `target`: its filter type byte, then the filtered
/// bytes. `trials` holds five rows of scratch for the adaptive choice.
static void filter_into(int filter, const uint8_t *row, const uint8_t *above, size_t row_bytes, size_t bpp,
                        uint8_t *trials, size_t max_row, uint8_t *target) {
    if (filter == ALCEDO_PNG_FILTER_ADAPTIVE) {
        uint64_t best = UINT64_MAX;
        int best_type = 0;
        for (int type = 0; type < 5; type++) {
            uint8_t *trial = trials + (size_t)type * max_row;
            filter_row(type, row, above, row_bytes, bpp, trial);
            uint64_t sum = magnitude_sum(trial, row_bytes);
            if (sum < best) { best = sum; best_type = type; }
        }
        target[0] = (uint8_t)best_type;
        memcpy(target + 1, trials + (size_t)best_type * max_row, row_bytes);
    } else {
        int type = filter == ALCEDO_PNG_FILTER_NONE ? 0 : filter == ALCEDO_PNG_FILTER_SUB ? 1
            : filter == ALCEDO_PNG_FILTER_UP ? 2 : 4;
        target[0] = (uint8_t)type;
        filter_row(type, row, above, row_bytes, bpp, target + 1);
    }
}

/// Row `y`'s pixels `x0`, `x0 + dx`, … (`w` of them) in the written layout: `source` itself when
/// nothing needs moving, else copied into `buffer`.
static const uint8_t *fetch_row(const alcedo_png_write_params *p, uint32_t y, size_t x0, size_t dx, size_t w,
                                size_t bpp, uint8_t *buffer) {
    const uint8_t *source = p->pixels + (size_t)y * p->stride;
    size_t sc = p->palette ? 1 : (size_t)p->source_channels;
    if (dx == 1 && sc == bpp) return source + x0 * bpp;
    if (sc == bpp) {
        for (size_t i = 0; i < w; i++) memcpy(buffer + i * bpp, source + (x0 + i * dx) * bpp, bpp);
        return buffer;
    }
    // From RGBA: gray is red; gray + alpha is red and alpha; RGB drops alpha.
    for (size_t i = 0; i < w; i++) {
        const uint8_t *s = source + (x0 + i * dx) * 4;
        uint8_t *d = buffer + i * bpp;
        switch (bpp) {
        case 1: d[0] = s[0]; break;
        case 2: d[0] = s[0]; d[1] = s[3]; break;
        case 3: d[0] = s[0]; d[1] = s[1]; d[2] = s[2]; break;
        default: memcpy(d, s, 4); break;
        }
    }
    return buffer;
}

/// ALCEDO_PNG_FILTER_AUTO's choice: the sample rows (4 in every 64), filtered adaptively and
/// unfiltered, each compressed at level 1; the smaller wins (adaptive on a tie). Returns the
/// filter, or -1 when memory ran out.
static int choose_filter(const alcedo_png_write_params *p, size_t bpp, uint8_t *trials, const uint8_t *zeros,
                         uint8_t *row_buffer, uint8_t *above_buffer) {
    size_t row_bytes = (size_t)p->width * bpp;
    size_t rows = 0;
    for (uint32_t y = 0; y < p->height; y++) if ((y & 63) < 4) rows++;
    size_t size = rows * (row_bytes + 1);
    uint8_t *adaptive = malloc(size), *none = malloc(size);
    struct libdeflate_compressor *compressor = libdeflate_alloc_compressor(1);
    uint8_t *out = NULL;
    size_t bound = 0;
    if (compressor) {
        bound = libdeflate_zlib_compress_bound(compressor, size);
        out = malloc(bound);
    }
    int chosen = -1;
    if (adaptive && none && compressor && out) {
        size_t at = 0;
        for (uint32_t y = 0; y < p->height; y++) {
            if ((y & 63) >= 4) continue;
            const uint8_t *row = fetch_row(p, y, 0, 1, p->width, bpp, row_buffer);
            const uint8_t *above = y == 0 ? zeros : fetch_row(p, y - 1, 0, 1, p->width, bpp, above_buffer);
            filter_into(ALCEDO_PNG_FILTER_ADAPTIVE, row, above, row_bytes, bpp, trials, row_bytes, adaptive + at);
            none[at] = 0;
            memcpy(none + at + 1, row, row_bytes);
            at += row_bytes + 1;
        }
        size_t adaptive_size = libdeflate_zlib_compress(compressor, adaptive, size, out, bound);
        size_t none_size = libdeflate_zlib_compress(compressor, none, size, out, bound);
        chosen = (adaptive_size != 0 && none_size != 0 && none_size < adaptive_size)
            ? ALCEDO_PNG_FILTER_NONE : ALCEDO_PNG_FILTER_ADAPTIVE;
    }
    free(adaptive);
    free(none);
    free(out);
    if (compressor) libdeflate_free_compressor(compressor);
    return chosen;
}

static const int adam7[7][4] = {
    {0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2},
};

int alcedo_png_write(const alcedo_png_write_params *p, uint8_t **out, size_t *out_size) {
    *out = NULL;
    *out_size = 0;
    if (!p || !p->pixels || p->width == 0 || p->height == 0 || p->width > 0x7fffffffu || p->height > 0x7fffffffu)
        return -1;
    int indexed = p->palette != NULL;
    if (indexed && (p->palette_count < 1 || p->palette_count > 256 || p->alpha_count < 0 || p->alpha_count > p->palette_count))
        return -1;
    if (!indexed && (p->channels < 1 || p->channels > 4)) return -1;
    int bpp = indexed ? 1 : p->channels;
    int source_channels = indexed ? 1 : p->source_channels;
    if (source_channels != bpp && source_channels != 4) return -1;
    if ((uint64_t)p->width * (uint64_t)source_channels > p->stride) return -1;
    if (p->level < 0 || p->level > 12) return -1;
    if (p->filter < ALCEDO_PNG_FILTER_ADAPTIVE || p->filter > ALCEDO_PNG_FILTER_AUTO) return -1;
    int filter = indexed ? ALCEDO_PNG_FILTER_NONE : p->filter;
    int level = p->level;

    // The filtered rows of every pass, each behind its filter type byte.
    size_t raw_size = 0;
    int passes = p->interlaced ? 7 : 1;
    for (int pass = 0; pass < passes; pass++) {
        uint64_t w = p->interlaced ? (p->width > (uint32_t)adam7[pass][0] ? (p->width - adam7[pass][0] + adam7[pass][2] - 1) / adam7[pass][2] : 0) : p->width;
        uint64_t h = p->interlaced ? (p->height > (uint32_t)adam7[pass][1] ? (p->height - adam7[pass][1] + adam7[pass][3] - 1) / adam7[pass][3] : 0) : p->height;
        if (w == 0 || h == 0) continue;
        uint64_t bytes = (1 + w * (uint64_t)bpp) * h;
        if (bytes > (uint64_t)SIZE_MAX - raw_size) return -2;
        raw_size += (size_t)bytes;
    }
    size_t max_row = (size_t)p->width * (size_t)bpp;
    uint8_t *raw = malloc(raw_size);
    // Scratch: the pass's current and prior unfiltered rows, one output per filter type, and a
    // row of zeros (what the first row of a pass sees above it).
    uint8_t *scratch = malloc(max_row * 8 + 16);
    if (!raw || !scratch) { free(raw); free(scratch); return -2; }
    uint8_t *current = scratch, *prior = scratch + max_row, *trials = scratch + 2 * max_row;
    uint8_t *zeros = scratch + 7 * max_row;
    memset(zeros, 0, max_row);
    if (filter == ALCEDO_PNG_FILTER_AUTO) {
        filter = choose_filter(p, (size_t)bpp, trials, zeros, current, prior);
        if (filter < 0) { free(raw); free(scratch); return -2; }
        if (filter == ALCEDO_PNG_FILTER_ADAPTIVE && level > 1) level = level > 3 ? level - 2 : 1;
    }

    size_t at = 0;
    for (int pass = 0; pass < passes; pass++) {
        uint32_t x0 = 0, y0 = 0, dx = 1, dy = 1;
        if (p->interlaced) { x0 = adam7[pass][0]; y0 = adam7[pass][1]; dx = adam7[pass][2]; dy = adam7[pass][3]; }
        if (p->width <= x0 || p->height <= y0) continue;
        size_t w = (p->width - x0 + dx - 1) / dx;
        size_t row_bytes = w * (size_t)bpp;
        int first = 1;
        for (uint32_t y = y0; y < p->height; y += dy) {
            const uint8_t *row = fetch_row(p, y, x0, dx, w, (size_t)bpp, current);
            const uint8_t *above = first ? zeros : prior;
            filter_into(filter, row, above, row_bytes, (size_t)bpp, trials, max_row, raw + at);
            at += 1 + row_bytes;
            // The next row's "above" is this row, unfiltered.
            if (row == current) {
                uint8_t *swap = prior; prior = current; current = swap;
            } else {
                memcpy(prior, row, row_bytes);
            }
            first = 0;
        }
    }
    free(scratch);

    struct libdeflate_compressor *compressor = libdeflate_alloc_compressor(level);
    if (!compressor) { free(raw); return -2; }
    size_t bound = libdeflate_zlib_compress_bound(compressor, raw_size);
    uint8_t *compressed = malloc(bound);
    if (!compressed) { libdeflate_free_compressor(compressor); free(raw); return -2; }
    size_t compressed_size = libdeflate_zlib_compress(compressor, raw, raw_size, compressed, bound);
    libdeflate_free_compressor(compressor);
    free(raw);
    if (compressed_size == 0) { free(compressed); return -2; }

    png_buffer buffer = {0};
    static const uint8_t signature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
    put(&buffer, signature, 8);
    uint8_t ihdr[13];
    put32(ihdr, p->width);
    put32(ihdr + 4, p->height);
    static const uint8_t color_types[5] = {0, 0, 4, 2, 6};
    ihdr[8] = 8;
    ihdr[9] = indexed ? 3 : color_types[p->channels];
    ihdr[10] = 0;
    ihdr[11] = 0;
    ihdr[12] = p->interlaced ? 1 : 0;
    chunk(&buffer, "IHDR", ihdr, 13);
    if (p->srgb) {
        uint8_t intent = 0;
        chunk(&buffer, "sRGB", &intent, 1);
    }
    if (indexed) {
        chunk(&buffer, "PLTE", p->palette, (size_t)p->palette_count * 3);
        if (p->palette_alpha && p->alpha_count > 0) chunk(&buffer, "tRNS", p->palette_alpha, (size_t)p->alpha_count);
    }
    // IDAT chunks of at most 1 GiB each.
    size_t written = 0;
    do {
        size_t part = compressed_size - written;
        if (part > ((size_t)1 << 30)) part = (size_t)1 << 30;
        chunk(&buffer, "IDAT", compressed + written, part);
        written += part;
    } while (written < compressed_size);
    chunk(&buffer, "IEND", NULL, 0);
    free(compressed);
    if (buffer.failed) { free(buffer.data); return -2; }
    *out = buffer.data;
    *out_size = buffer.size;
    return 0;
}

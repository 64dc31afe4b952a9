#ifndef ALCEDO_JPEG_H
#define ALCEDO_JPEG_H
/*
 * A thin shim over libjpeg's classic API (libjpeg-turbo, API version 62).
 *
 * libjpeg reports fatal errors by calling error_exit, whose default implementation calls
 * exit(). Swift cannot call setjmp, so every function here that calls into libjpeg owns a
 * setjmp point: the shim's error_exit formats the message into a buffer and longjmps back,
 * and the function returns a status code instead. Nothing here ever exits the process or
 * prints to stderr.
 */
#include <stddef.h>
#include <stdint.h>

/* The libjpeg API version Alcedo was compiled against (JPEG_LIB_VERSION, e.g. 62). */
int alcedo_jpeg_lib_version(void);

/* What a shim call ended with. */
enum alcedo_jpeg_status {
    /* Success (warnings about corrupt data may have been recorded: see alcedo_jpeg_warning_count). */
    ALCEDO_JPEG_OK = 0,
    /* libjpeg stopped on an error in the data (the message says which). */
    ALCEDO_JPEG_CORRUPT = 1,
    /* The data ends before the image does (premature end of file, or a progressive image
       whose scans stop before every coefficient is complete). */
    ALCEDO_JPEG_TRUNCATED = 2,
    /* A valid JPEG that uses a feature this build cannot decode (12-bit or lossless data,
       an unknown colour space, ...). */
    ALCEDO_JPEG_UNSUPPORTED = 3,
    /* A call made out of order or with a buffer too small: a programming error. */
    ALCEDO_JPEG_MISUSE = 4,
    /* memory could not be allocated. */
    ALCEDO_JPEG_NO_MEMORY = 5,
    /* The CPU-time budget set with alcedo_jpeg_set_limits ran out (checked between rows of
       MCUs, scans and output rows). */
    ALCEDO_JPEG_TIMED_OUT = 6,
    /* libjpeg would need more working memory than the budget set with alcedo_jpeg_set_limits. */
    ALCEDO_JPEG_TOO_MUCH_MEMORY = 7
};

/* The colour space of the stored data, as libjpeg reads it from the header. */
enum alcedo_jpeg_color {
    ALCEDO_JPEG_COLOR_UNKNOWN = 0,
    ALCEDO_JPEG_COLOR_GRAY = 1,
    ALCEDO_JPEG_COLOR_RGB = 2,
    ALCEDO_JPEG_COLOR_YCBCR = 3,
    ALCEDO_JPEG_COLOR_CMYK = 4,
    ALCEDO_JPEG_COLOR_YCCK = 5
};

/* Most scans a progressive or multi-scan file may have before decoding stops with
   ALCEDO_JPEG_CORRUPT (hostile files use thousands of tiny scans to burn CPU time). */
#define ALCEDO_JPEG_MAX_SCANS 1000

/* Most blocks all scans together may visit, as a multiple of the blocks of every component
   (libjpeg's and mozjpeg's progressive scripts visit each block 3 to 12 times; a script giving
   each of the 64 coefficients its own scan visits it 64 times). Past it decoding stops with
   ALCEDO_JPEG_CORRUPT: every scan costs time in proportion to the blocks it covers, however
   little data it holds, so a file repeating a scan a thousand times over a large picture
   would take seconds before ALCEDO_JPEG_MAX_SCANS answers. */
#define ALCEDO_JPEG_MAX_SCAN_PASSES 64

/* What the header says. Sizes are those of the stored picture, before any EXIF orientation. */
typedef struct alcedo_jpeg_header {
    int32_t width;
    int32_t height;
    int32_t components;
    enum alcedo_jpeg_color color;
    int32_t precision;   /* bits per sample (8; 12-bit files fail earlier with UNSUPPORTED) */
    int32_t progressive; /* 1 for a progressive (SOF2/SOF10) file */
    int32_t arithmetic;  /* 1 when the entropy coding is arithmetic */
    /* The first APP1 segment starting with "Exif\0\0" (NULL when there is none), as stored
       after the marker length; valid until the decoder is destroyed. */
    const uint8_t *exif;
    size_t exif_length;
    /* Bytes of the whole-image coefficient buffer libjpeg allocates in jpeg_start_decompress
       for a progressive or multi-scan file (every component, 64 coefficients of 2 bytes per
       block, rounded up to whole MCUs); 0 for a single-scan file, which is decoded a row of
       MCUs at a time. Independent of DCT scaling. */
    uint64_t coefficient_bytes;
} alcedo_jpeg_header;

/* One decompression: libjpeg's state, the error manager and the jump point. Opaque. */
typedef struct alcedo_jpeg_decoder alcedo_jpeg_decoder;

/* Creates a decoder, or returns NULL when memory is short. Destroy it when done. */
alcedo_jpeg_decoder *alcedo_jpeg_decoder_create(void);

/* Frees everything the decoder holds. Accepts NULL. */
void alcedo_jpeg_decoder_destroy(alcedo_jpeg_decoder *decoder);

/*
 * Reads the header of the JPEG in data[0..<size] (up to the first scan) into *header.
 * The data must stay valid and unchanged until the decoder is destroyed. Running out of
 * data in the header is always ALCEDO_JPEG_TRUNCATED.
 */
enum alcedo_jpeg_status alcedo_jpeg_read_header(alcedo_jpeg_decoder *decoder, const uint8_t *data,
                                                size_t size, alcedo_jpeg_header *header);

/*
 * As alcedo_jpeg_read_header, reading the file open at fd from its current offset through a
 * 64 KB buffer instead of from memory: the file is never held whole. fd must stay open until
 * the decoder is destroyed (the decoder does not close it). The end of the file is handled as
 * the end of the data is; a read error is ALCEDO_JPEG_CORRUPT.
 */
enum alcedo_jpeg_status alcedo_jpeg_read_header_fd(alcedo_jpeg_decoder *decoder, int fd, alcedo_jpeg_header *header);

/*
 * Bounds what one decode may cost: at most cpu_budget_ns of the calling thread's CPU time
 * from this call on (0: no bound), checked between rows of MCUs, scans and output rows
 * (ALCEDO_JPEG_TIMED_OUT), and at most max_memory bytes of libjpeg's own working memory
 * (0: no bound; also given to libjpeg as max_memory_to_use), checked before
 * jpeg_start_decompress allocates it (ALCEDO_JPEG_TOO_MUCH_MEMORY). Call it before
 * alcedo_jpeg_start, on the thread that decodes.
 */
void alcedo_jpeg_set_limits(alcedo_jpeg_decoder *decoder, int64_t cpu_budget_ns, uint64_t max_memory);

/*
 * Starts decompressing at 1/scale_denominator of the stored size (1, 2, 4 or 8; libjpeg's
 * DCT scaling), with djpeg's default settings (JDCT_ISLOW, fancy upsampling), to RGBA with
 * alpha 255. Progressive and multi-scan files are read completely here.
 *
 * Without allow_truncated, data that ends before the last row of MCUs of a scan (premature
 * end of file, or a marker where entropy-coded data should be) stops decoding at once with
 * ALCEDO_JPEG_TRUNCATED, and so do scans that leave the image incomplete (a progressive file
 * missing its last scans, a sequential one missing a component). Data ending inside the
 * last row of MCUs, as in a file missing only its EOI marker, is tolerated. With
 * allow_truncated, libjpeg goes on as it does by default (missing data decodes as grey) and
 * alcedo_jpeg_was_truncated tells what happened.
 *
 * On success *out_width and *out_height hold the size alcedo_jpeg_read_pixels will write.
 */
enum alcedo_jpeg_status alcedo_jpeg_start(alcedo_jpeg_decoder *decoder, int scale_denominator,
                                          int allow_truncated, int32_t *out_width, int32_t *out_height);

/*
 * Writes every output row, as RGBA8 with alpha 255, into rgba: row y at rgba + y * stride.
 * stride must be at least 4 * out_width and capacity at least stride * out_height.
 * CMYK and YCCK data is taken as Adobe's inverted CMYK (what Photoshop writes and what
 * browsers assume) and turned into RGB as R = C * K / 255 (likewise G from M, B from Y),
 * rounded, as djpeg does.
 */
enum alcedo_jpeg_status alcedo_jpeg_read_pixels(alcedo_jpeg_decoder *decoder, uint8_t *rgba,
                                                size_t stride, size_t capacity);

/*
 * Writes the next rows, at most max_rows of them, as alcedo_jpeg_read_pixels does, into
 * rows (row i at rows + i * stride), and their number into *rows_read; the image is complete
 * when alcedo_jpeg_output_row reaches the output height. For callers that place rows
 * elsewhere (an orientation applied while decoding) without a second whole-image buffer.
 */
enum alcedo_jpeg_status alcedo_jpeg_read_rows(alcedo_jpeg_decoder *decoder, uint8_t *rows, size_t stride,
                                              int32_t max_rows, int32_t *rows_read);

/* The next output row alcedo_jpeg_read_rows will write (0 before the first). */
int32_t alcedo_jpeg_output_row(const alcedo_jpeg_decoder *decoder);

/* The message of the last error, or of the first warning after a success ("" when none). */
const char *alcedo_jpeg_message(const alcedo_jpeg_decoder *decoder);

/* How many corrupt-data warnings libjpeg has emitted so far. */
long alcedo_jpeg_warning_count(const alcedo_jpeg_decoder *decoder);

/* 1 when the data ended early or the scans left the image incomplete (only observable with
   allow_truncated: otherwise that is an ALCEDO_JPEG_TRUNCATED error), else 0. */
int alcedo_jpeg_was_truncated(const alcedo_jpeg_decoder *decoder);

/*
 * Incremental decoding, for previews of a progressive JPEG while it downloads (libjpeg's
 * buffered-image mode behind a suspending source). The decoder is an alcedo_jpeg_decoder
 * made by alcedo_jpeg_stream_create; destroy it with alcedo_jpeg_decoder_destroy. The
 * colour functions below and alcedo_jpeg_set_limits work on it as on any decoder.
 *
 * alcedo_jpeg_stream_append copies the next bytes of the file (in order, each byte once)
 * into the decoder, which keeps only what libjpeg has not consumed yet: feeding a file chunk
 * by chunk costs each byte one copy. It calls no libjpeg function.
 *
 * alcedo_jpeg_stream_read_header reads the header from the bytes appended so far; *suspended
 * is 1 when more bytes are needed (call it again after appending), else *header is filled
 * as alcedo_jpeg_read_header fills it.
 *
 * alcedo_jpeg_stream_start sets up the output at 1/scale_denominator (as alcedo_jpeg_start,
 * with buffered_image set) and allocates libjpeg's coefficient buffer; it reads nothing.
 *
 * alcedo_jpeg_stream_advance consumes the bytes appended so far. It stops when a scan is
 * complete (the next scan begins): *completed_scan is that scan's number (1, 2, ...); when
 * the bytes run out first it is 0 (append more and call again); at the end of the image it is -1.
 * The checks of ALCEDO_JPEG_MAX_SCANS, ALCEDO_JPEG_MAX_SCAN_PASSES and the CPU budget apply.
 *
 * alcedo_jpeg_stream_render writes the picture of the newest complete scan (with whatever
 * the coefficients of later scans already hold), as alcedo_jpeg_read_pixels writes pixels.
 * Block smoothing sees the coefficients' state as that scan left it, so a render at a scan
 * boundary is byte for byte the decode of the file cut before the next scan's marker.
 * It needs at least one complete scan and may be called after each advance.
 *
 * Any error leaves the decoder failed: later calls return ALCEDO_JPEG_MISUSE.
 */
alcedo_jpeg_decoder *alcedo_jpeg_stream_create(void);
enum alcedo_jpeg_status alcedo_jpeg_stream_append(alcedo_jpeg_decoder *decoder, const uint8_t *data, size_t size);
enum alcedo_jpeg_status alcedo_jpeg_stream_read_header(alcedo_jpeg_decoder *decoder, alcedo_jpeg_header *header,
                                                       int *suspended);
enum alcedo_jpeg_status alcedo_jpeg_stream_start(alcedo_jpeg_decoder *decoder, int scale_denominator,
                                                 int32_t *out_width, int32_t *out_height);
enum alcedo_jpeg_status alcedo_jpeg_stream_advance(alcedo_jpeg_decoder *decoder, int32_t *completed_scan);
enum alcedo_jpeg_status alcedo_jpeg_stream_render(alcedo_jpeg_decoder *decoder, uint8_t *rgba, size_t stride,
                                                  size_t capacity);

/* Largest whole-image coefficient buffer (2 bytes a sample) the encoder spends on optimised
   Huffman tables: 256 MiB, e.g. 44 MP at 4:4:4; larger images use the standard tables. */
#define ALCEDO_JPEG_OPTIMIZE_LIMIT (256u << 20)

/*
 * Colour. After alcedo_jpeg_read_header and before alcedo_jpeg_start:
 * alcedo_jpeg_icc_profile reassembles the ICC profile from the APP2 "ICC_PROFILE" segments
 * (multi-segment, in sequence order) into a buffer the caller frees with free(); it returns
 * 1 and sets *profile and *length, or returns 0 (no profile, or segments missing or
 * inconsistent: libjpeg warns and the profile is ignored).
 * alcedo_jpeg_adobe_transform returns the transform flag of the Adobe APP14 marker (0: no
 * transform, CMYK or RGB; 1: YCbCr; 2: YCCK), or -1 when the file has no Adobe marker. A CMYK
 * or YCCK file with that marker stores inverted CMYK (0 means full ink), as Photoshop writes.
 * alcedo_jpeg_keep_cmyk(decoder, 1) makes alcedo_jpeg_read_pixels leave CMYK and YCCK
 * files' samples as libjpeg writes them (C, M, Y, K, 4 bytes a pixel) for the caller to
 * convert through a colour profile.
 */
int alcedo_jpeg_icc_profile(alcedo_jpeg_decoder *decoder, uint8_t **profile, size_t *length);
int alcedo_jpeg_adobe_transform(const alcedo_jpeg_decoder *decoder);
void alcedo_jpeg_keep_cmyk(alcedo_jpeg_decoder *decoder, int keep);

/*
 * Compresses width x height RGBA8 pixels (row y at rgba + y * stride) into a JPEG in memory.
 * Pixels whose alpha is below 255 are composited onto white first. quality is 1...100;
 * Huffman tables are optimised (up to ALCEDO_JPEG_OPTIMIZE_LIMIT); chroma is subsampled 4:2:0 below quality 90 and kept 4:4:4
 * at 90 and above; progressive selects a progressive scan script.
 * On ALCEDO_JPEG_OK *output holds *output_size bytes the caller must free() with free();
 * otherwise *output is NULL and message (of capacity message_capacity) says why.
 */
enum alcedo_jpeg_status alcedo_jpeg_encode(const uint8_t *rgba, int32_t width, int32_t height, size_t stride,
                                           int quality, int progressive, uint8_t **output, size_t *output_size,
                                           char *message, size_t message_capacity);

/// The libjpeg-turbo version Alcedo was built against, as its header states it
/// (LIBJPEG_TURBO_VERSION_NUMBER, e.g. 2001005 for 2.1.5; 0 for another libjpeg).
int32_t alcedo_jpeg_library_version(void);

#endif

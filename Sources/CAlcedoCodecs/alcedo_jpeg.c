/*
 * libjpeg's classic API behind setjmp/longjmp: errors become status codes and messages.
 * See alcedo_jpeg.h for the contract of each function.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stddef.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <unistd.h>
#include <jpeglib.h>
#include <jerror.h>
#include "alcedo_jpeg.h"

int alcedo_jpeg_lib_version(void) {
    return JPEG_LIB_VERSION;
}

/* ---- Error handling shared by decoding and encoding ---------------------------------- */

/* libjpeg's error manager extended with the jump point and what the shim learnt.
   `pub` comes first so that cinfo->err can be cast back to this struct. */
typedef struct alcedo_jpeg_error {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    enum alcedo_jpeg_status status;
    int in_header;       /* reading the header: running out of data is always fatal */
    int allow_truncated; /* keep decoding (grey fill) when the data ends early */
    int ended_early;     /* the data ended before the last row of MCUs of a scan */
    int saw_end;         /* the data ran out somewhere (then any error is blamed on it) */
    int source_ended;    /* the source manager ran out of bytes and inserted a fake EOI */
    char message[JMSG_LENGTH_MAX];
} alcedo_jpeg_error;

static alcedo_jpeg_error *error_of(j_common_ptr cinfo) {
    return (alcedo_jpeg_error *)cinfo->err;
}

/* Errors that mean "valid JPEG, feature not available" rather than "broken data". */
static enum alcedo_jpeg_status status_for_error_code(int code) {
    switch (code) {
    case JERR_BAD_PRECISION:
    case JERR_SOF_UNSUPPORTED:
    case JERR_CONVERSION_NOTIMPL:
    case JERR_NOT_COMPILED:
    case JERR_ARITH_NOTIMPL:
    case JERR_NOTIMPL:
        return ALCEDO_JPEG_UNSUPPORTED;
    case JERR_OUT_OF_MEMORY:
        return ALCEDO_JPEG_NO_MEMORY;
    case JERR_NO_BACKING_STORE:
        /* A virtual array larger than max_memory_to_use: libjpeg would spill it to disk. */
        return ALCEDO_JPEG_TOO_MUCH_MEMORY;
    default:
        return ALCEDO_JPEG_CORRUPT;
    }
}

/* Formats the current message into the shim's buffer instead of printing it to stderr. */
static void capture_message(j_common_ptr cinfo) {
    (*cinfo->err->format_message)(cinfo, error_of(cinfo)->message);
}

static void stop(j_common_ptr cinfo, enum alcedo_jpeg_status status) {
    error_of(cinfo)->status = status;
    longjmp(error_of(cinfo)->jump, 1);
}

/* Replaces libjpeg's error_exit, which would call exit(). */
static void on_error_exit(j_common_ptr cinfo) {
    alcedo_jpeg_error *error = error_of(cinfo);
    if (cinfo->err->msg_code == JERR_BAD_PRECISION) {
        snprintf(error->message, JMSG_LENGTH_MAX, "%d-bit samples (only 8-bit JPEG is supported)",
                 cinfo->err->msg_parm.i[0]);
    } else {
        (*cinfo->err->output_message)(cinfo);
    }
    stop(cinfo, error->saw_end ? ALCEDO_JPEG_TRUNCATED : status_for_error_code(cinfo->err->msg_code));
}

/* 1 while the entropy decoder works on the last row of MCUs of a scan (or later). */
static int in_last_mcu_row(j_common_ptr cinfo) {
    if (!cinfo->is_decompressor) return 0;
    j_decompress_ptr dinfo = (j_decompress_ptr)cinfo;
    return dinfo->total_iMCU_rows > 0 && dinfo->input_iMCU_row + 1 >= dinfo->total_iMCU_rows;
}

/*
 * 1 when a warning means that the data stops before the image does: "premature end of JPEG
 * file" (the source ran out of bytes and inserted a fake EOI), or "premature end of data
 * segment" (a marker where entropy-coded data should be) when that marker is an EOI or
 * comes from the source running out. Any other marker inside a scan is corruption in the
 * middle of the file: libjpeg fills the rest of that scan grey and resynchronises on the
 * marker, as djpeg, Pillow and browsers show it.
 */
static int data_ended(j_common_ptr cinfo, int code) {
    alcedo_jpeg_error *error = error_of(cinfo);
    if (code == JWRN_JPEG_EOF) {
        error->source_ended = 1;
        return 1;
    }
    if (code != JWRN_HIT_MARKER) return 0;
    if (error->source_ended) return 1;
    return cinfo->is_decompressor && ((j_decompress_ptr)cinfo)->unread_marker == JPEG_EOI;
}

/*
 * Warnings (level -1) are counted and the first one kept; trace messages are ignored. None
 * is fatal by itself: libjpeg steps over corrupt data (extraneous bytes before a marker, a
 * bad Huffman code, a stray marker inside a scan) as djpeg does. When the data ends before
 * the image does (see data_ended) libjpeg would fill the rest grey. Before the last row of
 * MCUs of a scan that is truncation, and decoding stops at once unless allowed. Within the
 * last row it is tolerated: that is how a file missing only its EOI marker (or a few bytes
 * of padding before it) looks, and at most that one row of MCUs is affected.
 */
static void on_emit_message(j_common_ptr cinfo, int level) {
    alcedo_jpeg_error *error = error_of(cinfo);
    if (level >= 0) return;
    int code = cinfo->err->msg_code;
    int ended = data_ended(cinfo, code);
    if (ended) error->saw_end = 1;
    if (ended && (error->in_header || !in_last_mcu_row(cinfo))) {
        error->ended_early = 1;
        if (error->in_header || !error->allow_truncated) {
            (*cinfo->err->output_message)(cinfo);
            stop(cinfo, ALCEDO_JPEG_TRUNCATED);
        }
    }
    if (cinfo->err->num_warnings == 0) (*cinfo->err->output_message)(cinfo);
    cinfo->err->num_warnings++;
}

static struct jpeg_error_mgr *install_error_manager(alcedo_jpeg_error *error) {
    struct jpeg_error_mgr *manager = jpeg_std_error(&error->pub);
    manager->error_exit = on_error_exit;
    manager->emit_message = on_emit_message;
    manager->output_message = capture_message;
    error->status = ALCEDO_JPEG_OK;
    error->message[0] = '\0';
    return manager;
}

/* ---- Decoding -------------------------------------------------------------------------- */

enum decoder_stage { STAGE_NEW, STAGE_HEADER, STAGE_STARTED, STAGE_DONE, STAGE_FAILED };

struct alcedo_jpeg_decoder {
    struct jpeg_decompress_struct cinfo;
    alcedo_jpeg_error error;
    struct jpeg_progress_mgr progress;
    enum decoder_stage stage;
    int created;      /* jpeg_create_decompress succeeded */
    int incomplete;   /* scans are missing: some component or coefficient never completed */
    unsigned char component_scanned[MAX_COMPONENTS]; /* sequential files: components seen in a scan */
    int cmyk_output;  /* libjpeg writes CMYK that the shim turns into RGBA */
    int64_t cpu_deadline_ns;  /* thread CPU time at which decoding stops; 0: none */
    uint64_t max_memory;      /* libjpeg's working-memory budget; 0: none */
    int last_scan;            /* the scan whose blocks were last counted */
    uint64_t blocks_visited;  /* blocks of every scan so far, component by component */
    uint64_t image_blocks;    /* blocks of all components (the unit of ALCEDO_JPEG_MAX_SCAN_PASSES) */
    int keep_cmyk;    /* the caller converts CMYK itself (colour management): leave it as stored */
    struct stream_source *stream; /* incremental decoding: the suspending source (NULL otherwise) */
    struct file_source *file;     /* reading from a file descriptor (NULL otherwise) */
    /* Incremental decoding: libjpeg's coef_bits as the last scan completed left them (before
       the next scan's header updates them), for that scan's output pass; and its number. */
    int scan_bits[MAX_COMPONENTS][DCTSIZE2];
    int scan_bits_scan;
};

static int64_t thread_cpu_ns(void) {
    struct timespec now;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0) return 0;
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

void alcedo_jpeg_set_limits(alcedo_jpeg_decoder *decoder, int64_t cpu_budget_ns, uint64_t max_memory) {
    if (decoder == NULL) return;
    decoder->cpu_deadline_ns = cpu_budget_ns > 0 ? thread_cpu_ns() + cpu_budget_ns : 0;
    if (decoder->cpu_deadline_ns == 0 && cpu_budget_ns > 0) decoder->cpu_deadline_ns = 1;
    decoder->max_memory = max_memory;
    if (decoder->created && max_memory > 0) {
        decoder->cinfo.mem->max_memory_to_use = max_memory > (uint64_t)LONG_MAX ? LONG_MAX : (long)max_memory;
    }
}

/* Records which components the current scan codes (for sequential multi-scan files). */
static void note_scan_components(alcedo_jpeg_decoder *decoder) {
    j_decompress_ptr cinfo = &decoder->cinfo;
    for (int i = 0; i < cinfo->comps_in_scan && i < MAX_COMPS_IN_SCAN; i++) {
        jpeg_component_info *component = cinfo->cur_comp_info[i];
        if (component != NULL && component->component_index >= 0 && component->component_index < MAX_COMPONENTS) {
            decoder->component_scanned[component->component_index] = 1;
        }
    }
}

/* Blocks of every component together (each rounded up to whole MCUs, as libjpeg stores them). */
static uint64_t blocks_of_all_components(j_decompress_ptr cinfo) {
    uint64_t total = 0;
    for (int i = 0; i < cinfo->num_components; i++) {
        jpeg_component_info *c = &cinfo->comp_info[i];
        uint64_t across = (c->width_in_blocks + c->h_samp_factor - 1) / c->h_samp_factor * c->h_samp_factor;
        uint64_t down = (c->height_in_blocks + c->v_samp_factor - 1) / c->v_samp_factor * c->v_samp_factor;
        total += across * down;
    }
    return total;
}

/* Counts the blocks a new scan visits, and stops a file whose scans together would visit
   more than ALCEDO_JPEG_MAX_SCAN_PASSES times every block: each scan costs time in
   proportion to its blocks, however little data it has. */
static void count_scan_blocks(alcedo_jpeg_decoder *decoder) {
    j_decompress_ptr cinfo = &decoder->cinfo;
    if (cinfo->input_scan_number == decoder->last_scan) return;
    decoder->last_scan = cinfo->input_scan_number;
    for (int i = 0; i < cinfo->comps_in_scan && i < MAX_COMPS_IN_SCAN; i++) {
        jpeg_component_info *c = cinfo->cur_comp_info[i];
        if (c != NULL) decoder->blocks_visited += (uint64_t)c->width_in_blocks * c->height_in_blocks;
    }
    if (decoder->image_blocks > 0
        && decoder->blocks_visited > (uint64_t)ALCEDO_JPEG_MAX_SCAN_PASSES * decoder->image_blocks) {
        snprintf(error_of((j_common_ptr)cinfo)->message, JMSG_LENGTH_MAX,
                 "the scans visit every block more than %d times (%d scans so far: a hostile or broken progressive file)",
                 ALCEDO_JPEG_MAX_SCAN_PASSES, cinfo->input_scan_number);
        stop((j_common_ptr)cinfo, ALCEDO_JPEG_CORRUPT);
    }
}

/* Called by libjpeg between units of work: once per row of MCUs while a multi-scan file is
   read (so at least once per scan) and once per jpeg_read_scanlines call. Notes the scan's
   components, stops files with absurdly many scans or scan passes, and checks the CPU budget. */
static void on_progress(j_common_ptr cinfo) {
    if (!cinfo->is_decompressor) return;
    alcedo_jpeg_decoder *decoder = (alcedo_jpeg_decoder *)cinfo->client_data;
    if (decoder->cinfo.input_scan_number > ALCEDO_JPEG_MAX_SCANS) {
        snprintf(error_of(cinfo)->message, JMSG_LENGTH_MAX,
                 "more than %d scans (a hostile or broken progressive file)", ALCEDO_JPEG_MAX_SCANS);
        stop(cinfo, ALCEDO_JPEG_CORRUPT);
    }
    if (decoder->cpu_deadline_ns != 0 && thread_cpu_ns() > decoder->cpu_deadline_ns) {
        snprintf(error_of(cinfo)->message, JMSG_LENGTH_MAX, "the CPU-time budget ran out (scan %d)",
                 decoder->cinfo.input_scan_number);
        stop(cinfo, ALCEDO_JPEG_TIMED_OUT);
    }
    count_scan_blocks(decoder);
    note_scan_components(decoder);
}

static void free_stream_source(struct stream_source *source);

alcedo_jpeg_decoder *alcedo_jpeg_decoder_create(void) {
    alcedo_jpeg_decoder *volatile decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) return NULL;
    decoder->cinfo.err = install_error_manager(&decoder->error);
    decoder->cinfo.client_data = decoder;
    if (setjmp(decoder->error.jump)) {
        jpeg_destroy_decompress(&decoder->cinfo); /* frees whatever was allocated; safe when nothing was */
        free(decoder);
        return NULL;
    }
    jpeg_create_decompress(&decoder->cinfo);
    decoder->created = 1;
    decoder->progress.progress_monitor = on_progress;
    decoder->cinfo.progress = &decoder->progress;
    return decoder;
}

void alcedo_jpeg_decoder_destroy(alcedo_jpeg_decoder *decoder) {
    if (decoder == NULL) return;
    if (decoder->created) jpeg_destroy_decompress(&decoder->cinfo);
    free_stream_source(decoder->stream);
    free(decoder->file);
    free(decoder);
}

static enum alcedo_jpeg_status misuse(alcedo_jpeg_decoder *decoder, const char *what) {
    snprintf(decoder->error.message, JMSG_LENGTH_MAX, "%s", what);
    return ALCEDO_JPEG_MISUSE;
}

static enum alcedo_jpeg_color color_of(J_COLOR_SPACE space) {
    switch (space) {
    case JCS_GRAYSCALE: return ALCEDO_JPEG_COLOR_GRAY;
    case JCS_RGB: return ALCEDO_JPEG_COLOR_RGB;
    case JCS_YCbCr: return ALCEDO_JPEG_COLOR_YCBCR;
    case JCS_CMYK: return ALCEDO_JPEG_COLOR_CMYK;
    case JCS_YCCK: return ALCEDO_JPEG_COLOR_YCCK;
    default: return ALCEDO_JPEG_COLOR_UNKNOWN;
    }
}

static void find_exif(j_decompress_ptr cinfo, alcedo_jpeg_header *header) {
    for (jpeg_saved_marker_ptr marker = cinfo->marker_list; marker != NULL; marker = marker->next) {
        if (marker->marker == JPEG_APP0 + 1 && marker->data_length >= 6 && marker->data != NULL
            && memcmp(marker->data, "Exif\0\0", 6) == 0) {
            header->exif = marker->data;
            header->exif_length = marker->data_length;
            return;
        }
    }
}

/* Copies what jpeg_read_header learnt into *header and starts the scan accounting. */
static void fill_header(alcedo_jpeg_decoder *decoder, alcedo_jpeg_header *header) {
    j_decompress_ptr cinfo = &decoder->cinfo;
    header->width = (int32_t)cinfo->image_width;
    header->height = (int32_t)cinfo->image_height;
    header->components = cinfo->num_components;
    header->color = color_of(cinfo->jpeg_color_space);
    header->precision = cinfo->data_precision;
    header->progressive = cinfo->progressive_mode ? 1 : 0;
    header->arithmetic = cinfo->arith_code ? 1 : 0;
    find_exif(cinfo, header);
    decoder->image_blocks = blocks_of_all_components(cinfo);
    if (jpeg_has_multiple_scans(cinfo)) header->coefficient_bytes = decoder->image_blocks * DCTSIZE2 * sizeof(JCOEF);
    note_scan_components(decoder);
    count_scan_blocks(decoder);
}

enum alcedo_jpeg_status alcedo_jpeg_read_header(alcedo_jpeg_decoder *decoder, const uint8_t *data,
                                                size_t size, alcedo_jpeg_header *header) {
    if (decoder == NULL || header == NULL) return ALCEDO_JPEG_MISUSE;
    if (decoder->stage != STAGE_NEW) return misuse(decoder, "the header was already read");
    if (data == NULL || size == 0) return misuse(decoder, "no data");
    memset(header, 0, sizeof *header);
    decoder->stage = STAGE_FAILED;
    if (setjmp(decoder->error.jump)) return decoder->error.status;

    j_decompress_ptr cinfo = &decoder->cinfo;
    /* Running out of data inside the header leaves nothing to show: always an error. */
    decoder->error.in_header = 1;
    jpeg_mem_src(cinfo, data, (unsigned long)size);
    jpeg_save_markers(cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_save_markers(cinfo, JPEG_APP0 + 2, 0xFFFF); /* ICC_PROFILE segments */
    if (jpeg_read_header(cinfo, TRUE) != JPEG_HEADER_OK) {
        snprintf(decoder->error.message, JMSG_LENGTH_MAX, "no image in the data");
        return ALCEDO_JPEG_CORRUPT;
    }

    fill_header(decoder, header);
    decoder->error.in_header = 0;
    decoder->stage = STAGE_HEADER;
    return ALCEDO_JPEG_OK;
}

/* A source reading a file descriptor through a buffer of FILE_SOURCE_BUFFER bytes, so that
   the file is never held in memory whole. At the end of the file it does what jpeg_mem_src
   does at the end of its data: a warning and a fake EOI marker (so truncation is detected the
   same way); a read error is ALCEDO_JPEG_CORRUPT with the system's reason. */
#define FILE_SOURCE_BUFFER 65536

struct file_source {
    struct jpeg_source_mgr pub;
    int fd;
    JOCTET buffer[FILE_SOURCE_BUFFER];
};

static void file_init_source(j_decompress_ptr cinfo) { (void)cinfo; }

static boolean file_fill_input_buffer(j_decompress_ptr cinfo) {
    struct file_source *source = (struct file_source *)cinfo->src;
    ssize_t count;
    do {
        count = read(source->fd, source->buffer, FILE_SOURCE_BUFFER);
    } while (count < 0 && errno == EINTR);
    if (count < 0) {
        alcedo_jpeg_error *error = (alcedo_jpeg_error *)cinfo->err;
        snprintf(error->message, JMSG_LENGTH_MAX, "reading the file failed: %s", strerror(errno));
        error->status = ALCEDO_JPEG_CORRUPT;
        longjmp(error->jump, 1);
    }
    if (count == 0) {
        static const JOCTET fake_eoi[2] = { 0xFF, JPEG_EOI };
        WARNMS(cinfo, JWRN_JPEG_EOF);
        source->pub.next_input_byte = fake_eoi;
        source->pub.bytes_in_buffer = 2;
        return TRUE;
    }
    source->pub.next_input_byte = source->buffer;
    source->pub.bytes_in_buffer = (size_t)count;
    return TRUE;
}

static void file_skip_input_data(j_decompress_ptr cinfo, long count) {
    struct jpeg_source_mgr *source = cinfo->src;
    if (count <= 0) return;
    while (count > (long)source->bytes_in_buffer) {
        count -= (long)source->bytes_in_buffer;
        (void)file_fill_input_buffer(cinfo);
    }
    source->next_input_byte += count;
    source->bytes_in_buffer -= (size_t)count;
}

static void file_term_source(j_decompress_ptr cinfo) { (void)cinfo; }

enum alcedo_jpeg_status alcedo_jpeg_read_header_fd(alcedo_jpeg_decoder *decoder, int fd, alcedo_jpeg_header *header) {
    if (decoder == NULL || header == NULL) return ALCEDO_JPEG_MISUSE;
    if (decoder->stage != STAGE_NEW || decoder->stream != NULL || decoder->file != NULL) {
        return misuse(decoder, "the header was already read");
    }
    if (fd < 0) return misuse(decoder, "no file");
    memset(header, 0, sizeof *header);
    struct file_source *source = calloc(1, sizeof *source);
    if (source == NULL) {
        snprintf(decoder->error.message, JMSG_LENGTH_MAX, "out of memory");
        return ALCEDO_JPEG_NO_MEMORY;
    }
    source->fd = fd;
    source->pub.init_source = file_init_source;
    source->pub.fill_input_buffer = file_fill_input_buffer;
    source->pub.skip_input_data = file_skip_input_data;
    source->pub.resync_to_restart = jpeg_resync_to_restart;
    source->pub.term_source = file_term_source;
    decoder->file = source;
    decoder->stage = STAGE_FAILED;
    if (setjmp(decoder->error.jump)) return decoder->error.status;

    j_decompress_ptr cinfo = &decoder->cinfo;
    decoder->error.in_header = 1;
    cinfo->src = &source->pub;
    jpeg_save_markers(cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_save_markers(cinfo, JPEG_APP0 + 2, 0xFFFF); /* ICC_PROFILE segments */
    if (jpeg_read_header(cinfo, TRUE) != JPEG_HEADER_OK) {
        snprintf(decoder->error.message, JMSG_LENGTH_MAX, "no image in the file");
        return ALCEDO_JPEG_CORRUPT;
    }

    fill_header(decoder, header);
    decoder->error.in_header = 0;
    decoder->stage = STAGE_HEADER;
    return ALCEDO_JPEG_OK;
}

/* 1 when the scans read leave the image incomplete: a progressive file whose scans stop
   before every coefficient of every component has all its bits, or a sequential file with
   a component no scan coded. Either way the file ended (with or without an EOI marker)
   before its last scans. */
static int scans_incomplete(alcedo_jpeg_decoder *decoder) {
    j_decompress_ptr cinfo = &decoder->cinfo;
    for (int component = 0; component < cinfo->num_components && component < MAX_COMPONENTS; component++) {
        if (cinfo->progressive_mode) {
            if (cinfo->coef_bits == NULL) return 0;
            for (int coefficient = 0; coefficient < DCTSIZE2; coefficient++) {
                if (cinfo->coef_bits[component][coefficient] != 0) return 1;
            }
        } else if (!decoder->component_scanned[component]) {
            return 1;
        }
    }
    return 0;
}

/* Sets the output colour space (RGBA, or CMYK that the shim converts) and djpeg's defaults
   at 1/scale_denominator; UNSUPPORTED for a colour space with no known transform. */
static enum alcedo_jpeg_status configure_output(alcedo_jpeg_decoder *decoder, int scale_denominator) {
    j_decompress_ptr cinfo = &decoder->cinfo;
    switch (cinfo->jpeg_color_space) {
    case JCS_GRAYSCALE:
    case JCS_RGB:
    case JCS_YCbCr:
        cinfo->out_color_space = JCS_EXT_RGBA;
        break;
    case JCS_CMYK:
    case JCS_YCCK:
        /* libjpeg turns YCCK into CMYK but neither into RGB: the shim does the last step. */
        cinfo->out_color_space = JCS_CMYK;
        decoder->cmyk_output = 1;
        break;
    default:
        snprintf(decoder->error.message, JMSG_LENGTH_MAX,
                 "colour space of %d components with no known transform", cinfo->num_components);
        return ALCEDO_JPEG_UNSUPPORTED;
    }
    /* djpeg's defaults, spelled out so that the output matches it byte for byte. */
    cinfo->dct_method = JDCT_ISLOW;
    cinfo->do_fancy_upsampling = TRUE;
    cinfo->do_block_smoothing = TRUE;
    cinfo->quantize_colors = FALSE;
    cinfo->scale_num = 1;
    cinfo->scale_denom = (unsigned int)scale_denominator;
    return ALCEDO_JPEG_OK;
}

/* MISUSE (with the message) unless the header was read and the denominator is 1, 2, 4 or 8. */
static enum alcedo_jpeg_status check_start(alcedo_jpeg_decoder *decoder, int scale_denominator) {
    if (decoder->stage != STAGE_HEADER) return misuse(decoder, "start called before the header was read");
    if (scale_denominator != 1 && scale_denominator != 2 && scale_denominator != 4 && scale_denominator != 8) {
        return misuse(decoder, "the scale denominator must be 1, 2, 4 or 8");
    }
    return ALCEDO_JPEG_OK;
}

enum alcedo_jpeg_status alcedo_jpeg_start(alcedo_jpeg_decoder *decoder, int scale_denominator,
                                          int allow_truncated, int32_t *out_width, int32_t *out_height) {
    if (decoder == NULL || out_width == NULL || out_height == NULL) return ALCEDO_JPEG_MISUSE;
    enum alcedo_jpeg_status usable = check_start(decoder, scale_denominator);
    if (usable != ALCEDO_JPEG_OK) return usable;
    j_decompress_ptr cinfo = &decoder->cinfo;
    decoder->stage = STAGE_FAILED;
    if (setjmp(decoder->error.jump)) return decoder->error.status;

    enum alcedo_jpeg_status configured = configure_output(decoder, scale_denominator);
    if (configured != ALCEDO_JPEG_OK) return configured;
    decoder->error.allow_truncated = allow_truncated ? 1 : 0;

    jpeg_start_decompress(cinfo);

    if (scans_incomplete(decoder)) {
        decoder->incomplete = 1;
        if (!allow_truncated) {
            snprintf(decoder->error.message, JMSG_LENGTH_MAX, "the scans end before the image is complete");
            return ALCEDO_JPEG_TRUNCATED;
        }
    }
    if (cinfo->output_components != 4) return misuse(decoder, "unexpected number of output components");
    *out_width = (int32_t)cinfo->output_width;
    *out_height = (int32_t)cinfo->output_height;
    decoder->stage = STAGE_STARTED;
    return ALCEDO_JPEG_OK;
}

/* x * y / 255, rounded to nearest (exact for 0...255 x 0...255). */
static inline uint8_t multiply_255(unsigned x, unsigned y) {
    unsigned t = x * y + 128;
    return (uint8_t)((t + (t >> 8)) >> 8);
}

/* Inverted CMYK (Adobe's convention) to RGBA, in place: both take 4 bytes a pixel. */
static void cmyk_row_to_rgba(uint8_t *row, JDIMENSION width) {
    for (JDIMENSION x = 0; x < width; x++, row += 4) {
        unsigned k = row[3];
        row[0] = multiply_255(row[0], k);
        row[1] = multiply_255(row[1], k);
        row[2] = multiply_255(row[2], k);
        row[3] = 255;
    }
}

/* Decodes the next `wanted` output rows into rows + i * stride, 16 at a time, turning CMYK
   into RGBA. Call under the decoder's setjmp: a failure longjmps. */
static void read_rows_into(alcedo_jpeg_decoder *decoder, uint8_t *rows, size_t stride, JDIMENSION wanted) {
    j_decompress_ptr cinfo = &decoder->cinfo;
    enum { ROWS_PER_CALL = 16 };
    JSAMPROW pointers[ROWS_PER_CALL];
    JDIMENSION total = 0;
    while (total < wanted) {
        JDIMENSION count = wanted - total < ROWS_PER_CALL ? wanted - total : ROWS_PER_CALL;
        for (JDIMENSION i = 0; i < count; i++) pointers[i] = rows + (size_t)(total + i) * stride;
        JDIMENSION done = jpeg_read_scanlines(cinfo, pointers, count);
        if (done == 0) {
            /* Cannot happen with an in-memory source, which never suspends; never loop forever. */
            snprintf(decoder->error.message, JMSG_LENGTH_MAX, "the decoder made no progress");
            stop((j_common_ptr)cinfo, ALCEDO_JPEG_CORRUPT);
        }
        if (decoder->cmyk_output && !decoder->keep_cmyk) {
            for (JDIMENSION i = 0; i < done; i++) cmyk_row_to_rgba(pointers[i], cinfo->output_width);
        }
        total += done;
    }
}

enum alcedo_jpeg_status alcedo_jpeg_read_pixels(alcedo_jpeg_decoder *decoder, uint8_t *rgba,
                                                size_t stride, size_t capacity) {
    if (decoder == NULL) return ALCEDO_JPEG_MISUSE;
    if (decoder->stage != STAGE_STARTED) return misuse(decoder, "read_pixels called before start");
    j_decompress_ptr cinfo = &decoder->cinfo;
    JDIMENSION width = cinfo->output_width, height = cinfo->output_height;
    if (rgba == NULL || stride < (size_t)width * 4 || capacity / stride < (size_t)height) {
        return misuse(decoder, "the pixel buffer is too small");
    }
    decoder->stage = STAGE_FAILED;
    if (setjmp(decoder->error.jump)) return decoder->error.status;

    /* Rows are decoded straight into the caller's buffer, a few at a time. */
    read_rows_into(decoder, rgba, stride, height);
    /* jpeg_finish_decompress is not called: every pixel is written, and what may follow the
       last scan (trailing markers or garbage) does not change the picture. */
    decoder->stage = STAGE_DONE;
    return ALCEDO_JPEG_OK;
}

enum alcedo_jpeg_status alcedo_jpeg_read_rows(alcedo_jpeg_decoder *decoder, uint8_t *rows, size_t stride,
                                              int32_t max_rows, int32_t *rows_read) {
    if (decoder == NULL || rows_read == NULL) return ALCEDO_JPEG_MISUSE;
    *rows_read = 0;
    if (decoder->stage != STAGE_STARTED) return misuse(decoder, "read_rows called before start or after the last row");
    j_decompress_ptr cinfo = &decoder->cinfo;
    JDIMENSION width = cinfo->output_width, height = cinfo->output_height;
    if (rows == NULL || max_rows <= 0 || stride < (size_t)width * 4) return misuse(decoder, "the row buffer is too small");
    decoder->stage = STAGE_FAILED;
    if (setjmp(decoder->error.jump)) return decoder->error.status;

    JDIMENSION wanted = height - cinfo->output_scanline;
    if (wanted > (JDIMENSION)max_rows) wanted = (JDIMENSION)max_rows;
    read_rows_into(decoder, rows, stride, wanted);
    *rows_read = (int32_t)wanted;
    decoder->stage = cinfo->output_scanline < height ? STAGE_STARTED : STAGE_DONE;
    return ALCEDO_JPEG_OK;
}

int32_t alcedo_jpeg_output_row(const alcedo_jpeg_decoder *decoder) {
    return decoder == NULL ? 0 : (int32_t)decoder->cinfo.output_scanline;
}

const char *alcedo_jpeg_message(const alcedo_jpeg_decoder *decoder) {
    return decoder == NULL ? "" : decoder->error.message;
}

long alcedo_jpeg_warning_count(const alcedo_jpeg_decoder *decoder) {
    return decoder == NULL ? 0 : decoder->error.pub.num_warnings;
}

int alcedo_jpeg_was_truncated(const alcedo_jpeg_decoder *decoder) {
    return decoder != NULL && (decoder->error.ended_early || decoder->incomplete);
}

/* ---- Incremental decoding (progressive previews) ---------------------------------------- */

/* A source manager fed by alcedo_jpeg_stream_append. When its bytes run out it suspends
   (fill_input_buffer returns FALSE) and libjpeg resumes from the same place once more bytes
   are appended. It holds only the bytes libjpeg has not consumed yet (a marker segment or a
   few MCUs cut by the end of a chunk) plus the newest chunk, never the whole file. */
struct stream_source {
    struct jpeg_source_mgr pub;
    uint8_t *buffer;
    size_t capacity;
    size_t skip_pending; /* bytes skip_input_data still has to drop from later chunks */
};

/* Most bytes the source may hold unconsumed besides a new chunk: a marker segment is at most
   64 KiB and one MCU of entropy-coded data far less, so more means libjpeg makes no progress. */
#define STREAM_MAX_UNCONSUMED (4u << 20)

static void stream_init_source(j_decompress_ptr cinfo) { (void)cinfo; }
static void stream_term_source(j_decompress_ptr cinfo) { (void)cinfo; }

static boolean stream_fill_input_buffer(j_decompress_ptr cinfo) {
    (void)cinfo;
    return FALSE; /* suspend: the caller appends more bytes and calls again */
}

static void stream_skip_input_data(j_decompress_ptr cinfo, long count) {
    struct stream_source *source = (struct stream_source *)cinfo->src;
    if (count <= 0) return;
    if ((size_t)count <= source->pub.bytes_in_buffer) {
        source->pub.next_input_byte += count;
        source->pub.bytes_in_buffer -= (size_t)count;
        return;
    }
    source->skip_pending += (size_t)count - source->pub.bytes_in_buffer;
    source->pub.next_input_byte += source->pub.bytes_in_buffer;
    source->pub.bytes_in_buffer = 0;
}

static void free_stream_source(struct stream_source *source) {
    if (source == NULL) return;
    free(source->buffer);
    free(source);
}

alcedo_jpeg_decoder *alcedo_jpeg_stream_create(void) {
    alcedo_jpeg_decoder *decoder = alcedo_jpeg_decoder_create();
    if (decoder == NULL) return NULL;
    struct stream_source *source = calloc(1, sizeof *source);
    if (source == NULL) {
        alcedo_jpeg_decoder_destroy(decoder);
        return NULL;
    }
    source->pub.init_source = stream_init_source;
    source->pub.fill_input_buffer = stream_fill_input_buffer;
    source->pub.skip_input_data = stream_skip_input_data;
    source->pub.resync_to_restart = jpeg_resync_to_restart;
    source->pub.term_source = stream_term_source;
    decoder->stream = source;
    decoder->cinfo.src = &source->pub;
    /* As alcedo_jpeg_read_header does: EXIF and ICC segments are kept. No libjpeg call here
       can fail but for memory, which jumps. */
    if (setjmp(decoder->error.jump)) {
        alcedo_jpeg_decoder_destroy(decoder);
        return NULL;
    }
    jpeg_save_markers(&decoder->cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_save_markers(&decoder->cinfo, JPEG_APP0 + 2, 0xFFFF);
    return decoder;
}

enum alcedo_jpeg_status alcedo_jpeg_stream_append(alcedo_jpeg_decoder *decoder, const uint8_t *data, size_t size) {
    if (decoder == NULL || decoder->stream == NULL) return ALCEDO_JPEG_MISUSE;
    struct stream_source *source = decoder->stream;
    if (data == NULL || size == 0) return ALCEDO_JPEG_OK;
    if (source->skip_pending > 0) {
        size_t skipped = source->skip_pending < size ? source->skip_pending : size;
        source->skip_pending -= skipped;
        data += skipped;
        size -= skipped;
        if (size == 0) return ALCEDO_JPEG_OK;
    }
    size_t kept = source->pub.bytes_in_buffer;
    if (kept > STREAM_MAX_UNCONSUMED) {
        snprintf(decoder->error.message, JMSG_LENGTH_MAX, "the decoder made no progress over %zu bytes", kept);
        return ALCEDO_JPEG_CORRUPT;
    }
    if (kept + size > source->capacity) {
        size_t wanted = kept + size;
        uint8_t *grown = malloc(wanted);
        if (grown == NULL) return ALCEDO_JPEG_NO_MEMORY;
        if (kept > 0) memcpy(grown, source->pub.next_input_byte, kept);
        free(source->buffer);
        source->buffer = grown;
        source->capacity = wanted;
    } else if (kept > 0 && source->pub.next_input_byte != source->buffer) {
        memmove(source->buffer, source->pub.next_input_byte, kept);
    }
    memcpy(source->buffer + kept, data, size);
    source->pub.next_input_byte = source->buffer;
    source->pub.bytes_in_buffer = kept + size;
    return ALCEDO_JPEG_OK;
}

enum alcedo_jpeg_status alcedo_jpeg_stream_read_header(alcedo_jpeg_decoder *decoder, alcedo_jpeg_header *header,
                                                       int *suspended) {
    if (decoder == NULL || decoder->stream == NULL || header == NULL || suspended == NULL) return ALCEDO_JPEG_MISUSE;
    if (decoder->stage != STAGE_NEW) return misuse(decoder, "the header was already read");
    *suspended = 0;
    if (setjmp(decoder->error.jump)) {
        decoder->stage = STAGE_FAILED;
        return decoder->error.status;
    }
    j_decompress_ptr cinfo = &decoder->cinfo;
    int read = jpeg_read_header(cinfo, TRUE);
    if (read == JPEG_SUSPENDED) {
        *suspended = 1;
        return ALCEDO_JPEG_OK;
    }
    if (read != JPEG_HEADER_OK) {
        decoder->stage = STAGE_FAILED;
        snprintf(decoder->error.message, JMSG_LENGTH_MAX, "no image in the data");
        return ALCEDO_JPEG_CORRUPT;
    }
    memset(header, 0, sizeof *header);
    fill_header(decoder, header);
    decoder->stage = STAGE_HEADER;
    return ALCEDO_JPEG_OK;
}

enum alcedo_jpeg_status alcedo_jpeg_stream_start(alcedo_jpeg_decoder *decoder, int scale_denominator,
                                                 int32_t *out_width, int32_t *out_height) {
    if (decoder == NULL || decoder->stream == NULL || out_width == NULL || out_height == NULL) return ALCEDO_JPEG_MISUSE;
    enum alcedo_jpeg_status usable = check_start(decoder, scale_denominator);
    if (usable != ALCEDO_JPEG_OK) return usable;
    j_decompress_ptr cinfo = &decoder->cinfo;
    decoder->stage = STAGE_FAILED;
    if (setjmp(decoder->error.jump)) return decoder->error.status;
    enum alcedo_jpeg_status configured = configure_output(decoder, scale_denominator);
    if (configured != ALCEDO_JPEG_OK) return configured;
    cinfo->buffered_image = TRUE;
    /* In buffered-image mode this only sets up (and allocates the coefficient buffer): it
       reads no data, so it cannot suspend. */
    jpeg_start_decompress(cinfo);
    if (cinfo->output_components != 4) return misuse(decoder, "unexpected number of output components");
    *out_width = (int32_t)cinfo->output_width;
    *out_height = (int32_t)cinfo->output_height;
    decoder->stage = STAGE_STARTED;
    return ALCEDO_JPEG_OK;
}

enum alcedo_jpeg_status alcedo_jpeg_stream_advance(alcedo_jpeg_decoder *decoder, int32_t *completed_scan) {
    if (decoder == NULL || decoder->stream == NULL || completed_scan == NULL) return ALCEDO_JPEG_MISUSE;
    *completed_scan = 0;
    if (decoder->stage == STAGE_DONE) {
        *completed_scan = -1;
        return ALCEDO_JPEG_OK;
    }
    if (decoder->stage != STAGE_STARTED) return misuse(decoder, "advance called before start");
    j_decompress_ptr cinfo = &decoder->cinfo;
    decoder->stage = STAGE_FAILED;
    if (setjmp(decoder->error.jump)) return decoder->error.status;
    for (;;) {
        /* Nothing to read: libjpeg would only suspend (and touch its state doing so). */
        if (decoder->stream->pub.bytes_in_buffer == 0) {
            decoder->stage = STAGE_STARTED;
            return ALCEDO_JPEG_OK;
        }
        /* The checks libjpeg's progress monitor makes while it preloads a multi-scan file:
           scan count, scan passes, CPU time. In buffered-image mode libjpeg does not call it. */
        on_progress((j_common_ptr)cinfo);
        int result = jpeg_consume_input(cinfo);
        if (result == JPEG_SUSPENDED) {
            decoder->stage = STAGE_STARTED;
            return ALCEDO_JPEG_OK;
        }
        if (result == JPEG_REACHED_EOI) {
            decoder->stage = STAGE_DONE;
            *completed_scan = -1;
            return ALCEDO_JPEG_OK;
        }
        if (result == JPEG_SCAN_COMPLETED && cinfo->coef_bits != NULL) {
            int components = cinfo->num_components < MAX_COMPONENTS ? cinfo->num_components : MAX_COMPONENTS;
            memcpy(decoder->scan_bits, cinfo->coef_bits, (size_t)components * sizeof decoder->scan_bits[0]);
            decoder->scan_bits_scan = cinfo->input_scan_number;
        }
        if (result == JPEG_REACHED_SOS && cinfo->input_scan_number > 1) {
            on_progress((j_common_ptr)cinfo);
            decoder->stage = STAGE_STARTED;
            *completed_scan = cinfo->input_scan_number - 1;
            return ALCEDO_JPEG_OK;
        }
    }
}

enum alcedo_jpeg_status alcedo_jpeg_stream_render(alcedo_jpeg_decoder *decoder, uint8_t *rgba, size_t stride,
                                                  size_t capacity) {
    if (decoder == NULL || decoder->stream == NULL) return ALCEDO_JPEG_MISUSE;
    if (decoder->stage != STAGE_STARTED) return misuse(decoder, "render called before start or after the end");
    j_decompress_ptr cinfo = &decoder->cinfo;
    JDIMENSION width = cinfo->output_width, height = cinfo->output_height;
    if (rgba == NULL || stride < (size_t)width * 4 || capacity / stride < (size_t)height) {
        return misuse(decoder, "the pixel buffer is too small");
    }
    if (cinfo->input_scan_number < 2) return misuse(decoder, "no scan is complete yet");
    decoder->stage = STAGE_FAILED;
    if (setjmp(decoder->error.jump)) return decoder->error.status;
    /* The newest complete scan: input is at the start of the next one (or inside it), so the
       output pass needs no more input and cannot suspend. */
    int scan = cinfo->input_scan_number - 1;
    /* The next scan's header has already marked its coefficients as coming: block smoothing
       (which estimates the coefficients still missing) must see the state the finished scan
       left, as a decode of the bytes up to here would. It is latched when the pass starts. */
    int components = cinfo->num_components < MAX_COMPONENTS ? cinfo->num_components : MAX_COMPONENTS;
    int current[MAX_COMPONENTS][DCTSIZE2];
    int swapped = cinfo->coef_bits != NULL && decoder->scan_bits_scan == scan;
    if (swapped) {
        memcpy(current, cinfo->coef_bits, (size_t)components * sizeof current[0]);
        memcpy(cinfo->coef_bits, decoder->scan_bits, (size_t)components * sizeof current[0]);
    }
    jpeg_start_output(cinfo, scan);
    if (swapped) memcpy(cinfo->coef_bits, current, (size_t)components * sizeof current[0]);
    read_rows_into(decoder, rgba, stride, height);
    if (!jpeg_finish_output(cinfo)) {
        snprintf(decoder->error.message, JMSG_LENGTH_MAX, "the output pass wanted more data");
        return ALCEDO_JPEG_CORRUPT;
    }
    decoder->stage = STAGE_STARTED;
    return ALCEDO_JPEG_OK;
}

/* ---- Colour ---------------------------------------------------------------------------- */

int alcedo_jpeg_icc_profile(alcedo_jpeg_decoder *decoder, uint8_t **profile, size_t *length) {
    if (profile != NULL) *profile = NULL;
    if (length != NULL) *length = 0;
    if (decoder == NULL || profile == NULL || length == NULL || decoder->stage != STAGE_HEADER) return 0;
    /* jpeg_read_icc_profile only warns about bad segments; errors (out of memory) jump here. */
    if (setjmp(decoder->error.jump)) {
        decoder->stage = STAGE_HEADER;
        return 0;
    }
    JOCTET *data = NULL;
    unsigned int size = 0;
    if (!jpeg_read_icc_profile(&decoder->cinfo, &data, &size) || data == NULL) return 0;
    *profile = data;
    *length = size;
    return 1;
}

int alcedo_jpeg_adobe_transform(const alcedo_jpeg_decoder *decoder) {
    if (decoder == NULL || decoder->stage == STAGE_NEW || !decoder->cinfo.saw_Adobe_marker) return -1;
    return decoder->cinfo.Adobe_transform;
}

void alcedo_jpeg_keep_cmyk(alcedo_jpeg_decoder *decoder, int keep) {
    if (decoder != NULL) decoder->keep_cmyk = keep ? 1 : 0;
}

/* ---- Encoding -------------------------------------------------------------------------- */

/* Heap-allocated so that nothing the jump skips over lives in the setjmp caller's locals. */
typedef struct encoder_context {
    struct jpeg_compress_struct cinfo;
    alcedo_jpeg_error error;
    int created;
    unsigned char *buffer; /* jpeg_mem_dest's output, grown by libjpeg with malloc */
    unsigned long size;
} encoder_context;

/* 1 when some pixel of the row is not fully opaque. */
static int row_has_alpha(const uint8_t *row, int32_t width) {
    for (int32_t x = 0; x < width; x++) {
        if (row[(size_t)x * 4 + 3] != 255) return 1;
    }
    return 0;
}

/* Composites a row of straight-alpha RGBA onto white: c' = c * a / 255 + 255 - a, rounded. */
static void composite_row_on_white(const uint8_t *source, uint8_t *target, int32_t width) {
    for (int32_t x = 0; x < width; x++, source += 4, target += 4) {
        unsigned alpha = source[3];
        unsigned background = 255 - alpha;
        target[0] = (uint8_t)(multiply_255(source[0], alpha) + background);
        target[1] = (uint8_t)(multiply_255(source[1], alpha) + background);
        target[2] = (uint8_t)(multiply_255(source[2], alpha) + background);
        target[3] = 255;
    }
}

static void compress(encoder_context *context, const uint8_t *rgba, int32_t width, int32_t height,
                     size_t stride, int quality, int progressive) {
    j_compress_ptr cinfo = &context->cinfo;
    jpeg_create_compress(cinfo);
    context->created = 1;
    jpeg_mem_dest(cinfo, &context->buffer, &context->size);

    cinfo->image_width = (JDIMENSION)width;
    cinfo->image_height = (JDIMENSION)height;
    cinfo->input_components = 4;
    cinfo->in_color_space = JCS_EXT_RGBA; /* libjpeg-turbo ignores the fourth byte */
    jpeg_set_defaults(cinfo);
    jpeg_set_quality(cinfo, quality, TRUE);
    cinfo->dct_method = JDCT_ISLOW;
    int factor = quality >= 90 ? 1 : 2; /* luma sampling factor: 4:4:4 or 4:2:0 */
    /* Optimised Huffman tables need a second pass over every coefficient of the image, which
       libjpeg keeps whole: 2 bytes a sample. Above ALCEDO_JPEG_OPTIMIZE_LIMIT the standard
       tables are used instead (a few percent larger, no whole-image buffer). */
    double coefficient_bytes = (double)width * (double)height * (factor == 1 ? 3.0 : 1.5) * 2.0;
    cinfo->optimize_coding = coefficient_bytes <= (double)ALCEDO_JPEG_OPTIMIZE_LIMIT ? TRUE : FALSE;
    cinfo->comp_info[0].h_samp_factor = factor;
    cinfo->comp_info[0].v_samp_factor = factor;
    if (progressive) jpeg_simple_progression(cinfo);

    JSAMPROW composited = (*cinfo->mem->alloc_sarray)((j_common_ptr)cinfo, JPOOL_IMAGE,
                                                      (JDIMENSION)width * 4, 1)[0];
    jpeg_start_compress(cinfo, TRUE);
    while (cinfo->next_scanline < cinfo->image_height) {
        const uint8_t *source = rgba + (size_t)cinfo->next_scanline * stride;
        JSAMPROW row;
        if (row_has_alpha(source, width)) {
            composite_row_on_white(source, composited, width);
            row = composited;
        } else {
            row = (JSAMPROW)(uintptr_t)source; /* libjpeg only reads input rows */
        }
        jpeg_write_scanlines(cinfo, &row, 1);
    }
    jpeg_finish_compress(cinfo);
}

enum alcedo_jpeg_status alcedo_jpeg_encode(const uint8_t *rgba, int32_t width, int32_t height, size_t stride,
                                           int quality, int progressive, uint8_t **output, size_t *output_size,
                                           char *message, size_t message_capacity) {
    if (output == NULL || output_size == NULL) return ALCEDO_JPEG_MISUSE;
    *output = NULL;
    *output_size = 0;
    if (message != NULL && message_capacity > 0) message[0] = '\0';
    if (rgba == NULL || width <= 0 || height <= 0 || width > JPEG_MAX_DIMENSION || height > JPEG_MAX_DIMENSION
        || stride < (size_t)width * 4 || quality < 1 || quality > 100) {
        if (message != NULL && message_capacity > 0) snprintf(message, message_capacity, "invalid arguments");
        return ALCEDO_JPEG_MISUSE;
    }
    encoder_context *context = calloc(1, sizeof *context);
    if (context == NULL) return ALCEDO_JPEG_NO_MEMORY;
    context->cinfo.err = install_error_manager(&context->error);

    enum alcedo_jpeg_status status;
    if (setjmp(context->error.jump)) {
        status = context->error.status;
    } else {
        compress(context, rgba, width, height, stride, quality, progressive);
        status = ALCEDO_JPEG_OK;
        *output = context->buffer;
        *output_size = (size_t)context->size;
        context->buffer = NULL;
    }
    if (status != ALCEDO_JPEG_OK && message != NULL && message_capacity > 0) {
        snprintf(message, message_capacity, "%s", context->error.message);
    }
    if (context->created) jpeg_destroy_compress(&context->cinfo);
    free(context->buffer);
    free(context);
    return status;
}

int32_t alcedo_jpeg_library_version(void) {
#ifdef LIBJPEG_TURBO_VERSION_NUMBER
    return LIBJPEG_TURBO_VERSION_NUMBER;
#else
    return 0;
#endif
}

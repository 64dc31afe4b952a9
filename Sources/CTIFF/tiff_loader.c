#include "CTIFF.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static alcedo_tiff_api table;
static struct {
#define ALCEDO_TIFF_VARIADIC_FIELD(name) __typeof__(name) *name;
    ALCEDO_TIFF_VARIADIC_FUNCTIONS(ALCEDO_TIFF_VARIADIC_FIELD)
#undef ALCEDO_TIFF_VARIADIC_FIELD
} variadic;
static const alcedo_tiff_api *loaded;
static char failure[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    /* libtiff keeps its ABI within soname 6; the unversioned name (the -dev link) is the fallback. */
    static const char *const names[] = { "libtiff.so.6", "libtiff.so" };
    void *library = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && library == NULL; i++) {
        library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(failure, sizeof failure, "libtiff.so.6 could not be loaded: %s", reason ? reason : "not found");
        return;
    }
    /* TIFFOpenOptionsSetErrorHandlerExtR and TIFFClientOpenExt appeared in 4.5: a missing one
       means an older libtiff, which could only report errors through process-wide handlers. */
#define ALCEDO_TIFF_RESOLVE(name) \
    *(void **)(&table.name) = dlsym(library, #name); \
    if (table.name == NULL) { \
        snprintf(failure, sizeof failure, "libtiff lacks %s (Alcedo needs libtiff 4.5 or later)", #name); \
        return; \
    }
    ALCEDO_TIFF_FUNCTIONS(ALCEDO_TIFF_RESOLVE)
#undef ALCEDO_TIFF_RESOLVE
#define ALCEDO_TIFF_RESOLVE_VARIADIC(name) \
    *(void **)(&variadic.name) = dlsym(library, #name); \
    if (variadic.name == NULL) { \
        snprintf(failure, sizeof failure, "libtiff lacks %s", #name); \
        return; \
    }
    ALCEDO_TIFF_VARIADIC_FUNCTIONS(ALCEDO_TIFF_RESOLVE_VARIADIC)
#undef ALCEDO_TIFF_RESOLVE_VARIADIC
    loaded = &table;
}

const alcedo_tiff_api *alcedo_tiff_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *alcedo_tiff_load_error(void) {
    pthread_once(&once, load);
    return loaded ? NULL : failure;
}

/* MARK: messages */

static int record(char *slot, size_t capacity, int *counter, const char *module, const char *format, va_list arguments) {
    if (*counter == 0) {
        int used = 0;
        if (module != NULL && module[0] != '\0') used = snprintf(slot, capacity, "%s: ", module);
        if (used < 0 || (size_t)used >= capacity) used = 0;
        vsnprintf(slot + used, capacity - (size_t)used, format, arguments);
    }
    *counter += 1;
    return 1; /* handled: libtiff does not call the process-wide handlers (stderr) */
}

static int on_error(TIFF *tiff, void *user, const char *module, const char *format, va_list arguments) {
    (void)tiff;
    alcedo_tiff_messages *messages = user;
    return record(messages->error, sizeof messages->error, &messages->errors, module, format, arguments);
}

static int on_warning(TIFF *tiff, void *user, const char *module, const char *format, va_list arguments) {
    (void)tiff;
    alcedo_tiff_messages *messages = user;
    return record(messages->warning, sizeof messages->warning, &messages->warnings, module, format, arguments);
}

/* MARK: client I/O over memory */

static tmsize_t memory_read(thandle_t handle, void *buffer, tmsize_t count) {
    alcedo_tiff_file *file = handle;
    if (count <= 0 || file->position >= file->size) return 0;
    uint64_t available = file->size - file->position;
    uint64_t n = (uint64_t)count < available ? (uint64_t)count : available;
    if (file->descriptor >= 0) {
        uint64_t done = 0;
        while (done < n) {
            ssize_t got = pread(file->descriptor, (uint8_t *)buffer + done, (size_t)(n - done), (off_t)(file->position + done));
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) break;
            done += (uint64_t)got;
        }
        file->position += done;
        return (tmsize_t)done;
    }
    const uint8_t *source = file->writing ? file->output : file->data;
    memcpy(buffer, source + file->position, (size_t)n);
    file->position += n;
    return (tmsize_t)n;
}

static tmsize_t memory_write(thandle_t handle, void *buffer, tmsize_t count) {
    alcedo_tiff_file *file = handle;
    if (!file->writing || count < 0) return -1;
    uint64_t end = file->position + (uint64_t)count;
    if (end < file->position) { file->write_failed = 1; return -1; }
    if (end > file->capacity) {
        uint64_t capacity = file->capacity < 65536 ? 65536 : file->capacity;
        while (capacity < end) capacity *= 2;
        uint8_t *grown = realloc(file->output, (size_t)capacity);
        if (grown == NULL) { file->write_failed = 1; return -1; }
        file->output = grown;
        file->capacity = capacity;
    }
    if (file->position > file->size) memset(file->output + file->size, 0, (size_t)(file->position - file->size));
    memcpy(file->output + file->position, buffer, (size_t)count);
    file->position = end;
    if (end > file->size) file->size = end;
    return count;
}

static toff_t memory_seek(thandle_t handle, toff_t offset, int whence) {
    alcedo_tiff_file *file = handle;
    uint64_t base;
    switch (whence) {
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = file->position; break;
    case SEEK_END: base = file->size; break;
    default: return (toff_t)-1;
    }
    uint64_t position = base + offset;
    if (position < base) return (toff_t)-1;
    file->position = position;
    return position;
}

static int memory_close(thandle_t handle) {
    (void)handle;
    return 0;
}

static toff_t memory_size(thandle_t handle) {
    alcedo_tiff_file *file = handle;
    return file->size;
}

static int memory_map(thandle_t handle, void **base, toff_t *size) {
    alcedo_tiff_file *file = handle;
    if (file->writing || file->descriptor >= 0) return 0;
    /* libtiff only reads through a mapping opened read-only. */
    *base = (void *)file->data;
    *size = file->size;
    return 1;
}

static void memory_unmap(thandle_t handle, void *base, toff_t size) {
    (void)handle;
    (void)base;
    (void)size;
}

static int open_with(alcedo_tiff_file *file, const char *mode, int64_t max_single_allocation) {
    const alcedo_tiff_api *api = alcedo_tiff_load();
    if (api == NULL) {
        snprintf(file->messages.error, sizeof file->messages.error, "%s", alcedo_tiff_load_error());
        file->messages.errors = 1;
        return -1;
    }
    TIFFOpenOptions *options = api->TIFFOpenOptionsAlloc();
    if (options == NULL) {
        snprintf(file->messages.error, sizeof file->messages.error, "libtiff could not allocate its options");
        file->messages.errors = 1;
        return -1;
    }
    if (max_single_allocation > 0) api->TIFFOpenOptionsSetMaxSingleMemAlloc(options, (tmsize_t)max_single_allocation);
    api->TIFFOpenOptionsSetErrorHandlerExtR(options, on_error, &file->messages);
    api->TIFFOpenOptionsSetWarningHandlerExtR(options, on_warning, &file->messages);
    file->tiff = api->TIFFClientOpenExt("memory", mode, (thandle_t)file, memory_read, memory_write, memory_seek,
                                        memory_close, memory_size, memory_map, memory_unmap, options);
    api->TIFFOpenOptionsFree(options);
    if (file->tiff == NULL) {
        if (file->messages.errors == 0) {
            snprintf(file->messages.error, sizeof file->messages.error, "libtiff could not open the data");
            file->messages.errors = 1;
        }
        return -1;
    }
    return 0;
}

int alcedo_tiff_open_memory(alcedo_tiff_file *file, const void *data, uint64_t size, int64_t max_single_allocation) {
    memset(file, 0, sizeof *file);
    file->descriptor = -1;
    file->data = data;
    file->size = size;
    /* "r": read; "m" is not given, so the mapping above is used (no copy of the data). */
    return open_with(file, "r", max_single_allocation);
}

int alcedo_tiff_open_descriptor(alcedo_tiff_file *file, int descriptor, uint64_t size, int64_t max_single_allocation) {
    memset(file, 0, sizeof *file);
    file->descriptor = descriptor;
    file->size = size;
    /* "r": read; no mapping is offered, so each strip or tile is read into libtiff's buffer. */
    return open_with(file, "r", max_single_allocation);
}

int alcedo_tiff_open_writer(alcedo_tiff_file *file, const char *mode) {
    memset(file, 0, sizeof *file);
    file->descriptor = -1;
    file->writing = 1;
    return open_with(file, mode, 0);
}

int alcedo_tiff_close(alcedo_tiff_file *file, uint8_t **bytes, uint64_t *count) {
    const alcedo_tiff_api *api = alcedo_tiff_load();
    if (file->tiff != NULL && api != NULL) api->TIFFClose(file->tiff);
    file->tiff = NULL;
    if (bytes != NULL) *bytes = NULL;
    if (count != NULL) *count = 0;
    if (!file->writing) return 0;
    if (file->write_failed || file->messages.errors > 0) {
        free(file->output);
        file->output = NULL;
        return -1;
    }
    if (bytes != NULL) *bytes = file->output; else free(file->output);
    if (count != NULL) *count = file->size;
    file->output = NULL;
    return 0;
}

/* MARK: fields */

int alcedo_tiff_get_u16(TIFF *tiff, uint32_t tag, uint16_t *value) {
    return variadic.TIFFGetField(tiff, tag, value);
}

int alcedo_tiff_get_u16_defaulted(TIFF *tiff, uint32_t tag, uint16_t *value) {
    return variadic.TIFFGetFieldDefaulted(tiff, tag, value);
}

int alcedo_tiff_get_u32(TIFF *tiff, uint32_t tag, uint32_t *value) {
    return variadic.TIFFGetField(tiff, tag, value);
}

int alcedo_tiff_get_icc(TIFF *tiff, uint32_t *count, const void **bytes) {
    void *data = NULL;
    uint32_t n = 0;
    if (!variadic.TIFFGetField(tiff, TIFFTAG_ICCPROFILE, &n, &data) || data == NULL) return 0;
    *count = n;
    *bytes = data;
    return 1;
}

int alcedo_tiff_get_extra_samples(TIFF *tiff, uint16_t *count, const uint16_t **values) {
    uint16_t n = 0;
    uint16_t *v = NULL;
    if (!variadic.TIFFGetField(tiff, TIFFTAG_EXTRASAMPLES, &n, &v)) return 0;
    *count = n;
    *values = v;
    return 1;
}

int alcedo_tiff_get_colormap(TIFF *tiff, const uint16_t **red, const uint16_t **green, const uint16_t **blue) {
    uint16_t *r = NULL, *g = NULL, *b = NULL;
    if (!variadic.TIFFGetField(tiff, TIFFTAG_COLORMAP, &r, &g, &b) || r == NULL || g == NULL || b == NULL) return 0;
    *red = r;
    *green = g;
    *blue = b;
    return 1;
}

uint16_t alcedo_tiff_ink_set(TIFF *tiff) {
    uint16_t value = INKSET_CMYK;
    if (!variadic.TIFFGetField(tiff, TIFFTAG_INKSET, &value)) return INKSET_CMYK;
    return value;
}

int alcedo_tiff_get_white_point(TIFF *tiff, float *x, float *y) {
    float *values = NULL;
    if (!variadic.TIFFGetField(tiff, TIFFTAG_WHITEPOINT, &values) || values == NULL) return 0;
    *x = values[0];
    *y = values[1];
    return 1;
}

int alcedo_tiff_set_u16(TIFF *tiff, uint32_t tag, uint16_t value) {
    return variadic.TIFFSetField(tiff, tag, (int)value);
}

int alcedo_tiff_set_u32(TIFF *tiff, uint32_t tag, uint32_t value) {
    return variadic.TIFFSetField(tiff, tag, value);
}

int alcedo_tiff_set_icc(TIFF *tiff, uint32_t count, const void *bytes) {
    return variadic.TIFFSetField(tiff, TIFFTAG_ICCPROFILE, count, bytes);
}

int alcedo_tiff_set_extra_samples(TIFF *tiff, uint16_t count, const uint16_t *values) {
    return variadic.TIFFSetField(tiff, TIFFTAG_EXTRASAMPLES, (int)count, values);
}

/* libtiff types RichTIFFIPTC as LONG: its count is in 32-bit words. */
static uint32_t tag_unit(TIFF *tiff, uint32_t tag) {
    const TIFFField *field = table.TIFFFindField(tiff, tag, TIFF_ANY);
    return field != NULL && table.TIFFFieldDataType(field) == TIFF_LONG ? 4 : 1;
}

int alcedo_tiff_get_bytes(TIFF *tiff, uint32_t tag, uint32_t *count, const void **bytes) {
    void *data = NULL;
    uint32_t n = 0;
    if (!variadic.TIFFGetField(tiff, tag, &n, &data) || data == NULL || n == 0) return 0;
    uint32_t unit = tag_unit(tiff, tag);
    if (n > UINT32_MAX / unit) return 0;
    *count = n * unit;
    *bytes = data;
    return 1;
}

int alcedo_tiff_set_bytes(TIFF *tiff, uint32_t tag, uint32_t count, const void *bytes) {
    return variadic.TIFFSetField(tiff, tag, count / tag_unit(tiff, tag), bytes);
}

int alcedo_tiff_set_string(TIFF *tiff, uint32_t tag, const char *value) {
    return variadic.TIFFSetField(tiff, tag, value);
}

/* MARK: RGBA fallback */

int alcedo_tiff_read_rgba(TIFF *tiff, uint32_t *raster, uint32_t width, uint32_t height, char message[1024]) {
    TIFFRGBAImage image;
    message[0] = '\0';
    if (!table.TIFFRGBAImageOK(tiff, message)) return 0;
    if (!table.TIFFRGBAImageBegin(&image, tiff, 0, message)) return 0;
    /* Rows as stored: Alcedo applies the Orientation tag itself, transpositions included. */
    image.req_orientation = ORIENTATION_TOPLEFT;
    image.orientation = ORIENTATION_TOPLEFT;
    int ok = table.TIFFRGBAImageGet(&image, raster, width, height);
    table.TIFFRGBAImageEnd(&image);
    return ok;
}

#include "CHEIF.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static alcedo_heif_api table;
static const alcedo_heif_api *loaded;
static char failure[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    /* libheif keeps its ABI within soname 1; the unversioned name (the -dev link) is the fallback. */
    static const char *const names[] = { "libheif.so.1", "libheif.so" };
    void *library = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && library == NULL; i++) {
        library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(failure, sizeof failure, "libheif.so.1 could not be loaded: %s", reason ? reason : "not found");
        return;
    }
#define ALCEDO_HEIF_RESOLVE(name) \
    *(void **)(&table.name) = dlsym(library, #name); \
    if (table.name == NULL) { \
        snprintf(failure, sizeof failure, "libheif lacks %s", #name); \
        return; \
    }
    ALCEDO_HEIF_FUNCTIONS(ALCEDO_HEIF_RESOLVE)
#undef ALCEDO_HEIF_RESOLVE
    uint32_t version = table.heif_get_version_number();
    /* Same major version, and at least the minor version of the header built against. */
    if ((version >> 24) != (LIBHEIF_NUMERIC_VERSION >> 24) ||
        ((version >> 16) & 0xff) < ((LIBHEIF_NUMERIC_VERSION >> 16) & 0xff)) {
        snprintf(failure, sizeof failure, "libheif %u.%u is loaded, Alcedo needs %u.%u or a later 1.x",
                 version >> 24, (version >> 16) & 0xff,
                 (unsigned)(LIBHEIF_NUMERIC_VERSION >> 24), (unsigned)((LIBHEIF_NUMERIC_VERSION >> 16) & 0xff));
        return;
    }
    loaded = &table;
}

const alcedo_heif_api *alcedo_heif_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *alcedo_heif_load_error(void) {
    pthread_once(&once, load);
    return loaded ? NULL : failure;
}

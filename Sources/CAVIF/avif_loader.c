#include "CAVIF.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static alcedo_avif_api table;
static const alcedo_avif_api *loaded;
static char failure[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* libavif's soname changes with its ABI: the one matching the header built against. */
#if AVIF_VERSION_MAJOR == 0 && AVIF_VERSION_MINOR == 9
#define ALCEDO_AVIF_SONAME "libavif.so.13"
#elif AVIF_VERSION_MAJOR == 0 && AVIF_VERSION_MINOR == 10
#define ALCEDO_AVIF_SONAME "libavif.so.14"
#elif AVIF_VERSION_MAJOR == 0 && AVIF_VERSION_MINOR == 11
#define ALCEDO_AVIF_SONAME "libavif.so.15"
#elif AVIF_VERSION_MAJOR == 1
#define ALCEDO_AVIF_SONAME "libavif.so.16"
#else
#define ALCEDO_AVIF_SONAME "libavif.so"
#endif

static void load(void) {
    /* The unversioned name is the -dev package's link to the library the header belongs to. */
    static const char *const names[] = { ALCEDO_AVIF_SONAME, "libavif.so" };
    void *library = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && library == NULL; i++) {
        library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(failure, sizeof failure, "%s could not be loaded: %s", ALCEDO_AVIF_SONAME, reason ? reason : "not found");
        return;
    }
#define ALCEDO_AVIF_RESOLVE(name) \
    *(void **)(&table.name) = dlsym(library, #name); \
    if (table.name == NULL) { \
        snprintf(failure, sizeof failure, "libavif lacks %s", #name); \
        return; \
    }
    ALCEDO_AVIF_FUNCTIONS(ALCEDO_AVIF_RESOLVE)
#undef ALCEDO_AVIF_RESOLVE
    unsigned major = 0, minor = 0;
    const char *version = table.avifVersion();
    if (version == NULL || sscanf(version, "%u.%u", &major, &minor) != 2 ||
        major != AVIF_VERSION_MAJOR || (major == 0 && minor != AVIF_VERSION_MINOR)) {
        snprintf(failure, sizeof failure, "libavif %s is loaded, Alcedo was built with %d.%d",
                 version ? version : "(unknown)", AVIF_VERSION_MAJOR, AVIF_VERSION_MINOR);
        return;
    }
    loaded = &table;
}

const alcedo_avif_api *alcedo_avif_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *alcedo_avif_load_error(void) {
    pthread_once(&once, load);
    return loaded ? NULL : failure;
}

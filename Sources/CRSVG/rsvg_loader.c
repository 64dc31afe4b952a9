#include "CRSVG.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/* Only the version macros of librsvg's headers (the rest needs GLib's include paths); the
 * header asks to be reached through rsvg.h, which this file cannot include. */
#define __RSVG_RSVG_H_INSIDE__
#include <librsvg-2.0/librsvg/rsvg-version.h>
#undef __RSVG_RSVG_H_INSIDE__

static alcedo_rsvg_api table;
static const alcedo_rsvg_api *loaded;
static char failure[512];
static char version[32];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    /* librsvg keeps its ABI within soname 2; cairo, GLib and GObject come with it as dependencies. */
    static const char *const names[] = { "librsvg-2.so.2", "librsvg-2.so" };
    void *library = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && library == NULL; i++) {
        library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(failure, sizeof failure, "librsvg-2.so.2 could not be loaded: %s", reason ? reason : "not found");
        return;
    }
    /* dlsym on librsvg's handle also searches its dependencies (cairo, GLib, GObject). */
#define ALCEDO_RSVG_RESOLVE(name) \
    *(void **)(&table.name) = dlsym(library, #name); \
    if (table.name == NULL) { \
        snprintf(failure, sizeof failure, "librsvg (or its cairo and GLib) lacks %s", #name); \
        return; \
    }
    ALCEDO_RSVG_RESOLVE(rsvg_handle_new_from_data)
    ALCEDO_RSVG_RESOLVE(rsvg_handle_set_dpi)
    ALCEDO_RSVG_RESOLVE(rsvg_handle_get_intrinsic_size_in_pixels)
    ALCEDO_RSVG_RESOLVE(rsvg_handle_get_intrinsic_dimensions)
    ALCEDO_RSVG_RESOLVE(rsvg_handle_render_document)
    ALCEDO_RSVG_RESOLVE(g_object_ref)
    ALCEDO_RSVG_RESOLVE(g_object_unref)
    ALCEDO_RSVG_RESOLVE(g_error_free)
    ALCEDO_RSVG_RESOLVE(cairo_image_surface_create_for_data)
    ALCEDO_RSVG_RESOLVE(cairo_surface_status)
    ALCEDO_RSVG_RESOLVE(cairo_surface_flush)
    ALCEDO_RSVG_RESOLVE(cairo_surface_destroy)
    ALCEDO_RSVG_RESOLVE(cairo_create)
    ALCEDO_RSVG_RESOLVE(cairo_status)
    ALCEDO_RSVG_RESOLVE(cairo_destroy)
    ALCEDO_RSVG_RESOLVE(cairo_status_to_string)
#undef ALCEDO_RSVG_RESOLVE
    const unsigned *major = dlsym(library, "rsvg_major_version");
    const unsigned *minor = dlsym(library, "rsvg_minor_version");
    const unsigned *micro = dlsym(library, "rsvg_micro_version");
    if (major && minor && micro) snprintf(version, sizeof version, "%u.%u.%u", *major, *minor, *micro);
    loaded = &table;
}

const alcedo_rsvg_api *alcedo_rsvg_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *alcedo_rsvg_load_error(void) {
    pthread_once(&once, load);
    return loaded ? NULL : failure;
}

const char *alcedo_rsvg_version(void) {
    return version;
}

const char *alcedo_rsvg_header_version(void) {
    return LIBRSVG_VERSION;
}

#ifndef ALCEDO_CRSVG_H
#define ALCEDO_CRSVG_H
/*
 * librsvg (with cairo, GLib and GObject underneath), loaded with dlopen on first use instead of
 * at program start: librsvg brings a Rust runtime, cairo, pango, fontconfig, harfbuzz and
 * gdk-pixbuf with it, whose loading costs every process time and memory even when it never
 * sees an SVG file.
 *
 * The few types Alcedo needs are declared here, with the layout of librsvg 2.54's and cairo's
 * headers, so that building Alcedo does not need GLib's include paths. The functions are
 * reached through the table below, filled by alcedo_rsvg_load().
 */
#include <stddef.h>
#include <stdint.h>

typedef struct alcedo_rsvg_handle alcedo_rsvg_handle;   /* RsvgHandle */
typedef struct alcedo_cairo alcedo_cairo;               /* cairo_t */
typedef struct alcedo_cairo_surface alcedo_cairo_surface; /* cairo_surface_t */

/* GError */
typedef struct alcedo_gerror {
    uint32_t domain;
    int code;
    char *message;
} alcedo_gerror;

/* RsvgRectangle */
typedef struct alcedo_rsvg_rectangle {
    double x, y, width, height;
} alcedo_rsvg_rectangle;

/* RsvgLength; the unit is RsvgUnit (0 percent, 1 px, 2 em, 3 ex, 4 in, 5 cm, 6 mm, 7 pt, 8 pc). */
typedef struct alcedo_rsvg_length {
    double length;
    int unit;
} alcedo_rsvg_length;

/* cairo_format_t's CAIRO_FORMAT_ARGB32: premultiplied, 32 bits a pixel in native byte order. */
#define ALCEDO_CAIRO_FORMAT_ARGB32 0

/// The functions Alcedo calls, each non-NULL in a table alcedo_rsvg_load() returns.
typedef struct alcedo_rsvg_api {
    alcedo_rsvg_handle *(*rsvg_handle_new_from_data)(const uint8_t *data, size_t length, alcedo_gerror **error);
    void (*rsvg_handle_set_dpi)(alcedo_rsvg_handle *handle, double dpi);
    int (*rsvg_handle_get_intrinsic_size_in_pixels)(alcedo_rsvg_handle *handle, double *width, double *height);
    void (*rsvg_handle_get_intrinsic_dimensions)(alcedo_rsvg_handle *handle, int *has_width, alcedo_rsvg_length *width,
                                                 int *has_height, alcedo_rsvg_length *height,
                                                 int *has_viewbox, alcedo_rsvg_rectangle *viewbox);
    int (*rsvg_handle_render_document)(alcedo_rsvg_handle *handle, alcedo_cairo *cr,
                                       const alcedo_rsvg_rectangle *viewport, alcedo_gerror **error);
    void *(*g_object_ref)(void *object);
    void (*g_object_unref)(void *object);
    void (*g_error_free)(alcedo_gerror *error);
    alcedo_cairo_surface *(*cairo_image_surface_create_for_data)(unsigned char *data, int format, int width, int height, int stride);
    int (*cairo_surface_status)(alcedo_cairo_surface *surface);
    void (*cairo_surface_flush)(alcedo_cairo_surface *surface);
    void (*cairo_surface_destroy)(alcedo_cairo_surface *surface);
    alcedo_cairo *(*cairo_create)(alcedo_cairo_surface *target);
    int (*cairo_status)(alcedo_cairo *cr);
    void (*cairo_destroy)(alcedo_cairo *cr);
    const char *(*cairo_status_to_string)(int status);
} alcedo_rsvg_api;

/// Loads librsvg 2 (once; later calls return the same answer) and returns its function table,
/// or NULL when the library cannot be loaded, lacks a function, or is older than 2.52 (the
/// first with rsvg_handle_get_intrinsic_size_in_pixels); alcedo_rsvg_load_error() then says
/// why. Thread-safe.
const alcedo_rsvg_api *alcedo_rsvg_load(void);

/// Why alcedo_rsvg_load() returned NULL, or NULL when it did not.
const char *alcedo_rsvg_load_error(void);

/// The version of librsvg's headers Alcedo was built with, as "major.minor.micro" (reading it
/// does not load the library).
const char *alcedo_rsvg_header_version(void);

/// The librsvg version loaded, as "major.minor.micro" (empty until loaded).
const char *alcedo_rsvg_version(void);

#endif

#ifndef ALCEDO_CHEIF_H
#define ALCEDO_CHEIF_H
/*
 * libheif, loaded with dlopen on first use instead of at program start: libheif brings
 * libde265, x265, libaom, dav1d and more with it, whose loading and static initialisers cost
 * every process a few milliseconds and megabytes even when it never sees a HEIF file.
 *
 * The types and constants come from libheif's own header; the functions Alcedo calls are
 * reached through the table below, filled by alcedo_heif_load().
 */
#include <libheif/heif.h>

#define ALCEDO_HEIF_FUNCTIONS(X) \
    X(heif_get_version_number) \
    X(heif_context_alloc) \
    X(heif_context_free) \
    X(heif_context_read_from_memory_without_copy) \
    X(heif_context_get_primary_image_handle) \
    X(heif_image_handle_release) \
    X(heif_image_handle_get_width) \
    X(heif_image_handle_get_height) \
    X(heif_image_handle_get_ispe_width) \
    X(heif_image_handle_get_ispe_height) \
    X(heif_image_handle_has_alpha_channel) \
    X(heif_image_handle_get_color_profile_type) \
    X(heif_image_handle_get_raw_color_profile_size) \
    X(heif_image_handle_get_raw_color_profile) \
    X(heif_image_handle_get_number_of_thumbnails) \
    X(heif_image_handle_get_list_of_thumbnail_IDs) \
    X(heif_image_handle_get_thumbnail) \
    X(heif_image_handle_get_number_of_metadata_blocks) \
    X(heif_image_handle_get_list_of_metadata_block_IDs) \
    X(heif_image_handle_get_metadata_type) \
    X(heif_image_handle_get_metadata_content_type) \
    X(heif_image_handle_get_metadata_size) \
    X(heif_image_handle_get_metadata) \
    X(heif_decoding_options_alloc) \
    X(heif_decoding_options_free) \
    X(heif_decode_image) \
    X(heif_image_release) \
    X(heif_image_get_width) \
    X(heif_image_get_height) \
    X(heif_image_get_plane_readonly) \
    X(heif_have_encoder_for_format) \
    X(heif_context_get_encoder_for_format) \
    X(heif_encoder_release) \
    X(heif_encoder_set_lossy_quality) \
    X(heif_encoder_set_lossless) \
    X(heif_encoder_set_parameter_string) \
    X(heif_image_create) \
    X(heif_image_add_plane) \
    X(heif_image_get_plane) \
    X(heif_image_set_raw_color_profile) \
    X(heif_encoding_options_alloc) \
    X(heif_encoding_options_free) \
    X(heif_context_encode_image) \
    X(heif_context_encode_thumbnail) \
    X(heif_context_add_exif_metadata) \
    X(heif_context_add_XMP_metadata) \
    X(heif_context_write)

/// The libheif functions Alcedo calls, each non-NULL in a table alcedo_heif_load() returns.
typedef struct alcedo_heif_api {
#define ALCEDO_HEIF_FIELD(name) __typeof__(name) *name;
    ALCEDO_HEIF_FUNCTIONS(ALCEDO_HEIF_FIELD)
#undef ALCEDO_HEIF_FIELD
} alcedo_heif_api;

/// Loads libheif (once; later calls return the same answer) and returns its function table,
/// or NULL when the library cannot be loaded, lacks a function, or is older than the header
/// Alcedo was built with; alcedo_heif_load_error() then says why. Thread-safe.
const alcedo_heif_api *alcedo_heif_load(void);

/// Why alcedo_heif_load() returned NULL, or NULL when it did not.
const char *alcedo_heif_load_error(void);

/// The libheif version of the header Alcedo was built with ((major << 24) | (minor << 16) | (patch << 8)).
static const uint32_t ALCEDO_LIBHEIF_HEADER_VERSION = LIBHEIF_NUMERIC_VERSION;

#endif

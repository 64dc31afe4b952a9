#ifndef ALCEDO_CGIF_SHIM_H
#define ALCEDO_CGIF_SHIM_H
#include <stddef.h>
#include <stdbool.h>
#include <gif_lib.h>

static const int ALCEDO_GIF_OK = GIF_OK;
static const int ALCEDO_GIF_ERROR = GIF_ERROR;
static const int ALCEDO_NO_TRANSPARENT_COLOR = NO_TRANSPARENT_COLOR;
static const int ALCEDO_DISPOSAL_UNSPECIFIED = DISPOSAL_UNSPECIFIED;
static const int ALCEDO_DISPOSE_DO_NOT = DISPOSE_DO_NOT;
static const int ALCEDO_DISPOSE_BACKGROUND = DISPOSE_BACKGROUND;
static const int ALCEDO_DISPOSE_PREVIOUS = DISPOSE_PREVIOUS;

static const int ALCEDO_GIF_GRAPHICS_EXT = GRAPHICS_EXT_FUNC_CODE;
static const int ALCEDO_GIF_APPLICATION_EXT = APPLICATION_EXT_FUNC_CODE;

static const int ALCEDO_D_GIF_ERR_READ_FAILED = D_GIF_ERR_READ_FAILED;
static const int ALCEDO_D_GIF_ERR_NOT_GIF_FILE = D_GIF_ERR_NOT_GIF_FILE;
static const int ALCEDO_D_GIF_ERR_NO_SCRN_DSCR = D_GIF_ERR_NO_SCRN_DSCR;
static const int ALCEDO_D_GIF_ERR_NOT_ENOUGH_MEM = D_GIF_ERR_NOT_ENOUGH_MEM;
static const int ALCEDO_D_GIF_ERR_EOF_TOO_SOON = D_GIF_ERR_EOF_TOO_SOON;
static const int ALCEDO_D_GIF_ERR_WRONG_RECORD = D_GIF_ERR_WRONG_RECORD;

/* GifRecordType is an anonymous C enum: compare its values as plain integers. */
static inline int alcedo_gif_record_is_image(GifRecordType type) { return type == IMAGE_DESC_RECORD_TYPE; }
static inline int alcedo_gif_record_is_extension(GifRecordType type) { return type == EXTENSION_RECORD_TYPE; }
static inline int alcedo_gif_record_is_terminator(GifRecordType type) { return type == TERMINATE_RECORD_TYPE; }
#endif

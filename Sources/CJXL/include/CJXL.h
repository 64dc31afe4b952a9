#ifndef ALCEDO_CJXL_H
#define ALCEDO_CJXL_H
/*
 * libjxl, loaded with dlopen on first use instead of at program start: libjxl brings
 * libhwy, libbrotli and its C++ runtime with it, whose loading and static initialisers cost
 * every process time and memory even when it never sees a JPEG XL file.
 *
 * The types and constants come from libjxl's own headers; the functions Alcedo calls are
 * reached through the table below, filled by alcedo_jxl_load().
 */
#include <stdint.h>
#include <jxl/decode.h>
#include <jxl/encode.h>

#define ALCEDO_JXL_FUNCTIONS(X) \
    X(JxlDecoderVersion) \
    X(JxlDecoderCreate) \
    X(JxlDecoderDestroy) \
    X(JxlDecoderSubscribeEvents) \
    X(JxlDecoderSetInput) \
    X(JxlDecoderCloseInput) \
    X(JxlDecoderProcessInput) \
    X(JxlDecoderGetBasicInfo) \
    X(JxlDecoderGetFrameHeader) \
    X(JxlDecoderGetColorAsEncodedProfile) \
    X(JxlDecoderGetICCProfileSize) \
    X(JxlDecoderGetColorAsICCProfile) \
    X(JxlDecoderSetPreferredColorProfile) \
    X(JxlDecoderImageOutBufferSize) \
    X(JxlDecoderSetImageOutBuffer) \
    X(JxlDecoderSetKeepOrientation) \
    X(JxlDecoderSetUnpremultiplyAlpha) \
    X(JxlDecoderSetParallelRunner) \
    X(JxlDecoderSetProgressiveDetail) \
    X(JxlDecoderFlushImage) \
    X(JxlDecoderGetIntendedDownsamplingRatio) \
    X(JxlDecoderSkipCurrentFrame) \
    X(JxlDecoderSetCoalescing) \
    X(JxlDecoderSetDecompressBoxes) \
    X(JxlDecoderGetBoxType) \
    X(JxlDecoderGetBoxSizeRaw) \
    X(JxlDecoderSetBoxBuffer) \
    X(JxlDecoderReleaseBoxBuffer) \
    X(JxlEncoderVersion) \
    X(JxlEncoderCreate) \
    X(JxlEncoderDestroy) \
    X(JxlEncoderFrameSettingsCreate) \
    X(JxlEncoderFrameSettingsSetOption) \
    X(JxlEncoderSetFrameDistance) \
    X(JxlEncoderSetFrameLossless) \
    X(JxlEncoderInitBasicInfo) \
    X(JxlEncoderSetBasicInfo) \
    X(JxlEncoderInitFrameHeader) \
    X(JxlEncoderSetFrameHeader) \
    X(JxlEncoderSetColorEncoding) \
    X(JxlEncoderSetICCProfile) \
    X(JxlColorEncodingSetToSRGB) \
    X(JxlEncoderAddImageFrame) \
    X(JxlEncoderCloseInput) \
    X(JxlEncoderProcessOutput) \
    X(JxlEncoderSetParallelRunner) \
    X(JxlEncoderGetError) \
    X(JxlEncoderUseContainer) \
    X(JxlEncoderUseBoxes) \
    X(JxlEncoderAddBox) \
    X(JxlEncoderCloseBoxes)

/// The libjxl functions Alcedo calls, each non-NULL in a table alcedo_jxl_load() returns.
typedef struct alcedo_jxl_api {
#define ALCEDO_JXL_FIELD(name) __typeof__(name) *name;
    ALCEDO_JXL_FUNCTIONS(ALCEDO_JXL_FIELD)
#undef ALCEDO_JXL_FIELD
} alcedo_jxl_api;

/// Loads libjxl (once; later calls return the same answer) and returns its function table,
/// or NULL when the library cannot be loaded, lacks a function, or is older than the header
/// Alcedo was built with; alcedo_jxl_load_error() then says why. Thread-safe.
const alcedo_jxl_api *alcedo_jxl_load(void);

/// Why alcedo_jxl_load() returned NULL, or NULL when it did not.
const char *alcedo_jxl_load_error(void);

/// A CPU-time budget for one decode or encode, measured on the calling thread's CPU clock.
typedef struct alcedo_jxl_budget {
    int64_t start_ns;
    int64_t limit_ns;
    /// Set to 1 by alcedo_jxl_serial_runner when it refused work because the budget was used up.
    int expired;
} alcedo_jxl_budget;

/// Starts `budget` now with `limit_ns` nanoseconds of CPU time.
void alcedo_jxl_budget_start(alcedo_jxl_budget *budget, int64_t limit_ns);

/// A JxlParallelRunner that runs libjxl's tasks one after the other on the calling thread
/// (Alcedo bounds CPU work by running decodes side by side, not by threads inside one) and
/// fails the run, which makes libjxl stop with an error, once the alcedo_jxl_budget passed as
/// `runner_opaque` is used up. libjxl's tasks are groups of at most 256x256 pixels, so a
/// decode stops within one group's work of its deadline.
JxlParallelRetCode alcedo_jxl_serial_runner(void *runner_opaque, void *jpegxl_opaque, JxlParallelRunInit init,
                                            JxlParallelRunFunction func, uint32_t start_range, uint32_t end_range);

#endif

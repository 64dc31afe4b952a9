#ifndef ALCEDO_CWEBP_SHIM_H
#define ALCEDO_CWEBP_SHIM_H
#include <stddef.h>
#include <webp/decode.h>
#include <webp/encode.h>
#include <webp/demux.h>
#include <webp/mux.h>

/* The versioned init functions hide behind macros that do not import into Swift. */
static inline int alcedo_webp_init_decoder_config(WebPDecoderConfig *config) {
    return WebPInitDecoderConfig(config);
}
static inline int alcedo_webp_config_init(WebPConfig *config) {
    return WebPConfigInit(config);
}
/* libwebp's presets (WEBP_PRESET_DEFAULT ... WEBP_PRESET_TEXT) at a quality. */
static inline int alcedo_webp_config_preset(WebPConfig *config, int preset, float quality) {
    return WebPConfigPreset(config, (WebPPreset)preset, quality);
}
static inline int alcedo_webp_picture_init(WebPPicture *picture) {
    return WebPPictureInit(picture);
}
static inline int alcedo_webp_anim_decoder_options_init(WebPAnimDecoderOptions *options) {
    return WebPAnimDecoderOptionsInit(options);
}
static inline WebPAnimDecoder *alcedo_webp_anim_decoder_new(const WebPData *data, const WebPAnimDecoderOptions *options) {
    return WebPAnimDecoderNew(data, options);
}
static inline int alcedo_webp_anim_encoder_options_init(WebPAnimEncoderOptions *options) {
    return WebPAnimEncoderOptionsInit(options);
}
static inline WebPAnimEncoder *alcedo_webp_anim_encoder_new(int width, int height, const WebPAnimEncoderOptions *options) {
    return WebPAnimEncoderNew(width, height, options);
}
static inline WebPMux *alcedo_webp_mux_new(void) {
    return WebPMuxNew();
}
static inline WebPDemuxer *alcedo_webp_demux(const WebPData *data) {
    return WebPDemux(data);
}
static inline WebPDemuxer *alcedo_webp_demux_partial(const WebPData *data, WebPDemuxState *state) {
    return WebPDemuxPartial(data, state);
}
static inline VP8StatusCode alcedo_webp_get_features(const uint8_t *data, size_t size, WebPBitstreamFeatures *features) {
    return WebPGetFeatures(data, size, features);
}
static inline void alcedo_webp_data_init(WebPData *data) {
    WebPDataInit(data);
}
static inline void alcedo_webp_data_clear(WebPData *data) {
    WebPDataClear(data);
}
#endif

/// The codecs every ``ImageCodecRegistry`` starts with (unless created without built-ins).
enum BuiltInCodecs {
    static var decoders: [any ImageDecoding] {
        [JPEGDecoder(), PNGDecoder(), GIFDecoder(), WebPDecoder(), AVIFDecoder(), HEIFDecoder(format: .heic), HEIFDecoder(format: .heif)]
            + [JXLDecoder(), SVGDecoder()]
    }
    static var encoders: [any ImageEncoding] {
        [JPEGEncoder(), PNGEncoder(), GIFEncoder(), WebPEncoder(), AVIFEncoder()]
            + [HEICEncoder(), JXLEncoder()]
    }
}

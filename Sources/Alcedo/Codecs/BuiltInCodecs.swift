/// The codecs every ``ImageCodecRegistry`` starts with (unless created without built-ins).
enum BuiltInCodecs {
    static var decoders: [any ImageDecoding] {
        [JPEGDecoder(), PNGDecoder(), GIFDecoder(), WebPDecoder(), AVIFDecoder(), HEIFDecoder(format: .heic), HEIFDecoder(format: .heif),
         TIFFDecoder(), BMPDecoder(), ICODecoder(), JXLDecoder(), SVGDecoder()]
    }
    static var encoders: [any ImageEncoding] {
        [JPEGEncoder(), PNGEncoder(), GIFEncoder(), WebPEncoder(), AVIFEncoder(),
         TIFFEncoder(), BMPEncoder(), ICOEncoder(), HEICEncoder(), JXLEncoder()]
    }
}

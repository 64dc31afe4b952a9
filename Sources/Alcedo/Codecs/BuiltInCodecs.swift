/// The codecs every ``ImageCodecRegistry`` starts with (unless created without built-ins).
enum BuiltInCodecs {
    static var decoders: [any ImageDecoding] { [JPEGDecoder(), WebPDecoder()] }
    static var encoders: [any ImageEncoding] { [JPEGEncoder(), WebPEncoder()] }
}

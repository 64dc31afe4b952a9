import Foundation
@testable import Alcedo

/// The cache tests' codecs: Alcedo's own BMP decoder and encoder, alone in a registry, so the
/// tests run the whole encode → disk → decode path through a lossless format whatever else
/// the registry holds.
enum BMPTestCodec {
    /// A registry with the BMP codecs only.
    static func registry() -> ImageCodecRegistry {
        let registry = ImageCodecRegistry(includingBuiltIns: false)
        registry.register(BMPDecoder())
        registry.register(BMPEncoder())
        return registry
    }
}

extension AlcedoImage {
    /// A `width`×`height` image whose pixels depend on `seed`, alpha included.
    static func testPattern(width: Int = 8, height: Int = 6, seed: UInt8 = 0, format: ImageFormat = .unknown) -> AlcedoImage {
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for index in stride(from: 0, to: pixels.count, by: 4) {
            pixels[index] = UInt8(truncatingIfNeeded: index &+ Int(seed))
            pixels[index + 1] = UInt8(truncatingIfNeeded: index / 3 &+ Int(seed) &* 7)
            pixels[index + 2] = seed
            pixels[index + 3] = UInt8(truncatingIfNeeded: 255 - index / 4)
        }
        return AlcedoImage(width: width, height: height, pixels: pixels, sourceFormat: format)
    }
}

import Foundation
@testable import Alcedo

/// A small, real codec for one BMP layout (32-bit BI_RGB, top-down): it lets the cache tests
/// run the whole encode → disk → decode path through an ``ImageCodecRegistry`` whatever
/// built-in codecs the build has. It reads only what it writes.
struct BMPTestCodec: ImageDecoding, ImageEncoding {
    var format: ImageFormat { .bmp }

    /// A registry with this codec only.
    static func registry() -> ImageCodecRegistry {
        let registry = ImageCodecRegistry(includingBuiltIns: false)
        registry.register(BMPTestCodec() as any ImageDecoding)
        registry.register(BMPTestCodec() as any ImageEncoding)
        return registry
    }

    func encode(_ image: AlcedoImage, options: EncodingOptions) throws(AlcedoError) -> Data {
        var bytes = [UInt8](repeating: 0, count: 54)
        func put32(_ value: Int, at offset: Int) {
            for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
        }
        bytes[0] = UInt8(ascii: "B")
        bytes[1] = UInt8(ascii: "M")
        put32(54 + image.width * image.height * 4, at: 2)
        put32(54, at: 10)
        put32(40, at: 14)
        put32(image.width, at: 18)
        put32(-image.height, at: 22)
        bytes[26] = 1
        bytes[28] = 32
        let pixels = image.pixels
        bytes.reserveCapacity(54 + pixels.count)
        for index in stride(from: 0, to: pixels.count, by: 4) {
            bytes += [pixels[index + 2], pixels[index + 1], pixels[index], pixels[index + 3]]
        }
        return Data(bytes)
    }

    func info(for data: Data, options: DecodingOptions) throws(AlcedoError) -> ImageInfo {
        let (width, height) = try header(data)
        return ImageInfo(format: .bmp, width: width, height: height, hasAlpha: true)
    }

    func decode(_ data: Data, options: DecodingOptions) throws(AlcedoError) -> AlcedoImage {
        let (width, height) = try header(data)
        let bytes = [UInt8](data)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for index in stride(from: 0, to: pixels.count, by: 4) {
            pixels[index] = bytes[54 + index + 2]
            pixels[index + 1] = bytes[54 + index + 1]
            pixels[index + 2] = bytes[54 + index]
            pixels[index + 3] = bytes[54 + index + 3]
        }
        return AlcedoImage(width: width, height: height, pixels: pixels, sourceFormat: .bmp)
    }

    private func header(_ data: Data) throws(AlcedoError) -> (Int, Int) {
        let bytes = [UInt8](data.prefix(54))
        func int32(_ offset: Int) -> Int {
            Int(Int32(bitPattern: UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8
                      | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24))
        }
        guard bytes.count == 54, int32(10) == 54, bytes[28] == 32 else {
            throw .decodingError(reason: .invalidHeader(format: .bmp, message: "not a 32-bit top-down bitmap"))
        }
        let width = int32(18)
        let height = -int32(22)
        guard width > 0, height > 0, width <= 4096, height <= 4096, data.count >= 54 + width * height * 4 else {
            throw .decodingError(reason: .truncated(format: .bmp, message: "pixel data too short"))
        }
        return (width, height)
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

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes the first frame of an image as an uncompressed Windows bitmap.
///
/// An opaque image is written as 24-bit BGR with a `BITMAPINFOHEADER`, the layout every
/// reader takes; an image with transparency as 32-bit BGRA with a `BITMAPV5HEADER` whose
/// BITFIELDS masks name the alpha byte (browsers, Pillow, ImageMagick and Windows read it).
/// Rows are stored bottom-up. An image whose pixels are in another profile
/// (``ColorManagement/preserve``) carries that ICC profile in a V5 header; other images are
/// marked sRGB. ``EncodingOptions/quality`` is ignored: the output is lossless.
public struct BMPEncoder: ImageEncoding {
    /// `.bmp`.
    public var format: ImageFormat { .bmp }

    /// Creates a BMP encoder.
    public init() {}

    /// Encodes the first frame of `image`.
    /// - Throws: `.encodingError(.imageNotEncodable)` when the file would pass 4 GiB.
    public func encode(_ image: AlcedoImage, options: EncodingOptions = .default) throws(AlcedoError) -> Data {
        let width = image.width, height = image.height
        let alpha = image.hasAlpha
        let profile = image.colorMetadata.pixelProfile
        let useV5 = alpha || profile != nil
        let bitCount = alpha ? 32 : 24
        let stride = ((width * bitCount + 31) / 32) * 4
        let headerSize = useV5 ? 124 : 40
        let pixelOffset = 14 + headerSize
        let (pixelBytes, overflow) = stride.multipliedReportingOverflow(by: height)
        let profileBytes = profile?.data.count ?? 0
        guard !overflow, pixelOffset + pixelBytes + profileBytes <= Int(UInt32.max) else {
            throw .encodingError(reason: .imageNotEncodable(format: .bmp, message: "a \(width)x\(height) bitmap would pass 4 GiB"))
        }
        let total = pixelOffset + pixelBytes + profileBytes
        let source = image.pixels
        let bytes = [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            let out = UnsafeMutableRawPointer(buffer.baseAddress!)
            out.initializeMemory(as: UInt8.self, repeating: 0, count: pixelOffset)
            func put16(_ value: Int, _ offset: Int) { out.storeBytes(of: UInt16(truncatingIfNeeded: value).littleEndian, toByteOffset: offset, as: UInt16.self) }
            func put32(_ value: UInt32, _ offset: Int) { out.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self) }
            out.storeBytes(of: UInt8(ascii: "B"), toByteOffset: 0, as: UInt8.self)
            out.storeBytes(of: UInt8(ascii: "M"), toByteOffset: 1, as: UInt8.self)
            put32(UInt32(total), 2)
            put32(UInt32(pixelOffset), 10)
            put32(UInt32(headerSize), 14)
            put32(UInt32(width), 18)
            put32(UInt32(height), 22)  // positive: bottom-up
            put16(1, 26)
            put16(bitCount, 28)
            put32(alpha ? 3 : 0, 30)   // BI_BITFIELDS or BI_RGB
            put32(UInt32(pixelBytes), 34)
            put32(2835, 38)            // 72 dpi
            put32(2835, 42)
            if useV5 {
                if alpha {
                    put32(0x00FF_0000, 54); put32(0x0000_FF00, 58); put32(0x0000_00FF, 62); put32(0xFF00_0000, 66)
                }
                if let profile {
                    put32(0x4D42_4544, 70)  // 'MBED'
                    put32(UInt32(headerSize + pixelBytes), 14 + 112)  // from the start of the info header
                    put32(UInt32(profile.data.count), 14 + 116)
                } else {
                    put32(0x7352_4742, 70)  // 'sRGB'
                }
                put32(4, 14 + 108)  // LCS_GM_IMAGES
            }
            source.withUnsafeBufferPointer { rgba in
                for y in 0..<height {
                    let row = out + pixelOffset + (height - 1 - y) * stride
                    let src = rgba.baseAddress! + y * width * 4
                    if alpha {
                        for x in 0..<width {
                            let s = src + x * 4
                            row.storeBytes(of: s[2], toByteOffset: x * 4, as: UInt8.self)
                            row.storeBytes(of: s[1], toByteOffset: x * 4 + 1, as: UInt8.self)
                            row.storeBytes(of: s[0], toByteOffset: x * 4 + 2, as: UInt8.self)
                            row.storeBytes(of: s[3], toByteOffset: x * 4 + 3, as: UInt8.self)
                        }
                    } else {
                        for x in 0..<width {
                            let s = src + x * 4
                            row.storeBytes(of: s[2], toByteOffset: x * 3, as: UInt8.self)
                            row.storeBytes(of: s[1], toByteOffset: x * 3 + 1, as: UInt8.self)
                            row.storeBytes(of: s[0], toByteOffset: x * 3 + 2, as: UInt8.self)
                        }
                        (row + width * 3).initializeMemory(as: UInt8.self, repeating: 0, count: stride - width * 3)
                    }
                }
            }
            if let profile {
                profile.data.withUnsafeBytes { (out + pixelOffset + pixelBytes).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            }
            initialized = total
        }
        return Data(bytes)
    }
}

import Foundation
import Testing
@testable import Alcedo

@Suite("HEIC encoder")
struct HEICEncoderTests {
    @Test("round trip through libheif's decoder stays close, odd sizes included")
    func roundTrip() throws {
        let source = try JXLFixtures.png("jxl-generated/photo.png")
        let data = try HEICEncoder().encode(source, options: EncodingOptions(quality: 90))
        #expect(ImageFormat.sniff(data) == .heic)
        let back = try HEIFDecoder().decode(data)
        #expect(back.pixelSize == source.pixelSize)
        #expect(JXLFixtures.maxDifference(back, source) <= 40)
        #expect(Self.meanDifference(back, source) < 3)
        let odd = JXLTestImages.noise(width: 33, height: 17, seed: 4)
        #expect(try HEIFDecoder().decode(HEICEncoder(speed: 9).encode(odd)).pixelSize == odd.pixelSize)
    }

    @Test("an embedded thumbnail is written, and decoded instead of the main image when preferred")
    func embeddedThumbnail() throws {
        // Left half red, right half blue: the thumbnail shows the same picture, smaller.
        var pixels = [UInt8](repeating: 0, count: 256 * 128 * 4)
        for y in 0..<128 {
            for x in 0..<256 {
                let index = (y * 256 + x) * 4
                pixels[index] = x < 128 ? 255 : 0
                pixels[index + 2] = x < 128 ? 0 : 255
                pixels[index + 3] = 255
            }
        }
        let source = AlcedoImage(width: 256, height: 128, pixels: pixels)
        let data = try HEICEncoder(speed: 9, thumbnailSize: 64).encode(source, options: EncodingOptions(quality: 90))
        #expect(try HEIFDecoder().decode(data).pixelSize == source.pixelSize, "the main image by default")
        var options = DecodingOptions()
        options.prefersEmbeddedThumbnail = true
        let thumbnail = try HEIFDecoder().decode(data, options: options)
        #expect(thumbnail.pixelSize == PixelSize(width: 64, height: 32))
        #expect(try HEIFDecoder().info(for: data, options: options).width == 64)
        #expect(thumbnail.pixel(x: 8, y: 16).red > 200 && thumbnail.pixel(x: 56, y: 16).blue > 200)
        // Through the registry and without a thumbnail: the main image.
        #expect(try ImageCodecRegistry.shared.decode(data, options: options).pixelSize == thumbnail.pixelSize)
        let plain = try HEICEncoder(speed: 9).encode(source)
        #expect(try HEIFDecoder().decode(plain, options: options).pixelSize == source.pixelSize)
        #expect(HEICEncoder(thumbnailSize: -5).thumbnailSize == 0)
    }

    @Test("alpha survives as an auxiliary image")
    func alpha() throws {
        let source = try JXLFixtures.png("jxl-generated/alpha.png")
        let back = try HEIFDecoder().decode(HEICEncoder().encode(source, options: EncodingOptions(quality: 95)))
        #expect(back.hasAlpha)
        var worstAlpha = 0
        for index in stride(from: 3, to: source.pixels.count, by: 4) {
            worstAlpha = max(worstAlpha, abs(Int(back.pixels[index]) - Int(source.pixels[index])))
        }
        #expect(worstAlpha <= 12)
        let opaque = try HEICEncoder().encode(try JXLFixtures.png("jxl-generated/photo.png"))
        #expect(!(try HEIFDecoder().info(for: opaque).hasAlpha))
    }

    @Test("lower quality and a faster preset make smaller files; lossless is near exact")
    func qualityAndSpeed() throws {
        let source = try JXLFixtures.png("jxl-generated/photo.png")
        let high = try HEICEncoder().encode(source, options: EncodingOptions(quality: 90))
        let low = try HEICEncoder().encode(source, options: EncodingOptions(quality: 30))
        #expect(low.count < high.count)
        #expect(HEICEncoder(speed: 42).speed == 9 && HEICEncoder(speed: -1).speed == 0)
        let lossless = try HEIFDecoder().decode(HEICEncoder().encode(source, options: EncodingOptions(lossless: true)))
        #expect(JXLFixtures.maxDifference(lossless, source) <= 3)
    }

    static func meanDifference(_ a: AlcedoImage, _ b: AlcedoImage) -> Double {
        Double(zip(a.pixels, b.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(a.pixels.count)
    }
}

import Foundation
import Testing
@testable import Alcedo

@Suite("JPEG encoder")
struct JPEGEncoderTests {
    let encoder = JPEGEncoder()
    let decoder = JPEGDecoder()

    static func testorig() throws -> AlcedoImage {
        try JPEGDecoder().decode(Fixtures.data("libjpeg-turbo/testorig.jpg"), options: .default)
    }

    /// The luma sampling factors byte of the frame header and the SOF marker of `data`.
    static func frame(_ data: Data) throws -> (marker: UInt8, lumaSampling: UInt8) {
        let bytes = [UInt8](data)
        let frame = try #require(JPEGTestSupport.segments(bytes).first { (0xC0...0xC2).contains($0.marker) })
        // FF Cn, length (2), precision, height (2), width (2), count, then id and sampling of component 1.
        return (frame.marker, bytes[frame.range.lowerBound + 11])
    }

    @Test("round trip at quality 90 stays above 35 dB PSNR")
    func roundTrip() throws {
        let original = try Self.testorig()
        let data = try encoder.encode(original, options: EncodingOptions(quality: 90))
        #expect(ImageFormat.sniff(data) == .jpeg)
        let decoded = try decoder.decode(data, options: .default)
        #expect(decoded.pixelSize == original.pixelSize)
        #expect(JPEGTestSupport.isOpaque(decoded.pixels))
        let psnr = PixelCompare.psnr(decoded.pixels, original.pixels)
        #expect(psnr > 35, "PSNR \(psnr) dB")
    }

    @Test("baseline with optimised tables, 4:2:0 below quality 90 and 4:4:4 from 90")
    func layout() throws {
        let image = try Self.testorig()
        let high = try Self.frame(encoder.encode(image, options: EncodingOptions(quality: 90)))
        #expect(high.marker == 0xC0)
        #expect(high.lumaSampling == 0x11)
        let low = try Self.frame(encoder.encode(image, options: EncodingOptions(quality: 89)))
        #expect(low.marker == 0xC0)
        #expect(low.lumaSampling == 0x22)
    }

    @Test("progressive when asked")
    func progressive() throws {
        let image = try Self.testorig()
        let data = try JPEGEncoder(progressive: true).encode(image, options: .default)
        #expect(try Self.frame(data).marker == 0xC2)
        let decoded = try decoder.decode(data, options: .default)
        #expect(PixelCompare.psnr(decoded.pixels, image.pixels) > 35)
    }

    @Test("a higher quality never gives a smaller file")
    func qualityOrdersSize() throws {
        let image = try Self.testorig()
        let sizes = try [5, 20, 40, 60, 75, 85, 90, 95, 100].map { quality in
            try encoder.encode(image, options: EncodingOptions(quality: quality)).count
        }
        #expect(sizes == sizes.sorted(), "\(sizes)")
        #expect(Set(sizes).count == sizes.count, "\(sizes)")
    }

    @Test("quality outside 1...100 is an error", arguments: [0, -5, 101, 1000])
    func invalidQuality(_ quality: Int) throws {
        let image = AlcedoImage(width: 1, height: 1, pixels: [1, 2, 3, 255])
        do {
            _ = try encoder.encode(image, options: EncodingOptions(quality: quality))
            Issue.record("quality \(quality) was accepted")
        } catch {
            guard case .encodingFailed(.invalidQuality(let reported))? = error.processorCause else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(reported == quality)
        }
        // The limits of the range are fine.
        #expect(try encoder.encode(image, options: EncodingOptions(quality: 1)).count > 0)
        #expect(try encoder.encode(image, options: EncodingOptions(quality: 100)).count > 0)
    }

    @Test("transparent pixels are composited onto white")
    func alphaOnWhite() throws {
        // Four flat 8x8 quadrants: opaque red, transparent red, half-transparent black, opaque blue.
        let quadrants: [[UInt8]] = [[255, 0, 0, 255], [255, 0, 0, 0], [0, 0, 0, 128], [0, 0, 255, 255]]
        var pixels: [UInt8] = []
        for y in 0..<16 {
            for x in 0..<16 { pixels += quadrants[(y / 8) * 2 + x / 8] }
        }
        let image = AlcedoImage(width: 16, height: 16, pixels: pixels)
        let decoded = try decoder.decode(encoder.encode(image, options: EncodingOptions(quality: 100)), options: .default)
        let expected: [RGBA] = [
            RGBA(red: 255, green: 0, blue: 0), RGBA.white,
            RGBA(red: 127, green: 127, blue: 127), RGBA(red: 0, green: 0, blue: 255),
        ]
        for (index, color) in expected.enumerated() {
            let pixel = decoded.pixel(x: (index % 2) * 8 + 4, y: (index / 2) * 8 + 4)
            #expect(pixel.alpha == 255)
            let difference = max(abs(Int(pixel.red) - Int(color.red)), abs(Int(pixel.green) - Int(color.green)),
                                 abs(Int(pixel.blue) - Int(color.blue)))
            #expect(difference <= 3, "quadrant \(index): \(pixel), expected \(color)")
        }
    }

    @Test("only the first frame of an animation is written")
    func firstFrame() throws {
        func flat(_ color: [UInt8]) -> AlcedoImage.Frame {
            AlcedoImage.Frame(pixels: Array([[UInt8]](repeating: color, count: 8 * 8).joined()), duration: 0.1)
        }
        let red = flat([255, 0, 0, 255]), green = flat([0, 255, 0, 255])
        let animation = AlcedoImage(width: 8, height: 8, frames: [red, green])
        let decoded = try decoder.decode(encoder.encode(animation, options: .default), options: .default)
        let pixel = decoded.pixel(x: 4, y: 4)
        #expect(pixel.red > 250 && pixel.green < 5 && pixel.blue < 5, "\(pixel)")
    }

    @Test("odd sizes and single pixels encode and decode")
    func oddSizes() throws {
        for (width, height) in [(1, 1), (1, 17), (17, 1), (13, 7)] {
            let pixels = (0..<width * height).flatMap { index -> [UInt8] in [UInt8(index % 256), 128, 64, 255] }
            let image = AlcedoImage(width: width, height: height, pixels: pixels)
            let decoded = try decoder.decode(encoder.encode(image, options: .default), options: .default)
            #expect(decoded.width == width && decoded.height == height)
        }
    }
}

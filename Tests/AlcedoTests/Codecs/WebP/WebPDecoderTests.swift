import Foundation
import Testing
@testable import Alcedo

/// Helpers shared by the WebP suites.
enum WebPTestSupport {
    /// The bytes of a fixture in `webp-generated/` (see its `make.py`).
    static func generated(_ name: String) throws -> Data {
        try Fixtures.data("webp-generated/\(name)")
    }

    /// The decoding error `body` throws, or `nil` (with an issue recorded) when it throws
    /// something else or nothing.
    static func decodingError<T>(_ body: () throws(AlcedoError) -> T,
                                 sourceLocation: SourceLocation = #_sourceLocation) -> DecodingErrorReason? {
        do {
            _ = try body()
            Issue.record("expected a decoding error, but decoding succeeded", sourceLocation: sourceLocation)
        } catch {
            if case .decodingFailed(let reason)? = error.processorCause { return reason }
            Issue.record("expected a decoding error, got \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }

    /// How many pixels differ between two buffers of `bytesPerPixel`-byte pixels (`Int.max`
    /// when their lengths differ). Counting keeps a failure's message short.
    static func differences(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>, bytesPerPixel: Int = 4) -> Int {
        let a = Array(a), b = Array(b)
        guard a.count == b.count else { return .max }
        return stride(from: 0, to: a.count, by: bytesPerPixel).filter { a[$0..<$0 + bytesPerPixel] != b[$0..<$0 + bytesPerPixel] }.count
    }

    /// The rows of `pixels` (RGBA8, `width` wide) in `range`.
    static func rows(_ pixels: [UInt8], width: Int, _ range: Range<Int>) -> ArraySlice<UInt8> {
        pixels[(range.lowerBound * width * 4)..<(range.upperBound * width * 4)]
    }
}

@Suite("WebP decoder: still images")
struct WebPDecoderTests {
    let decoder = WebPDecoder()

    @Test("lossy test.webp matches libwebp's reference decode within 1")
    func lossyReference() throws {
        let image = try decoder.decode(try Fixtures.data("libwebp/test.webp"))
        let reference = try PPMImage(data: try Fixtures.data("libwebp/test_ref.ppm"))
        #expect(image.width == reference.width && image.height == reference.height)
        #expect(image.width == 128 && image.height == 128)
        #expect(image.sourceFormat == .webp)
        #expect(image.frames.count == 1 && image.loopCount == 0)
        #expect(!image.hasAlpha)
        // test_ref.ppm was made by a libwebp older than 0.5, whose YUV->RGB conversion rounded
        // differently: dwebp 1.2.4 differs from it by the same 1. Exactness against libwebp
        // 1.2.4 itself is checked by the lossy-with-alpha fixture below.
        #expect(PixelCompare.maxDifference(rgba: image.pixels, rgb: reference.rgb) <= 1)
    }

    @Test("lossy with alpha (VP8X + ALPH + VP8) matches dwebp exactly")
    func lossyAlpha() throws {
        let image = try decoder.decode(try WebPTestSupport.generated("lossy-alpha.webp"))
        #expect(image.width == 24 && image.height == 16)
        #expect(WebPTestSupport.differences(image.pixels, try WebPTestSupport.generated("lossy-alpha.rgba")) == 0)
        #expect(image.pixel(x: 0, y: 0).alpha == 0)
        #expect(image.pixel(x: 0, y: 15).alpha == 255)
    }

    @Test("lossless with alpha decodes to the source pixels, invisible colours included")
    func losslessAlpha() throws {
        let image = try decoder.decode(try WebPTestSupport.generated("lossless-alpha.webp"))
        #expect(image.width == 24 && image.height == 16)
        #expect(WebPTestSupport.differences(image.pixels, try WebPTestSupport.generated("lossless-alpha.rgba")) == 0)
        // Column 5 is fully transparent and keeps its colour: straight alpha, not premultiplied.
        #expect(image.pixel(x: 5, y: 0) == RGBA(red: 50, green: 0, blue: 40, alpha: 0))
        #expect(image.pixel(x: 2, y: 0) == RGBA(red: 20, green: 0, blue: 200, alpha: 235))
    }

    @Test("info reads size and alpha without decoding")
    func stillInfo() throws {
        let lossy = try decoder.info(for: try Fixtures.data("libwebp/test.webp"))
        #expect(lossy == ImageInfo(format: .webp, width: 128, height: 128, hasAlpha: false))
        let lossless = try decoder.info(for: try WebPTestSupport.generated("lossless-alpha.webp"))
        #expect(lossless == ImageInfo(format: .webp, width: 24, height: 16, hasAlpha: true))
        let lossyAlpha = try decoder.info(for: try WebPTestSupport.generated("lossy-alpha.webp"))
        #expect(lossyAlpha.hasAlpha && lossyAlpha.frameCount == 1 && lossyAlpha.orientation == .up)
    }

    @Test("scaled decode is libwebp's own scaling and close to a box-filtered full decode")
    func scaledDecodeQuality() throws {
        let options = DecodingOptions(targetSize: PixelSize(width: 50, height: 40))
        let image = try decoder.decode(try Fixtures.data("libwebp/test.webp"), options: options)
        #expect(image.width == 40 && image.height == 40)
        let libwebp = try PPMImage(data: try WebPTestSupport.generated("test-dwebp-40x40.ppm"))
        #expect(PixelCompare.maxDifference(rgba: image.pixels, rgb: libwebp.rgb) == 0)
        // Pillow's box filter of the full reference decode: libwebp's rescaler averages areas
        // too, after decoding in YUV, so the two agree to ~40.7 dB; 35 dB leaves room for
        // rounding and still catches a wrong size, offset or channel order (those give < 20 dB).
        let box = try PPMImage(data: try WebPTestSupport.generated("test-box-40x40.ppm"))
        let rgb = stride(from: 0, to: image.pixels.count, by: 4).flatMap { image.pixels[$0..<$0 + 3] }
        #expect(PixelCompare.psnr(rgb, box.rgb) > 35)
    }

    @Test("scaled decode covers the target and never exceeds the source",
          arguments: [(50, 40, ContentMode.aspectFit), (50, 40, .aspectFill), (33, 100, .aspectFit), (33, 100, .aspectFill),
                      (1, 1, .aspectFit), (127, 127, .aspectFit), (128, 128, .aspectFill), (500, 300, .aspectFit), (10, 10, .aspectFill)])
    func scaledDecodeSize(width: Int, height: Int, mode: ContentMode) throws {
        let source = PixelSize(width: 128, height: 128)
        let target = PixelSize(width: width, height: height)
        let options = DecodingOptions(targetSize: target, contentMode: mode)
        let image = try decoder.decode(try Fixtures.data("libwebp/test.webp"), options: options)
        let needed = mode == .aspectFit ? source.fitting(in: target) : source.filling(target)
        #expect(image.width >= needed.width && image.height >= needed.height)
        #expect(image.width <= source.width && image.height <= source.height)
        // Rounded up, not more: at most one pixel over the exact scaled size.
        let scale = options.minimumScale(forWidth: 128, height: 128)
        #expect(Double(image.width) < 128 * scale + 1 && Double(image.height) < 128 * scale + 1)
    }

    @Test("scaled decode of a non-square lossless image with alpha")
    func scaledLossless() throws {
        let data = try WebPTestSupport.generated("lossless-alpha.webp")
        let image = try decoder.decode(data, options: DecodingOptions(targetSize: PixelSize(width: 10, height: 10)))
        // 24x16 to fit 10x10: scale 10/24, so 10 x 6.67, rounded up to 7.
        #expect(image.width == 10 && image.height == 7)
        // The alpha ramp survives: opaque-ish on the left, faint on the right.
        #expect(image.pixel(x: 0, y: 3).alpha > image.pixel(x: 9, y: 3).alpha)
    }

    @Test("a truncated still image is an error, or its decoded rows with allowTruncated")
    func truncatedStill() throws {
        let data = try Fixtures.data("libwebp/test.webp")
        let full = try decoder.decode(data)
        let cut = data.prefix(data.count * 6 / 10)
        let reason = WebPTestSupport.decodingError { () throws(AlcedoError) in try decoder.decode(cut) }
        guard case .truncated(.webp, _) = reason else {
            Issue.record("expected .truncated, got \(String(describing: reason))")
            return
        }
        let partial = try decoder.decode(cut, options: DecodingOptions(allowTruncated: true))
        #expect(partial.width == 128 && partial.height == 128)
        let firstMissing = (0..<128).first { y in partial.pixel(x: 0, y: y).alpha == 0 } ?? 128
        #expect(firstMissing > 0 && firstMissing < 128)
        #expect(WebPTestSupport.differences(WebPTestSupport.rows(partial.pixels, width: 128, 0..<firstMissing),
                                            WebPTestSupport.rows(full.pixels, width: 128, 0..<firstMissing)) == 0)
        #expect(WebPTestSupport.rows(partial.pixels, width: 128, firstMissing..<128).allSatisfy { $0 == 0 })
    }
}

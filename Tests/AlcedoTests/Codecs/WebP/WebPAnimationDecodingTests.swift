import Foundation
import Testing
@testable import Alcedo

/// `animated.webp` (see `webp-generated/make.py`): a 32x24 canvas, loop count 3, four lossless
/// frames —
/// 1. the whole canvas, 80 ms, with a transparent band on rows 10-11;
/// 2. 12x10 at (4, 6), 0 ms, alpha-blended, with a transparent 4x4 hole at (8, 9) of the canvas;
/// 3. 10x8 at (16, 8), 5 ms, not blended (alpha 128 and invisible colours kept), disposed to
///    transparent afterwards;
/// 4. 8x8 at (14, 6), 150 ms, blended: white even rows, transparent odd rows.
/// `animated.rgba` holds the four composited canvases, checked against Pillow's decode.
@Suite("WebP decoder: animations")
struct WebPAnimationDecodingTests {
    let decoder = WebPDecoder()
    static let frameBytes = 32 * 24 * 4

    static func reference() throws -> [[UInt8]] {
        let all = [UInt8](try WebPTestSupport.generated("animated.rgba"))
        return stride(from: 0, to: all.count, by: frameBytes).map { Array(all[$0..<$0 + frameBytes]) }
    }

    @Test("every composited frame matches the reference exactly")
    func frames() throws {
        let image = try decoder.decode(try WebPTestSupport.generated("animated.webp"))
        let reference = try Self.reference()
        #expect(image.width == 32 && image.height == 24)
        #expect(image.frames.count == 4 && reference.count == 4)
        for (index, frame) in image.frames.enumerated() where index < reference.count {
            #expect(WebPTestSupport.differences(frame.pixels, reference[index]) == 0, "frame \(index + 1)")
        }
        #expect(image.loopCount == 3)
        #expect(image.sourceFormat == .webp)
    }

    @Test("blending and disposal are applied")
    func compositing() throws {
        let image = try decoder.decode(try WebPTestSupport.generated("animated.webp"))
        try #require(image.frames.count == 4)
        // Frame 2's hole shows frame 1 underneath: red = 8 * x, green = 10 * y (row 10 is in
        // frame 1's transparent band, and blending keeps that too).
        #expect(image.pixel(x: 9, y: 9, frame: 1) == RGBA(red: 72, green: 90, blue: 90, alpha: 255))
        #expect(image.pixel(x: 9, y: 10, frame: 1) == RGBA(red: 72, green: 100, blue: 90, alpha: 0))
        #expect(image.pixel(x: 4, y: 6, frame: 1) == RGBA(red: 20, green: 220, blue: 30, alpha: 255))
        // Frame 3 is not blended: its half-transparent pixels replace the canvas as they are.
        #expect(image.pixel(x: 20, y: 12, frame: 2) == RGBA(red: 250, green: 200, blue: 10, alpha: 128))
        #expect(image.pixel(x: 16, y: 8, frame: 2) == RGBA(red: 10, green: 20, blue: 250, alpha: 0))
        // Frame 3 is disposed: frame 4's transparent rows show a cleared canvas there, while
        // frame 2 (not disposed) is still visible where frame 3 never was.
        #expect(image.pixel(x: 18, y: 9, frame: 3) == RGBA.clear)
        #expect(image.pixel(x: 18, y: 8, frame: 3) == RGBA.white)
        #expect(image.pixel(x: 24, y: 12, frame: 3) == RGBA.clear)
        #expect(image.pixel(x: 15, y: 9, frame: 3) == RGBA(red: 20, green: 220, blue: 30, alpha: 255))
    }

    @Test("durations come from the timestamps; 0 and 5 ms become 100 ms")
    func durations() throws {
        let image = try decoder.decode(try WebPTestSupport.generated("animated.webp"))
        #expect(image.frames.map(\.duration) == [0.08, 0.1, 0.1, 0.15])
    }

    @Test("info reads the frame table without decoding")
    func info() throws {
        let info = try decoder.info(for: try WebPTestSupport.generated("animated.webp"))
        #expect(info == ImageInfo(format: .webp, width: 32, height: 24, frameCount: 4, loopCount: 3,
                                  frameDurations: [0.08, 0.1, 0.1, 0.15], hasAlpha: true))
        #expect(abs(info.totalDuration - 0.43) < 1e-9)
    }

    @Test("firstFrameOnly gives a still image of the first frame")
    func firstFrameOnly() throws {
        let data = try WebPTestSupport.generated("animated.webp")
        let image = try decoder.decode(data, options: DecodingOptions(firstFrameOnly: true))
        #expect(image.frames.count == 1)
        #expect(WebPTestSupport.differences(image.pixels, try Self.reference()[0]) == 0)
        #expect(image.frames[0].duration == 0 && image.loopCount == 0)
    }

    @Test("firstFrameOnly with a target size scales the first frame when it fills the canvas")
    func firstFrameScaled() throws {
        let data = try WebPTestSupport.generated("animated.webp")
        let options = DecodingOptions(targetSize: PixelSize(width: 16, height: 16), firstFrameOnly: true)
        let image = try decoder.decode(data, options: options)
        #expect(image.width == 16 && image.height == 12)
        #expect(image.frames.count == 1)
        // Rows 10-11 of the canvas are transparent: row 5 of the half-size frame.
        #expect(image.pixel(x: 3, y: 5).alpha == 0)
        #expect(image.pixel(x: 3, y: 2).alpha == 255)
    }

    /// Each frame is decoded by libwebp at its scaled size and composited on a half-size canvas:
    /// the result is the full-size composite averaged 2x2, up to rounding (all frame edges of
    /// this file are even, so they land on whole scaled pixels).
    @Test("a whole animation with a target size is composited at the scaled size")
    func animationIsCompositedScaled() throws {
        let data = try WebPTestSupport.generated("animated.webp")
        let image = try decoder.decode(data, options: DecodingOptions(targetSize: PixelSize(width: 16, height: 16)))
        #expect(image.width == 16 && image.height == 12 && image.frames.count == 4)
        #expect(image.loopCount == 3 && image.frames.map(\.duration) == [0.08, 0.1, 0.1, 0.15])
        #expect(image.frames.allSatisfy { $0.pixels.count == 16 * 12 * 4 })
        let reference = try Self.reference()
        for (index, frame) in image.frames.enumerated() {
            var worstAlpha = 0, worstColour = 0
            for y in 0..<12 {
                for x in 0..<16 {
                    var sums = [0, 0, 0, 0]
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                        let at = ((2 * y + dy) * 32 + 2 * x + dx) * 4
                        let alpha = Int(reference[index][at + 3])
                        for channel in 0..<3 { sums[channel] += Int(reference[index][at + channel]) * alpha }
                        sums[3] += alpha
                    }
                    let at = (y * 16 + x) * 4
                    let alpha = Int(frame.pixels[at + 3])
                    worstAlpha = max(worstAlpha, abs(alpha - (sums[3] + 2) / 4))
                    // Colour only where both are opaque enough for it to show.
                    guard alpha >= 128, sums[3] >= 4 * 128 else { continue }
                    for channel in 0..<3 {
                        worstColour = max(worstColour, abs(Int(frame.pixels[at + channel]) - sums[channel] / sums[3]))
                    }
                }
            }
            #expect(worstAlpha <= 2, "frame \(index + 1): alpha off by \(worstAlpha)")
            #expect(worstColour <= 6, "frame \(index + 1): colour off by \(worstColour)")
        }
    }

    /// Scaled frames bound the memory, not the work: libwebp decodes each frame whole before
    /// scaling it, so the frames' own pixels count against the byte limit (4 frames of
    /// 768, 120, 80 and 64 pixels: 4,128 bytes, while the scaled frames kept take 3,072).
    @Test("with a target size, the frames' full-size pixels still count against the byte limit")
    func scaledAnimationCountsTheDecodedFrames() throws {
        let data = try WebPTestSupport.generated("animated.webp")
        let reason = WebPTestSupport.decodingError { () throws(AlcedoError) in
            try decoder.decode(data, options: DecodingOptions(targetSize: PixelSize(width: 16, height: 16),
                                                              limits: DecodingLimits(maxTotalBytes: 4_000)))
        }
        #expect(reason == .animationTooLarge(format: .webp, bytes: 4_128, limit: 4_000))
        let enough = DecodingOptions(targetSize: PixelSize(width: 16, height: 16), limits: DecodingLimits(maxTotalBytes: 4_128))
        #expect(try decoder.decode(data, options: enough).frames.count == 4)
    }

    @Test("an animation of one frame with a target size decodes like a still, scaled")
    func oneFrameAnimationIsAStill() throws {
        let data = HostileJPEGWebPTests.Generate.tinyFramesOnCanvas(width: 16_383, height: 6_103, offsets: [(0, 0)])
        let image = try decoder.decode(data, options: DecodingOptions(targetSize: PixelSize(width: 256, height: 256)))
        #expect(image.width == 256 && image.height == 96 && image.frames.count == 1)
        #expect(image.pixel(x: 0, y: 0) == RGBA(red: 10, green: 20, blue: 30))
    }

    @Test("the frame limit is checked before decoding")
    func frameLimit() throws {
        let data = try WebPTestSupport.generated("animated.webp")
        let limits = DecodingLimits(maxFrameCount: 3)
        let reason = WebPTestSupport.decodingError { () throws(AlcedoError) in
            try decoder.decode(data, options: DecodingOptions(limits: limits))
        }
        #expect(reason == .tooManyFrames(format: .webp, count: 4, limit: 3))
        // One frame is within the limit.
        let first = try decoder.decode(data, options: DecodingOptions(firstFrameOnly: true, limits: DecodingLimits(maxFrameCount: 1)))
        #expect(first.frames.count == 1)
    }

    @Test("the total size limit and the pixel limit apply to the canvas")
    func sizeLimits() throws {
        let data = try WebPTestSupport.generated("animated.webp")
        let bytes = WebPTestSupport.decodingError { () throws(AlcedoError) in
            try decoder.decode(data, options: DecodingOptions(limits: DecodingLimits(maxTotalBytes: 3 * Self.frameBytes)))
        }
        #expect(bytes == .animationTooLarge(format: .webp, bytes: 4 * Self.frameBytes, limit: 3 * Self.frameBytes))
        let pixels = WebPTestSupport.decodingError { () throws(AlcedoError) in
            try decoder.decode(data, options: DecodingOptions(limits: DecodingLimits(maxPixelCount: 32 * 24 - 1)))
        }
        #expect(pixels == .tooManyPixels(format: .webp, width: 32, height: 24, limit: 32 * 24 - 1))
    }
}

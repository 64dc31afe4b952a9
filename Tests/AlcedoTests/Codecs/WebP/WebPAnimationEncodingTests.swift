import Foundation
import Testing
@testable import Alcedo

/// Lossy WebP animations: each frame stored as the rectangle that changed, replacing what it
/// covers; frames, durations and the loop count checked by Pillow (the test environment's, a
/// reader apart from Alcedo's) as well as by Alcedo's own decoder.
@Suite("WebP animation encoding")
struct WebPAnimationEncodingTests {
    static let width = 64, height = 48

    /// A smooth background with an 8x8 square at (`x`, `y`).
    static func frame(squareAt x: Int, _ y: Int) -> [UInt8] {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for row in 0..<height {
            for column in 0..<width {
                let i = (row * width + column) * 4
                let inSquare = (x..<x + 8).contains(column) && (y..<y + 8).contains(row)
                pixels[i] = inSquare ? 220 : UInt8(column * 3)
                pixels[i + 1] = inSquare ? 30 : UInt8(row * 4)
                pixels[i + 2] = inSquare ? 40 : 160
            }
        }
        return pixels
    }

    /// Frame count, durations (ms) and loop count as Pillow reads `data`.
    static func pillowAnimation(_ data: Data, suffix: String) throws -> (frames: Int, durations: [Int], loop: Int) {
        let script = """
            import sys; from PIL import Image
            image = Image.open(sys.argv[1]); durations = []
            for index in range(image.n_frames):
                image.seek(index); image.load(); durations.append(int(image.info.get('duration', 0)))
            print(image.n_frames, image.info.get('loop', -1), *durations)
            """
        let text = String(decoding: try PillowReader.output(of: script, for: data, suffix: suffix), as: UTF8.self)
        let numbers = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard numbers.count >= 2 else { throw CocoaError(.fileReadCorruptFile) }
        return (numbers[0], Array(numbers.dropFirst(2)), numbers[1])
    }

    /// PSNR of the colour channels, alpha left out.
    static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double { gifColorPSNR(a, b) }

    static let delays = [0.04, 0.06, 0.1, 0.04, 0.06, 0.1]

    /// A 6-frame animated GIF: the square moves across the background.
    static func sourceGIF() throws -> Data {
        let frames = delays.enumerated().map { index, delay in
            AlcedoImage.Frame(pixels: frame(squareAt: 4 + index * 8, 10 + index * 4), duration: delay)
        }
        return try GIFEncoder().encode(AlcedoImage(width: width, height: height, frames: frames, loopCount: 0))
    }

    @Test("GIF to WebP, resized: every frame, delay and the endless loop kept, as Pillow and Alcedo read them")
    func gifToWebPKeepsTiming() throws {
        let source = try GIFDecoder().decode(try Self.sourceGIF())
        #expect(source.frames.count == 6)
        let resized = source.resized(toFit: PixelSize(width: 40, height: 40))
        let webp = try WebPEncoder(method: 2).encode(resized, options: EncodingOptions(quality: 80))
        #expect(ImageFormat.webPVariant(of: webp) == .animated)
        let pillow = try Self.pillowAnimation(webp, suffix: "webp")
        #expect(pillow.frames == 6 && pillow.loop == 0)
        #expect(pillow.durations == [40, 60, 100, 40, 60, 100])
        let decoded = try WebPDecoder().decode(webp)
        #expect(decoded.frames.count == 6 && decoded.loopCount == 0)
        #expect(decoded.frames.map(\.duration) == Self.delays)
        for index in 0..<min(6, decoded.frames.count) {
            let value = Self.psnr(decoded.frames[index].pixels, resized.frames[index].pixels)
            #expect(value >= 28, "frame \(index + 1): \(value) dB")
        }
    }

    @Test("each frame is stored as the even-aligned rectangle that changed; identical frames merge")
    func changedRectangles() {
        let still = Self.frame(squareAt: 4, 10)
        let moved = Self.frame(squareAt: 13, 21)
        let frames = [AlcedoImage.Frame(pixels: still, duration: 0.1), AlcedoImage.Frame(pixels: still, duration: 0.05),
                      AlcedoImage.Frame(pixels: moved, duration: 0.2)]
        let entries = WebPFrameRectangles(frames: frames, width: Self.width, height: Self.height).entries
        #expect(entries.count == 2)
        #expect(entries.first == WebPFrameRectangles.Entry(frame: 0, x: 0, y: 0, width: 64, height: 48, duration: 150))
        // The old square covered 4..<12 x 10..<18, the new one 13..<21 x 21..<29: x from 4, y from 10.
        #expect(entries.last == WebPFrameRectangles.Entry(frame: 2, x: 4, y: 10, width: 17, height: 19, duration: 200))
        // An odd start is widened to the even coordinate before it.
        // (41..<49, 31..<39) to (43..<51, 33..<41): from (41, 31), widened to (40, 30).
        let odd = WebPFrameRectangles.changedRectangle(Self.frame(squareAt: 41, 31), Self.frame(squareAt: 43, 33),
                                                       width: Self.width, height: Self.height)
        #expect(odd?.x == 40 && odd?.y == 30 && odd?.width == 11 && odd?.height == 11)
        #expect(WebPFrameRectangles.changedRectangle(still, still, width: Self.width, height: Self.height) == nil)
    }

    /// The PSNR of `pixels` written alone as a lossy still at the animation's settings.
    static func stillPSNR(_ pixels: [UInt8]) throws -> Double {
        let still = AlcedoImage(width: width, height: height, pixels: pixels)
        let data = try WebPEncoder(method: 2).encode(still, options: EncodingOptions(quality: 90))
        return psnr(try WebPDecoder().decode(data).pixels, pixels)
    }

    /// Every frame, composed from its rectangle over the frames before, is about as close to its
    /// source as the same picture written alone (a misplaced or blended rectangle would be far off).
    @Test("a lossy animation shows every frame as it is: moved squares and the background around them")
    func lossyRoundTrip() throws {
        let frames = (0..<5).map { AlcedoImage.Frame(pixels: Self.frame(squareAt: 2 + $0 * 11, 3 + $0 * 8), duration: 0.1) }
        let image = AlcedoImage(width: Self.width, height: Self.height, frames: frames, loopCount: 3)
        let decoded = try WebPDecoder().decode(try WebPEncoder(method: 2).encode(image, options: EncodingOptions(quality: 90)))
        #expect(decoded.frames.count == 5 && decoded.loopCount == 3)
        for index in 0..<min(5, decoded.frames.count) {
            let value = Self.psnr(decoded.frames[index].pixels, frames[index].pixels)
            let alone = try Self.stillPSNR(frames[index].pixels)
            #expect(value >= 28 && value >= alone - 1.5, "frame \(index + 1): \(value) dB, \(alone) dB alone")
        }
    }

    /// A frame replaces what its rectangle covers: pixels that turn transparent are transparent,
    /// not blended over the frame before.
    @Test func pixelsTurningTransparentAreTransparent() throws {
        let opaque: [UInt8] = Array([[UInt8]](repeating: [200, 40, 40, 255], count: Self.width * Self.height).joined())
        var cleared = opaque
        for row in 0..<Self.height {
            for column in 0..<(Self.width / 2) { cleared.replaceSubrange((row * Self.width + column) * 4..<(row * Self.width + column) * 4 + 4, with: [0, 0, 0, 0]) }
        }
        let image = AlcedoImage(width: Self.width, height: Self.height,
                                frames: [.init(pixels: opaque, duration: 0.1), .init(pixels: cleared, duration: 0.1)])
        let decoded = try WebPDecoder().decode(try WebPEncoder(method: 2).encode(image))
        #expect(decoded.frames.count == 2)
        guard decoded.frames.count == 2 else { return }
        let alpha = stride(from: 3, to: decoded.frames[1].pixels.count, by: 4).map { decoded.frames[1].pixels[$0] }
        let wrong = alpha.indices.filter { index in (index % Self.width < Self.width / 2) != (alpha[index] == 0) }
        #expect(wrong.isEmpty, "\(wrong.count) pixels with the wrong alpha")
    }

    @Test("lossy identical consecutive frames are merged, their durations added")
    func lossyIdenticalFramesMerge() throws {
        let first = Self.frame(squareAt: 0, 0), second = Self.frame(squareAt: 30, 20)
        let frames = [AlcedoImage.Frame(pixels: first, duration: 0.1), AlcedoImage.Frame(pixels: first, duration: 0.25),
                      AlcedoImage.Frame(pixels: second, duration: 0.3)]
        let decoded = try WebPDecoder().decode(try WebPEncoder().encode(AlcedoImage(width: Self.width, height: Self.height, frames: frames)))
        #expect(decoded.frames.map(\.duration) == [0.35, 0.3])
    }
}

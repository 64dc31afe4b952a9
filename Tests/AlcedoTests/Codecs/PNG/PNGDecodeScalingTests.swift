import Foundation
import Testing
@testable import Alcedo

@Suite("Decode-time scaling of PNG and GIF")
struct PNGDecodeScalingTests {
    /// A 61x45 RGBA picture with varying alpha, decoded for an 8x8 target: the factor keeps at
    /// least twice the target (4: 16x12), each pixel is the box average of its block on
    /// premultiplied alpha (the partial blocks at the edges too), and the interlaced twin
    /// shrinks to the same bytes.
    @Test func shrinksByWholeBlocksWhileDecoding() throws {
        let width = 61, height = 45
        var generator = SeededRandom(seed: 7)
        let samples = (0..<(width * height * 4)).map { _ in Int(generator.next() % 256) }
        let options = DecodingOptions(targetSize: PixelSize(width: 8, height: 8))
        #expect(options.boxShrinkFactor(width: width, height: height) == 3)
        let plain = try PNGDecoder().decode(Data(PNGTwin.png(width: width, height: height, depth: 8, colorType: 6,
                                                               samples: samples, interlaced: false)), options: options)
        let interlaced = try PNGDecoder().decode(Data(PNGTwin.png(width: width, height: height, depth: 8, colorType: 6,
                                                                    samples: samples, interlaced: true)), options: options)
        #expect(plain.width == 21 && plain.height == 15)
        #expect(plain.pixels == interlaced.pixels)
        let expected = PNGDecodeScalingTests.boxAverage(samples.map { UInt8($0) }, width: width, height: height, factor: 3)
        #expect(plain.pixels == expected)
        // Without a target, or when the target is near the full size, nothing shrinks.
        #expect(DecodingOptions.default.boxShrinkFactor(width: width, height: height) == 1)
        #expect(DecodingOptions(targetSize: PixelSize(width: 40, height: 40)).boxShrinkFactor(width: width, height: height) == 1)
    }

    /// The box average of `pixels` (RGBA, `width` x `height`) in blocks of `factor`, premultiplied.
    static func boxAverage(_ pixels: [UInt8], width: Int, height: Int, factor: Int) -> [UInt8] {
        var out: [UInt8] = []
        for by in 0..<((height + factor - 1) / factor) {
            for bx in 0..<((width + factor - 1) / factor) {
                var sums = [0, 0, 0, 0], count = 0
                for y in (by * factor)..<min(height, by * factor + factor) {
                    for x in (bx * factor)..<min(width, bx * factor + factor) {
                        let at = (y * width + x) * 4, alpha = Int(pixels[at + 3])
                        for c in 0..<3 { sums[c] += Int(pixels[at + c]) * alpha }
                        sums[3] += alpha
                        count += 1
                    }
                }
                let alpha = sums[3]
                out += (0..<3).map { alpha == 0 ? 0 : UInt8((sums[$0] + alpha / 2) / alpha) }
                out.append(UInt8((alpha + count / 2) / count))
            }
        }
        return out
    }

    /// A single-frame GIF with a transparent index, placed inside a larger screen: decoded for
    /// a 4x4 target it shrinks by 5 while decoding, to the box average of the full decode; an
    /// animation is not shrunk unless only its first frame is asked for.
    @Test func singleFrameGIFShrinksWhileDecoding() throws {
        var gif = GIFTestFile(width: 40, height: 30, palette: [[255, 0, 0], [0, 0, 255], [0, 255, 0], [9, 9, 9]])
        gif.control(transparent: 3)
        var generator = SeededRandom(seed: 3)
        gif.image(x: 5, y: 4, width: 20, height: 20, indices: (0..<400).map { _ in UInt8(generator.next() % 4) })
        gif.trailer()
        let full = try GIFDecoder().decode(gif.data)
        let options = DecodingOptions(targetSize: PixelSize(width: 4, height: 4))
        let small = try GIFDecoder().decode(gif.data, options: options)
        #expect(small.width == 8 && small.height == 6)
        #expect(small.pixels == PNGDecodeScalingTests.boxAverage(full.pixels, width: 40, height: 30, factor: 5))

        gif = GIFTestFile(width: 40, height: 30, palette: [[255, 0, 0], [0, 0, 255]])
        gif.image(width: 40, height: 30, indices: [UInt8](repeating: 0, count: 1_200))
        gif.image(width: 40, height: 30, indices: [UInt8](repeating: 1, count: 1_200))
        gif.trailer()
        let animation = try GIFDecoder().decode(gif.data, options: options)
        // An animation keeps each composited frame shrunk by the same factor.
        #expect(animation.width == 8 && animation.height == 6 && animation.frames.count == 2)
        #expect(animation.pixel(x: 7, y: 5, frame: 1) == RGBA(red: 0, green: 0, blue: 255))
        var firstOnly = options
        firstOnly.firstFrameOnly = true
        let first = try GIFDecoder().decode(gif.data, options: firstOnly)
        #expect(first.width == 8 && first.pixel(x: 7, y: 5) == RGBA(red: 255, green: 0, blue: 0))
    }
}

import Foundation
import Testing
@testable import Alcedo

/// Error diffusion in the GIF encoder, judged on what Pillow (the test environment's, a reader
/// apart from Alcedo's) decodes: SSIM on luma as `Benchmarks/Serve/ssim.py` computes it (an
/// 11-tap Gaussian window, sigma 1.5, K1 0.01, K2 0.03), and the error of 4x4 block means, which
/// banding keeps and dithering spreads away.
@Suite("GIF dithering")
struct GIFDitheringTests {
    static let width = 256, height = 96

    /// A smooth picture with far more than 256 colours: ramps in every channel.
    static func gradient() -> [UInt8] {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                pixels[i] = UInt8(x)
                pixels[i + 1] = UInt8(y * 255 / (height - 1))
                pixels[i + 2] = UInt8(255 - (x / 2 + y))
            }
        }
        return pixels
    }

    /// The RGB pixels Pillow decodes from `gif`.
    static func pillowRGB(_ gif: Data) throws -> [UInt8] {
        let script = "import sys; from PIL import Image; sys.stdout.buffer.write(Image.open(sys.argv[1]).convert('RGB').tobytes())"
        return [UInt8](try PillowReader.output(of: script, for: gif, suffix: "gif"))
    }

    /// Rec. 601 luma of pixels with `channels` bytes each.
    static func luma(_ pixels: [UInt8], channels: Int) -> [Double] {
        var out = [Double]()
        out.reserveCapacity(pixels.count / channels)
        for i in stride(from: 0, to: pixels.count, by: channels) {
            let red: Double = 0.299 * Double(pixels[i])
            let green: Double = 0.587 * Double(pixels[i + 1])
            let blue: Double = 0.114 * Double(pixels[i + 2])
            out.append(red + green + blue)
        }
        return out
    }

    /// `plane` (width x height) filtered by the 11-tap Gaussian, valid part only.
    static func blur(_ plane: [Double], width: Int, height: Int) -> [Double] {
        let taps: [Double] = (0..<11).map { index in
            let distance = (Double(index) - 5) / 1.5
            return exp(-0.5 * distance * distance)
        }
        let total = taps.reduce(0, +)
        let weights = taps.map { $0 / total }
        let outWidth = width - 10, outHeight = height - 10
        var rows = [Double](repeating: 0, count: outHeight * width)
        for y in 0..<outHeight {
            for x in 0..<width {
                var sum = 0.0
                for k in 0..<11 { sum += weights[k] * plane[(y + k) * width + x] }
                rows[y * width + x] = sum
            }
        }
        var out = [Double](repeating: 0, count: outHeight * outWidth)
        for y in 0..<outHeight {
            for x in 0..<outWidth {
                var sum = 0.0
                for k in 0..<11 { sum += weights[k] * rows[y * width + x + k] }
                out[y * outWidth + x] = sum
            }
        }
        return out
    }

    /// SSIM of RGB `decoded` against RGBA `source`, as `ssim.py` computes it.
    static func ssim(_ decoded: [UInt8], _ source: [UInt8]) -> Double {
        let x = luma(decoded, channels: 3), y = luma(source, channels: 4)
        let xx = zip(x, x).map(*), yy = zip(y, y).map(*), xy = zip(x, y).map(*)
        let mx = blur(x, width: width, height: height), my = blur(y, width: width, height: height)
        let sxx = blur(xx, width: width, height: height), syy = blur(yy, width: width, height: height)
        let sxy = blur(xy, width: width, height: height)
        let c1: Double = 2.55 * 2.55, c2: Double = 7.65 * 7.65
        var total = 0.0
        for i in mx.indices {
            let meanX: Double = mx[i], meanY: Double = my[i]
            let vx: Double = sxx[i] - meanX * meanX
            let vy: Double = syy[i] - meanY * meanY
            let cov: Double = sxy[i] - meanX * meanY
            let numerator: Double = (2 * meanX * meanY + c1) * (2 * cov + c2)
            let denominator: Double = (meanX * meanX + meanY * meanY + c1) * (vx + vy + c2)
            total += numerator / denominator
        }
        return total / Double(mx.count)
    }

    /// The mean absolute difference of the 4x4 block means of luma.
    static func blockMeanError(_ decoded: [UInt8], _ source: [UInt8]) -> Double {
        let x = luma(decoded, channels: 3), y = luma(source, channels: 4)
        var total = 0.0, blocks = 0
        for by in stride(from: 0, to: height, by: 4) {
            for bx in stride(from: 0, to: width, by: 4) {
                var difference = 0.0
                for dy in 0..<4 { for dx in 0..<4 { difference += x[(by + dy) * width + bx + dx] - y[(by + dy) * width + bx + dx] } }
                total += abs(difference / 16)
                blocks += 1
            }
        }
        return total / Double(blocks)
    }

    static func measure(dithering: Double) throws -> (ssim: Double, blockError: Double, bytes: Int) {
        let source = gradient()
        let gif = try GIFEncoder(dithering: dithering).encode(AlcedoImage(width: width, height: height, pixels: source))
        let decoded = try pillowRGB(gif)
        #expect(decoded.count == width * height * 3)
        guard decoded.count == width * height * 3 else { return (0, .infinity, gif.count) }
        return (ssim(decoded, source), blockMeanError(decoded, source), gif.count)
    }

    /// Dithering keeps the gradient's local averages (4x4 block means) far closer than the plain
    /// mapping's bands do; SSIM, which counts dither noise as lost structure, prefers the plain
    /// mapping, so it is only held to a floor here.
    @Test("error diffusion keeps a gradient's local averages: block means at least twice as close as without")
    func gradientBlockMeans() throws {
        let dithered = try Self.measure(dithering: 1)
        let plain = try Self.measure(dithering: 0)
        #expect(dithered.blockError < plain.blockError / 2, "block-mean error \(dithered.blockError) dithered, \(plain.blockError) without")
        #expect(dithered.ssim > 0.8 && plain.ssim > 0.9, "SSIM \(dithered.ssim) dithered, \(plain.ssim) without")
    }

    /// The encoder does not dither unless asked: its default output is the plain mapping's.
    @Test func defaultEncoderDoesNotDither() throws {
        let image = AlcedoImage(width: Self.width, height: Self.height, pixels: Self.gradient())
        #expect(GIFEncoder().dithering == 0)
        let plain = try GIFEncoder(dithering: 0).encode(image), byDefault = try GIFEncoder().encode(image)
        let dithered = try GIFEncoder(dithering: 1).encode(image)
        #expect(byDefault == plain && dithered != plain)
    }

    /// Transparent pixels stay transparent (and take no error); no opaque pixel becomes transparent.
    @Test func ditheringKeepsTransparency() throws {
        var pixels = Self.gradient()
        for pixel in stride(from: 0, to: Self.width * Self.height, by: 7) { pixels[pixel * 4 + 3] = 0 }
        let result = GIFColorQuantizer.quantize(pixels, width: Self.width, dithering: 1)
        let transparent = try #require(result.transparentIndex)
        #expect(result.colorCount <= 256)
        let wrong = (0..<(Self.width * Self.height)).filter { pixel in
            (Int(result.indices[pixel]) == transparent) != (pixels[pixel * 4 + 3] < 128)
        }
        #expect(wrong.isEmpty, "\(wrong.count) pixels, the first \(wrong.first ?? -1)")
    }

    /// An exact palette (256 colours or fewer) is never dithered: the pixels come back as they were.
    @Test func exactPalettesAreNotDithered() throws {
        var pixels = [UInt8](repeating: 255, count: 64 * 4 * 4)
        for pixel in 0..<(64 * 4) { pixels[pixel * 4] = UInt8(pixel % 200); pixels[pixel * 4 + 1] = UInt8(pixel / 64 * 60) }
        let image = AlcedoImage(width: 64, height: 4, pixels: pixels)
        let decoded = try GIFDecoder().decode(GIFEncoder(dithering: 1).encode(image))
        #expect(decoded.pixels == pixels)
    }
}

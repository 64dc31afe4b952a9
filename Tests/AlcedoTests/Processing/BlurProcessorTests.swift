import Foundation
import Testing
@testable import Alcedo

@Suite("BlurImageProcessor")
struct BlurProcessorTests {
    /// The normalised 1-D Gaussian of standard deviation `sigma`, sampled at whole pixels out to ⌈3σ⌉.
    static func gaussian(sigma: Double) -> [Int: Double] {
        let reach = Int((3 * sigma).rounded(.up))
        var weights: [Int: Double] = [:]
        for m in -reach...reach { weights[m] = exp(-Double(m * m) / (2 * sigma * sigma)) }
        let total = weights.values.reduce(0, +)
        return weights.mapValues { $0 / total }
    }

    /// A `size` x `size` opaque black image with one white pixel in the middle.
    static func dot(size: Int) -> AlcedoImage {
        Synthetic.image(width: size, height: size) { x, y in
            x == size / 2 && y == size / 2 ? .white : .black
        }
    }

    @Test("a single bright pixel spreads as the separable Gaussian, symmetric, keeping its energy")
    func impulse() throws {
        let sigma = 1.0
        let result = try BlurImageProcessor(blurRadius: sigma).process(Self.dot(size: 9))
        let g = Self.gaussian(sigma: sigma)
        var total = 0
        for y in 0..<9 {
            for x in 0..<9 {
                let pixel = result.pixel(x: x, y: y)
                let expected = 255 * (g[x - 4] ?? 0) * (g[y - 4] ?? 0)
                #expect(abs(Double(pixel.red) - expected) <= 0.5 + 1e-3, "(\(x), \(y))")
                #expect(pixel.red == pixel.green && pixel.green == pixel.blue && pixel.alpha == 255)
                #expect(pixel == result.pixel(x: 8 - x, y: y))
                #expect(pixel == result.pixel(x: x, y: 8 - y))
                #expect(pixel == result.pixel(x: y, y: x))
                total += Int(pixel.red)
            }
        }
        #expect(abs(total - 255) <= 8)
    }

    @Test("the radius is the standard deviation: the spread's variance is σ² (less the 3σ truncation)")
    func radiusIsSigma() throws {
        let sigma = 1.5
        let result = try BlurImageProcessor(blurRadius: sigma).process(Self.dot(size: 15))
        var mass = 0.0, moment = 0.0
        for x in 0..<15 {
            let value = Double(result.pixel(x: x, y: 7).red)
            mass += value
            moment += value * Double((x - 7) * (x - 7))
        }
        #expect(abs(moment / mass - sigma * sigma) < 0.1 * sigma * sigma)
    }

    @Test("a constant image is unchanged, edges included (edge clamp), translucent too")
    func constant() throws {
        for color in [RGBA(red: 200, green: 30, blue: 90), RGBA(red: 10, green: 250, blue: 128, alpha: 77)] {
            let image = Synthetic.solid(color, width: 7, height: 5)
            for radius in [0.5, 2, 40] {
                #expect(try BlurImageProcessor(blurRadius: radius).process(image) == image, "radius \(radius)")
            }
        }
    }

    @Test("a radius whose square underflows (down to the smallest subnormal) leaves the image as it is, never a trap")
    func vanishingRadius() throws {
        let image = Self.dot(size: 9)
        for radius in [1e-20, 1e-160, 1e-200, Double.leastNormalMagnitude, Double.leastNonzeroMagnitude] {
            #expect(try BlurImageProcessor(blurRadius: radius).process(image) == image, "radius \(radius)")
        }
    }

    @Test("NaN becomes byte 0 where pixels are written back, never a trap")
    func notANumberIsZero() {
        #expect(PixelOps.byte(.nan) == 0)
        #expect(PixelOps.byte(-.infinity) == 0)
        #expect(PixelOps.byte(.infinity) == 255)
        #expect(PixelOps.byte(254.6) == 255)
        #expect(PixelOps.unitByte(.nan) == 0)
        #expect(PixelOps.unitByte(0.5) == 128)
    }

    @Test("a convolution whose sums overflow to ±∞ or NaN writes clamped bytes, never a trap")
    func convolutionOfHugeWeights() throws {
        let image = Self.dot(size: 5)
        let huge = [Double](repeating: 1e308, count: 9)
        var mixed = huge
        mixed[4] = -1e308
        for kernel in [huge, mixed] {
            let result = try ConvolutionImageProcessor(kernel: kernel, columns: 3, normalize: false).process(image)
            #expect(result.pixelSize == image.pixelSize)
            #expect(result.pixel(x: 2, y: 2).red == 255 || result.pixel(x: 2, y: 2).red == 0)
        }
    }

    @Test("colour does not bleed out of transparent pixels (premultiplied alpha)")
    func premultiplied() throws {
        // Left half transparent red, right half opaque blue.
        let image = Synthetic.image(width: 8, height: 3) { x, _ in
            x < 4 ? RGBA(red: 255, green: 0, blue: 0, alpha: 0) : RGBA(red: 0, green: 0, blue: 255)
        }
        let result = try BlurImageProcessor(blurRadius: 1.5).process(image)
        for x in 0..<8 {
            let pixel = result.pixel(x: x, y: 1)
            if pixel.alpha > 0 { #expect(pixel.red == 0 && pixel.blue == 255, "x \(x): \(pixel)") }
        }
        #expect(result.pixel(x: 3, y: 1).alpha > 0 && result.pixel(x: 3, y: 1).alpha < 255)
        #expect(result.pixel(x: 4, y: 1).alpha < 255)
        #expect(result.pixel(x: 0, y: 1).alpha < 20)
    }

    @Test("radius 0 is the identity; a kernel far wider than the image gives nearly the mean colour")
    func extremes() throws {
        let image = Synthetic.gradient(width: 5, height: 4)
        #expect(try BlurImageProcessor(blurRadius: 0).process(image) == image)
        let halves = Synthetic.image(width: 6, height: 2) { x, _ in x < 3 ? .black : .white }
        let flat = try BlurImageProcessor(blurRadius: BlurImageProcessor.maximumRadius).process(halves)
        // Edge clamping weighs each half by about 0.5; the taps inside the image tilt it by
        // under 1% towards the pixel's own half.
        for x in 0..<6 {
            let red = Int(flat.pixel(x: x, y: 0).red)
            #expect(abs(red - 128) <= 3, "x \(x): \(red)")
        }
        #expect(flat.pixel(x: 0, y: 0).red < flat.pixel(x: 5, y: 0).red)
        let reason = invalidParameter { () throws(AlcedoError) in try BlurImageProcessor(blurRadius: 250.5).process(image) }
        #expect(reason?.message.contains("at most 250") == true)
    }

    /// Its own row and column passes give, byte for byte, what two ConvolutionImageProcessor
    /// passes give: opaque and translucent pictures, a radius past the picture's sides, two frames.
    @Test("KernelBlurImageProcessor equals a row and a column ConvolutionImageProcessor", arguments: [(1, 0.0), (4, 2.5), (40, 0.0)])
    func kernelBlurIsTheConvolution(radius: Int, sigma: Double) throws {
        for translucent in [false, true] {
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15 &* UInt64(radius + 1)
            func byte() -> UInt8 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: state >> 56)
            }
            let width = 37, height = 23
            let frames = (0..<2).map { _ in
                AlcedoImage.Frame(pixels: (0..<(width * height * 4)).map { index in
                    index % 4 == 3 && !translucent ? 255 : byte()
                }, duration: 0.1)
            }
            let image = AlcedoImage(width: width, height: height, frames: frames)
            let blur = KernelBlurImageProcessor(radius: radius, sigma: sigma)
            let kernel = try #require(blur.kernel)
            let rows = try ConvolutionImageProcessor(kernel: kernel, columns: kernel.count).process(image)
            let expected = try ConvolutionImageProcessor(kernel: kernel, columns: 1).process(rows)
            let blurred = try blur.process(image)
            let same = blurred.frames.map(\.pixels) == expected.frames.map(\.pixels)
            #expect(same, "radius \(radius), translucent \(translucent)")
        }
    }

    @Test("KernelBlurImageProcessor: thumbor's Gaussian cut at the radius, rows then columns")
    func kernelBlur() throws {
        let image = Self.dot(size: 21)
        let blurred = try KernelBlurImageProcessor(radius: 3, sigma: 2).process(image)
        // The dot spreads to 3 pixels each way and no further, symmetrically.
        #expect(blurred.pixel(x: 10, y: 10).red > blurred.pixel(x: 11, y: 10).red)
        #expect(blurred.pixel(x: 11, y: 10).red == blurred.pixel(x: 9, y: 10).red)
        #expect(blurred.pixel(x: 10, y: 13).red == blurred.pixel(x: 13, y: 10).red)
        #expect(blurred.pixel(x: 13, y: 10).red > 0)
        #expect(blurred.pixel(x: 14, y: 10).red == 0 && blurred.pixel(x: 10, y: 14).red == 0)
        // The default σ is the radius; one far larger than the radius makes an even box.
        #expect(KernelBlurImageProcessor(radius: 200).sigma == 200 && KernelBlurImageProcessor(radius: 200).radius == 150)
        let box = try #require(KernelBlurImageProcessor(radius: 2, sigma: 10_000).kernel)
        let even = box.allSatisfy { abs($0 - box[2]) < 1e-6 * box[2] }
        #expect(box.count == 5 && even)
        #expect(try KernelBlurImageProcessor(radius: 0).process(image).frames[0].pixels == image.frames[0].pixels)
        #expect(KernelBlurImageProcessor(radius: 3, sigma: 2).identifier == "com.alcedo.kernelBlur(3,2.0)")
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Blurs the image as thumbor's `blur(radius,sigma)` filter does: a Gaussian of standard
/// deviation `sigma` sampled at whole pixels out to `radius` on each side (cut there, not at
/// 3σ), normalised, applied as a row kernel and then a column kernel, each pass truncating and
/// clamping to 8 bits (two ``ConvolutionImageProcessor`` passes, edge pixels repeated).
///
/// The cut matters: thumbor's default `sigma` is the radius, so the kernel ends at 1σ and
/// blurs less than ``BlurImageProcessor``'s Gaussian of that σ; a `sigma` much larger than the
/// radius makes it an even box of `2 * radius + 1` pixels. Alpha is blurred too when the image
/// has transparent pixels. Cost: `2 * radius + 1` multiply-adds per pixel and channel, twice.
///
/// Identifier: `com.alcedo.kernelBlur(<radius>,<sigma>)`.
public struct KernelBlurImageProcessor: ImageProcessor {
    /// The kernel's reach on each side, in pixels, 0...``maximumRadius``.
    public let radius: Int
    /// The Gaussian's standard deviation; its sign is ignored.
    public let sigma: Double

    /// thumbor's `MAX_RADIUS`: 150.
    public static let maximumRadius = 150

    /// Creates the processor.
    /// - Parameters:
    ///   - radius: the reach on each side, held to 0...150 (0 leaves the image unchanged).
    ///   - sigma: the standard deviation (default 0: the radius as given, before it is held to 150, as thumbor).
    public init(radius: Int, sigma: Double = 0) {
        self.sigma = sigma == 0 ? Double(radius) : sigma
        self.radius = max(0, min(Self.maximumRadius, radius))
    }

    /// `com.alcedo.kernelBlur(<radius>,<sigma>)`.
    public var identifier: String {
        ProcessorSupport.identifier("kernelBlur", [String(radius), ProcessorSupport.number(sigma)])
    }

    /// thumbor's `generate_1d_matrix`: `e^(-x² / 2σ²) / √(2σ²π)` for x in -radius...radius;
    /// `nil` when 2σ² is 0 or not finite.
    public var kernel: [Double]? {
        let twoSigmaSquared = 2 * sigma * sigma
        guard twoSigmaSquared > 0, twoSigmaSquared.isFinite else { return nil }
        let scale = (twoSigmaSquared * Double.pi).squareRoot()
        return (-radius...radius).map { x in exp(-Double(x * x) / twoSigmaSquared) / scale }
    }

    /// Blurs every frame: rows, then columns. The same arithmetic as two
    /// ``ConvolutionImageProcessor`` passes (a row kernel, then a column kernel: sums in `Double`
    /// in kernel order, truncated and clamped to 8 bits, edge pixels repeated; alpha only when
    /// the image has transparent pixels), byte for byte, with no allocation per pixel.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        guard radius > 0, let kernel else { return image }
        let sum = kernel.reduce(0, +)
        let weights = sum != 0 ? kernel.map { $0 / sum } : kernel
        let width = image.width, height = image.height, blursAlpha = image.hasAlpha
        return image.mappingFrames { pixels in
            let rows = Self.pass(pixels, width: width, height: height, weights: weights, horizontal: true, blursAlpha: blursAlpha)
            return Self.pass(rows, width: width, height: height, weights: weights, horizontal: false, blursAlpha: blursAlpha)
        }
    }

    /// One pass of `weights` (odd count, centred) along rows or columns.
    static func pass(_ pixels: [UInt8], width: Int, height: Int, weights: [Double], horizontal: Bool, blursAlpha: Bool) -> [UInt8] {
        var out = pixels
        let reach = weights.count / 2
        let length = horizontal ? width : height, lines = horizontal ? height : width
        // The distance in bytes between neighbours along the pass, and between lines.
        let step = horizontal ? 4 : width * 4, lineStep = horizontal ? width * 4 : 4
        // One line at a time, its pixels as Doubles with `reach` edge copies on each side.
        var padded = [SIMD4<Double>](repeating: .zero, count: length + 2 * reach)
        pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                weights.withUnsafeBufferPointer { weights in
                    padded.withUnsafeMutableBufferPointer { line in
                        for lineIndex in 0..<lines {
                            let base = lineIndex * lineStep
                            for slot in 0..<line.count {
                                let at = base + max(0, min(length - 1, slot - reach)) * step
                                line[slot] = SIMD4(Double(source[at]), Double(source[at + 1]), Double(source[at + 2]), Double(source[at + 3]))
                            }
                            for position in 0..<length {
                                var sums = SIMD4<Double>(repeating: 0)
                                for tap in 0..<weights.count { sums += line[position + tap] * weights[tap] }
                                let index = base + position * step
                                // Clamped as a Double, truncated toward zero (NaN is 0), as the convolution does.
                                for channel in 0..<(blursAlpha ? 4 : 3) {
                                    let value = sums[channel]
                                    target[index + channel] = UInt8(value > 0 ? min(value, 255) : 0)
                                }
                            }
                        }
                    }
                }
            }
        }
        return out
    }
}

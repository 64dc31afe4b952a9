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

    /// Blurs every frame: rows, then columns.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        guard radius > 0, let kernel else { return image }
        let rows = try ConvolutionImageProcessor(kernel: kernel, columns: kernel.count).process(image)
        return try ConvolutionImageProcessor(kernel: kernel, columns: 1).process(rows)
    }
}

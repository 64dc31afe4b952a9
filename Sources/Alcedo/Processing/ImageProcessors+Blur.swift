#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Blurs the image with a true Gaussian.
///
/// `blurRadius` is the Gaussian's standard deviation in pixels (σ = `blurRadius`, as
/// CoreImage's `CIGaussianBlur` and Kingfisher use the radius). The kernel is sampled at whole
/// pixels out to ⌈3σ⌉ on each side, normalised to sum to 1, and applied separably (rows, then
/// columns) to premultiplied colour, so transparent pixels never bleed their colour. Outside
/// the image the edge pixels repeat (edge clamp), so a constant image stays constant and the
/// borders do not darken. A radius of 0 returns the image unchanged.
///
/// Cost: below σ = 6 (or on a picture under 32 pixels on its longest side), 2⌈3σ⌉+1
/// multiply-adds per pixel and pass (fewer when the image is smaller than the kernel), with
/// 2⌈3σ⌉+1 rows of 16 bytes per pixel as working memory. From σ = 6 on, the cost no longer
/// grows with σ: the picture is averaged down by ⌊σ/3⌋, blurred
/// there with the exact kernel and brought back by bilinear interpolation, the three steps
/// together spreading a point with the Gaussian's variance σ² (the result stays within a few
/// levels of the exact Gaussian; see ``ScaledGaussianBlur``). The radius is limited to
/// ``maximumRadius``.
///
/// Identifier: `com.alcedo.blur(<radius>)`, for example `com.alcedo.blur(4.0)`.
public struct BlurImageProcessor: ImageProcessor {
    /// The largest accepted ``blurRadius``: 250 pixels (a kernel of 1,501 taps).
    public static let maximumRadius = 250.0

    /// The Gaussian's standard deviation σ in pixels.
    public let blurRadius: Double

    /// Creates a blur processor.
    /// - Parameter blurRadius: σ of the Gaussian in pixels, in `0...250` (0 is no blur).
    public init(blurRadius: Double) {
        self.blurRadius = blurRadius
    }

    /// Names the processor and its parameters: `com.alcedo.blur(<radius>)`.
    public var identifier: String {
        ProcessorSupport.identifier("blur", [ProcessorSupport.number(blurRadius)])
    }

    /// Blurs every frame. Throws `.invalidParameter` for a radius that is negative, not
    /// finite or over ``maximumRadius``.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        try ProcessorSupport.requireNonNegative(blurRadius, "blurRadius", in: "BlurImageProcessor")
        guard blurRadius <= Self.maximumRadius else {
            throw ProcessorSupport.invalid("BlurImageProcessor",
                                           "blurRadius must be at most \(Self.maximumRadius), got \(blurRadius)")
        }
        guard blurRadius > 0 else { return image }
        let longestSide = max(image.width, image.height)
        if ScaledGaussianBlur.applies(sigma: blurRadius, longestSide: longestSide) {
            let scaled = ScaledGaussianBlur(sigma: blurRadius, longestSide: longestSide)
            return image.mappingFrames { pixels in scaled.blur(pixels, width: image.width, height: image.height) }
        }
        let kernel = GaussianKernel(sigma: blurRadius, longestSide: max(image.width, image.height))
        return image.mappingFrames { pixels in
            kernel.blur(pixels, width: image.width, height: image.height)
        }
    }
}

/// A normalised, sampled Gaussian and the separable edge-clamped convolution with it.
struct GaussianKernel {
    /// `weights[m]`: the weight of the taps at distance `m`, for `m` in `0...reach`.
    let weights: [Float]
    /// `tails[m]`: the total weight of the taps at distance `m` or more on one side, for `m`
    /// in `0...reach + 1` (what edge clamping folds onto an edge pixel).
    let tails: [Float]
    /// The largest tap distance kept apart: ⌈3σ⌉, or the image's longest side when the kernel
    /// is wider than the image (farther taps land beyond every edge and only count in `tails`).
    let reach: Int

    init(sigma: Double, longestSide: Int) {
        let extent = (3 * sigma).rounded(.up)
        let reach = extent > Double(longestSide) ? longestSide : Int(extent)
        // The centre tap is 1 whatever σ: for a σ whose square underflows (1e-200), 0 / 0 would
        // make every weight NaN; the other taps are then exp(-∞) = 0, the identity.
        var raw = (0...reach).map { m in m == 0 ? 1 : exp(-Double(m * m) / (2 * sigma * sigma)) }
        // Taps between `reach` and ⌈3σ⌉ (only when the kernel is wider than the image):
        // the midpoint-rule integral of the Gaussian over them.
        var beyond = 0.0
        if Double(reach) < extent {
            let scale = sigma * 2.0.squareRoot()
            beyond = sigma * (Double.pi / 2).squareRoot()
                * (erfc((Double(reach) + 0.5) / scale) - erfc((extent + 0.5) / scale))
        }
        let total = raw[0] + 2 * (raw.dropFirst().reduce(0, +) + beyond)
        raw = raw.map { $0 / total }
        var tails = [Double](repeating: 0, count: reach + 2)
        tails[reach + 1] = beyond / total
        for m in stride(from: reach, through: 0, by: -1) { tails[m] = raw[m] + tails[m + 1] }
        self.reach = reach
        self.weights = raw.map { Float($0) }
        self.tails = tails.map { Float($0) }
    }

    /// The weights of the taps landing beyond the start and the end of a line of `count`
    /// samples, seen from sample `index`: they fold onto the first and last sample.
    @inline(__always)
    private func edgeWeights(index: Int, count: Int) -> (first: Float, last: Float) {
        (tails[min(index + 1, reach + 1)], tails[min(count - index, reach + 1)])
    }

    /// Blurs one frame of RGBA8 (straight alpha) pixels.
    func blur(_ pixels: [UInt8], width: Int, height: Int) -> [UInt8] {
        // Rows blurred horizontally, kept in a ring of the rows the vertical pass can reach.
        let ringRows = min(2 * reach + 1, height)
        let ring = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: ringRows * width)
        let line = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: width)
        let sum = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: width)
        ring.initialize(repeating: .zero, count: ringRows * width)
        line.initialize(repeating: .zero, count: width)
        sum.initialize(repeating: .zero, count: width)
        defer {
            ring.deallocate()
            line.deallocate()
            sum.deallocate()
        }
        return pixels.withUnsafeBufferPointer { source in
            PixelOps.makeBuffer(count: pixels.count) { destination in
                guard let src = source.baseAddress else { return }
                weights.withUnsafeBufferPointer { w in
                    var nextRow = 0
                    for y in 0..<height {
                        while nextRow < height && nextRow <= y + reach {
                            blurRow(src + nextRow * width * 4, width: width, weights: w, line: line,
                                    into: ring + (nextRow % ringRows) * width)
                            nextRow += 1
                        }
                        blurColumn(y: y, width: width, height: height, weights: w, ring: ring,
                                   ringRows: ringRows, sum: sum)
                        let out = destination + y * width * 4
                        for x in 0..<width { PixelOps.storePremultiplied(sum[x], to: out + x * 4) }
                    }
                }
            }
        }
    }

    /// Premultiplies one row of RGBA8 into `line`, then writes its horizontal blur to `output`.
    @inline(__always)
    private func blurRow(_ row: UnsafePointer<UInt8>, width: Int, weights w: UnsafeBufferPointer<Float>,
                         line: UnsafeMutablePointer<SIMD4<Float>>, into output: UnsafeMutablePointer<SIMD4<Float>>) {
        for x in 0..<width { line[x] = PixelOps.premultiplied(row + x * 4) }
        for x in 0..<width {
            if x >= reach && x + reach < width {
                // Every tap inside the row: the kernel is symmetric, pair the taps.
                var total = line[x] * w[0]
                var m = 1
                while m <= reach {
                    total += (line[x - m] + line[x + m]) * w[m]
                    m += 1
                }
                output[x] = total
            } else {
                let (first, last) = edgeWeights(index: x, count: width)
                var total = line[0] * first + line[width - 1] * last
                for j in max(0, x - reach)...min(width - 1, x + reach) { total += line[j] * w[abs(j - x)] }
                output[x] = total
            }
        }
    }

    /// Writes to `sum` the vertical blur at row `y` of the horizontally blurred rows in `ring`.
    @inline(__always)
    private func blurColumn(y: Int, width: Int, height: Int, weights w: UnsafeBufferPointer<Float>,
                            ring: UnsafeMutablePointer<SIMD4<Float>>, ringRows: Int,
                            sum: UnsafeMutablePointer<SIMD4<Float>>) {
        let centre = ring + (y % ringRows) * width
        let w0 = w[0]
        for x in 0..<width { sum[x] = centre[x] * w0 }
        if y >= reach && y + reach < height {
            // Every tap inside the image: pair the rows at the same distance.
            var m = 1
            while m <= reach {
                let above = ring + ((y - m) % ringRows) * width
                let below = ring + ((y + m) % ringRows) * width
                let weight = w[m]
                for x in 0..<width { sum[x] += (above[x] + below[x]) * weight }
                m += 1
            }
            return
        }
        let (first, last) = edgeWeights(index: y, count: height)
        for j in max(0, y - reach)...min(height - 1, y + reach) {
            var weight = j == y ? 0 : w[abs(j - y)]
            // Edge taps fold onto the first and last rows, which are in reach whenever they are non-zero.
            if j == 0 { weight += first }
            if j == height - 1 { weight += last }
            let row = ring + (j % ringRows) * width
            for x in 0..<width { sum[x] += row[x] * weight }
        }
    }
}

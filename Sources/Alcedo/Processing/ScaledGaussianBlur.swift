/// A Gaussian blur of large σ at a cost independent of σ: the picture is averaged down by an
/// integer factor `k` (k x k boxes, premultiplied), blurred there with the exact
/// ``GaussianKernel`` of σ' = √(σ² − k²/4) / k (about 3 pixels), and brought back to full
/// size by bilinear interpolation (premultiplied).
///
/// The box average adds a variance of (k² − 1)/12 and the bilinear interpolation k²/6 (a
/// triangle of half-width k), so the three steps together spread a point with the variance
/// σ² of the Gaussian asked for (to within 1/12 of a pixel²), and the shape is that of a
/// Gaussian convolved with two narrow kernels (k ≤ σ/3): close to the Gaussian itself. Cost:
/// a few operations per full-size pixel whatever σ, plus the exact blur of a picture k² times
/// smaller (σ' between 3 and 4 pixels there, or larger on a picture only 16 to 31 reduced
/// pixels long, where the exact kernel is cut at that side); memory: the small picture and a
/// few rows.
struct ScaledGaussianBlur {
    /// From this σ on, ``BlurImageProcessor`` blurs through a smaller picture (below it the
    /// exact kernel has at most 2⌈3σ⌉+1 = 37 taps).
    static let threshold = 6.0
    /// Pictures whose longest side is below this are blurred exactly whatever σ: the exact
    /// kernel is cut at the picture's side, so it costs at most 2 x 31 + 1 taps a pixel.
    static let minimumSide = 32

    let sigma: Double
    /// The reduction factor: ⌊σ/3⌋, at least 2, and at most a sixteenth of the longest side,
    /// so that the reduced picture keeps at least 16 pixels along it.
    let factor: Int

    init(sigma: Double, longestSide: Int = .max) {
        self.sigma = sigma
        factor = max(2, min(Int((sigma / 3).rounded(.down)), longestSide / 16))
    }

    /// Whether a blur of `sigma` over a picture whose longest side is `longestSide` goes
    /// through a reduced picture.
    static func applies(sigma: Double, longestSide: Int) -> Bool {
        sigma >= threshold && longestSide >= minimumSide
    }

    /// σ of the exact blur applied to the reduced picture, in its pixels.
    var reducedSigma: Double {
        let k = Double(factor)
        return (sigma * sigma - k * k / 4).squareRoot() / k
    }

    /// Blurs one frame of RGBA8 (straight alpha) pixels.
    func blur(_ pixels: [UInt8], width: Int, height: Int) -> [UInt8] {
        let k = factor
        let smallWidth = (width + k - 1) / k
        let smallHeight = (height + k - 1) / k
        let small = reduce(pixels, width: width, height: height, smallWidth: smallWidth, smallHeight: smallHeight)
        let kernel = GaussianKernel(sigma: reducedSigma, longestSide: max(smallWidth, smallHeight))
        let blurred = kernel.blur(small, width: smallWidth, height: smallHeight)
        return enlarge(blurred, smallWidth: smallWidth, smallHeight: smallHeight, width: width, height: height)
    }

    /// The k x k box averages (premultiplied; a partial box at the right or bottom edge is the
    /// average of the pixels it has), as straight RGBA8.
    private func reduce(_ pixels: [UInt8], width: Int, height: Int, smallWidth: Int, smallHeight: Int) -> [UInt8] {
        let k = factor
        let sums = UnsafeMutableBufferPointer<SIMD4<Float>>.allocate(capacity: smallWidth)
        defer { sums.deallocate() }
        return pixels.withUnsafeBufferPointer { source in
            PixelOps.makeBuffer(count: smallWidth * smallHeight * 4) { destination in
                guard let src = source.baseAddress else { return }
                for sy in 0..<smallHeight {
                    sums.initialize(repeating: .zero)
                    let firstRow = sy * k
                    let rows = min(k, height - firstRow)
                    for y in firstRow..<(firstRow + rows) {
                        let row = src + y * width * 4
                        for sx in 0..<smallWidth {
                            var total = SIMD4<Float>.zero
                            for x in (sx * k)..<min(sx * k + k, width) { total += PixelOps.premultiplied(row + x * 4) }
                            sums[sx] += total
                        }
                    }
                    for sx in 0..<smallWidth {
                        let columns = min(k, width - sx * k)
                        PixelOps.storePremultiplied(sums[sx] / Float(rows * columns), to: destination + (sy * smallWidth + sx) * 4)
                    }
                }
            }
        }
    }

    /// Bilinear interpolation (premultiplied) of the reduced picture back to `width` x `height`:
    /// full-size pixel x samples the reduced picture at (x + 0.5) / k − 0.5, clamped to its edges.
    private func enlarge(_ small: [UInt8], smallWidth: Int, smallHeight: Int, width: Int, height: Int) -> [UInt8] {
        let k = Float(factor)
        func taps(_ index: Int, count: Int) -> (first: Int, second: Int, fraction: Float) {
            let position = min(max((Float(index) + 0.5) / k - 0.5, 0), Float(count - 1))
            let first = Int(position)
            return (first, min(first + 1, count - 1), position - Float(first))
        }
        let columns = (0..<width).map { taps($0, count: smallWidth) }
        let upper = UnsafeMutableBufferPointer<SIMD4<Float>>.allocate(capacity: smallWidth)
        let lower = UnsafeMutableBufferPointer<SIMD4<Float>>.allocate(capacity: smallWidth)
        let mixed = UnsafeMutableBufferPointer<SIMD4<Float>>.allocate(capacity: smallWidth)
        defer {
            upper.deallocate()
            lower.deallocate()
            mixed.deallocate()
        }
        var upperRow = -1, lowerRow = -1
        return small.withUnsafeBufferPointer { source in
            PixelOps.makeBuffer(count: width * height * 4) { destination in
                guard let src = source.baseAddress else { return }
                func load(_ row: Int, into buffer: UnsafeMutableBufferPointer<SIMD4<Float>>) {
                    let start = src + row * smallWidth * 4
                    for x in 0..<smallWidth { buffer[x] = PixelOps.premultiplied(start + x * 4) }
                }
                for y in 0..<height {
                    let (first, second, fy) = taps(y, count: smallHeight)
                    if upperRow != first { load(first, into: upper); upperRow = first }
                    if lowerRow != second { load(second, into: lower); lowerRow = second }
                    for x in 0..<smallWidth { mixed[x] = upper[x] + (lower[x] - upper[x]) * fy }
                    let out = destination + y * width * 4
                    for x in 0..<width {
                        let (a, b, fx) = columns[x]
                        PixelOps.storePremultiplied(mixed[a] + (mixed[b] - mixed[a]) * fx, to: out + x * 4)
                    }
                }
            }
        }
    }
}

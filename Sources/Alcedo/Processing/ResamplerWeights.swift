import Foundation

/// The Lanczos3 weights of every output pixel along one axis, computed once per resize and
/// shared by every row (or column) and every frame.
///
/// Output pixel `i` covers the input interval `[i * scale, (i + 1) * scale)` with
/// `scale = extent / outputCount`; its centre is `(i + 0.5) * scale`. When shrinking, the
/// kernel is stretched by `scale` (support `3 * scale` input pixels on each side), so every
/// input pixel contributes; when enlarging, the support stays 3 input pixels. A window that
/// runs past either edge of the input is cut at the edge and the remaining weights are
/// normalised to sum to 1, so edge pixels are neither darkened nor brightened.
///
/// `extent` may be smaller than `inputCount` by less than one pixel: after a box pre-shrink
/// whose factor does not divide the size, the last input pixel averages a partial block and
/// the picture ends at `extent`, not at `inputCount`. That pixel is then placed at the centre
/// of the part it covers and its weight scaled by that part, so a thin leftover strip of
/// the source counts for what it is, not for a whole pixel.
struct ResamplerWeights: Sendable, Equatable {
    /// The Lanczos radius `a`: the kernel is `sinc(x) * sinc(x / a)` for `|x| < a`.
    static let radius = 3.0

    /// Number of input pixels along the axis.
    let inputCount: Int
    /// Number of output pixels along the axis.
    let outputCount: Int
    /// Slots reserved per output pixel in ``values`` (the widest window).
    let stride: Int
    /// The first input pixel of each output pixel's window.
    let starts: [Int]
    /// The number of input pixels in each output pixel's window, `1...stride`.
    let counts: [Int]
    /// `outputCount * stride` weights; slots past a window's count are zero.
    let values: [Float]

    /// Computes the weights for `outputCount` pixels from `inputCount` input pixels whose
    /// picture spans `extent` pixels (default: all of them).
    init(inputCount: Int, outputCount: Int, extent: Double? = nil) {
        let inputCount = max(1, inputCount)
        let outputCount = max(1, outputCount)
        let extent = min(max(extent ?? Double(inputCount), 1), Double(inputCount))
        self.inputCount = inputCount
        self.outputCount = outputCount

        if inputCount == outputCount && extent == Double(inputCount) {
            // Same size: every output pixel is its input pixel.
            stride = 1
            starts = Array(0..<outputCount)
            counts = Array(repeating: 1, count: outputCount)
            values = Array(repeating: 1, count: outputCount)
            return
        }

        let scale = extent / Double(outputCount)
        let filterScale = max(scale, 1)
        let support = Self.radius * filterScale
        let inverseFilterScale = 1 / filterScale
        let stride = min(Int(support.rounded(.up)) * 2 + 1, inputCount)
        var starts = [Int](repeating: 0, count: outputCount)
        var counts = [Int](repeating: 0, count: outputCount)
        var values = [Float](repeating: 0, count: outputCount * stride)
        var window = [Double](repeating: 0, count: stride)
        let lastCoverage = min(max(extent - Double(inputCount - 1), 0), 1)

        for output in 0..<outputCount {
            let center = (Double(output) + 0.5) * scale
            let first = min(max(Int((center - support + 0.5).rounded(.down)), 0), inputCount - 1)
            let end = min(max(Int((center + support + 0.5).rounded(.down)), first + 1), inputCount)
            let count = min(end - first, stride)
            var sum = 0.0
            for tap in 0..<count {
                let input = first + tap
                let weight: Double
                if input == inputCount - 1 && lastCoverage < 1 {
                    // A partial box: centred on the part it covers, weighted by its size.
                    weight = lastCoverage * Self.lanczos((Double(input) + lastCoverage / 2 - center) * inverseFilterScale)
                } else {
                    weight = Self.lanczos((Double(input) - center + 0.5) * inverseFilterScale)
                }
                window[tap] = weight
                sum += weight
            }
            let base = output * stride
            if abs(sum) > 1e-12 {
                for tap in 0..<count { values[base + tap] = Float(window[tap] / sum) }
            } else {
                // No weight survived the edge cut: take the nearest input pixel.
                let nearest = min(max(Int(center.rounded(.down)), first), first + count - 1)
                values[base + nearest - first] = 1
            }
            starts[output] = first
            counts[output] = count
        }
        self.stride = stride
        self.starts = starts
        self.counts = counts
        self.values = values
    }

    /// The Lanczos3 kernel, `sinc(x) * sinc(x / 3)` inside `(-3, 3)` and 0 outside.
    static func lanczos(_ x: Double) -> Double {
        if x == 0 { return 1 }
        guard abs(x) < radius else { return 0 }
        let angle = Double.pi * x
        return radius * sin(angle) * sin(angle / radius) / (angle * angle)
    }

    /// `true` when every output pixel is exactly its input pixel.
    var isIdentity: Bool { stride == 1 && inputCount == outputCount }

    /// Runs `body` with unchecked views of the tables (valid only inside `body`).
    func withTable<R>(_ body: (Table) -> R) -> R {
        starts.withUnsafeBufferPointer { starts in
            counts.withUnsafeBufferPointer { counts in
                values.withUnsafeBufferPointer { values in
                    body(Table(starts: starts, counts: counts, values: values, stride: stride))
                }
            }
        }
    }

    /// Borrowed views of the weight tables for the inner loops.
    struct Table {
        let starts: UnsafeBufferPointer<Int>
        let counts: UnsafeBufferPointer<Int>
        let values: UnsafeBufferPointer<Float>
        let stride: Int

        /// Filters one row of premultiplied pixels: `output[i] = Σ input[start + k] * w[k]`.
        @inline(__always)
        func filterRow(_ input: UnsafeBufferPointer<SIMD4<Float>>, into output: UnsafeMutableBufferPointer<SIMD4<Float>>) {
            for index in 0..<starts.count {
                let start = starts[index]
                let base = index &* stride
                var sum = SIMD4<Float>()
                for tap in 0..<counts[index] {
                    sum += input[start &+ tap] * SIMD4(repeating: values[base &+ tap])
                }
                output[index] = sum
            }
        }

        /// Filters output pixel row `row` from a ring of `rows` input rows of `width` pixels,
        /// input row `r` in slot `r % rows`: `output[x] = Σ input[start + k][x] * w[k]`,
        /// row by row so every read is sequential.
        @inline(__always)
        func filterColumns(_ ring: UnsafeBufferPointer<SIMD4<Float>>, width: Int, rows: Int, output row: Int,
                           into output: UnsafeMutableBufferPointer<SIMD4<Float>>) {
            let start = starts[row]
            let base = row &* stride
            for tap in 0..<counts[row] {
                let weight = SIMD4(repeating: values[base &+ tap])
                let slot = (start &+ tap) % rows
                let source = UnsafeBufferPointer(rebasing: ring[(slot &* width)..<((slot &+ 1) &* width)])
                if tap == 0 {
                    for x in 0..<width { output[x] = source[x] * weight }
                } else {
                    for x in 0..<width { output[x] += source[x] * weight }
                }
            }
        }
    }
}

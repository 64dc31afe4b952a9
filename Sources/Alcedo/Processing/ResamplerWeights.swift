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
    /// Number of output pixels along the axis (of the whole output, when only some are computed).
    let outputCount: Int
    /// Slots reserved per output pixel in ``values`` (the widest window).
    let stride: Int
    /// The first input pixel of each computed output pixel's window (a plan may count them from
    /// the first input pixel it reads).
    var starts: [Int]
    /// The number of input pixels in each computed output pixel's window, `1...stride`.
    let counts: [Int]
    /// `stride` weights per computed output pixel; slots past a window's count are zero.
    let values: [Float]

    /// Computes the weights for `outputCount` pixels from `inputCount` input pixels whose
    /// picture spans `extent` pixels (default: all of them).
    ///
    /// With `outputs` (ascending indices below `outputCount`), only those output pixels are
    /// computed, in that order: each one's weights are exactly those of the whole axis, which
    /// is what lets a window of the output be computed alone, equal to the whole cut.
    init(inputCount: Int, outputCount: Int, extent: Double? = nil, outputs: [Int]? = nil) {
        let inputCount = max(1, inputCount)
        let outputCount = max(1, outputCount)
        let extent = min(max(extent ?? Double(inputCount), 1), Double(inputCount))
        let computed = outputs?.count ?? outputCount
        self.inputCount = inputCount
        self.outputCount = outputCount

        if inputCount == outputCount && extent == Double(inputCount) {
            // Same size: every output pixel is its input pixel.
            stride = 1
            starts = outputs ?? Array(0..<outputCount)
            counts = Array(repeating: 1, count: computed)
            values = Array(repeating: 1, count: computed)
            return
        }

        let scale = extent / Double(outputCount)
        let filterScale = max(scale, 1)
        let support = Self.radius * filterScale
        let inverseFilterScale = 1 / filterScale
        let stride = min(Int(support.rounded(.up)) * 2 + 1, inputCount)
        var starts = [Int](repeating: 0, count: computed)
        var counts = [Int](repeating: 0, count: computed)
        var values = [Float](repeating: 0, count: computed * stride)
        var window = [Double](repeating: 0, count: stride)
        let lastCoverage = min(max(extent - Double(inputCount - 1), 0), 1)

        for slot in 0..<computed {
            let output = outputs?[slot] ?? slot
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
            let base = slot * stride
            if abs(sum) > 1e-12 {
                for tap in 0..<count { values[base + tap] = Float(window[tap] / sum) }
            } else {
                // No weight survived the edge cut: take the nearest input pixel.
                let nearest = min(max(Int(center.rounded(.down)), first), first + count - 1)
                values[base + nearest - first] = 1
            }
            starts[slot] = first
            counts[slot] = count
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
        // One sine: sin(3θ) = sin θ (3 - 4 sin² θ) with θ = angle / 3.
        let third = sin(angle / radius)
        return radius * third * (3 - 4 * third * third) * third / (angle * angle)
    }

    /// `true` when every output pixel is exactly its input pixel.
    var isIdentity: Bool { stride == 1 && inputCount == outputCount }

    /// The input pixels the computed output pixels read: from the first window's start to
    /// the last window's end (windows move forward with the output).
    var inputSpan: Range<Int> {
        guard let first = starts.first else { return 0..<0 }
        var end = first
        for index in starts.indices { end = Swift.max(end, starts[index] + counts[index]) }
        return first..<end
    }

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
        ///
        /// `input` must hold ``stride`` readable pixels past the last input pixel (zeros):
        /// four output pixels are computed together, each over the largest count of the four
        /// (the slots past a window's count have weight zero), so that their four sums run
        /// side by side instead of each waiting on its own additions. Each sum still adds its
        /// taps in order, and a zero-weight tap adds exactly zero, so the result is the same,
        /// bit for bit, as one pixel at a time over its own count.
        @inline(__always)
        func filterRow(_ input: UnsafeBufferPointer<SIMD4<Float>>, into output: UnsafeMutableBufferPointer<SIMD4<Float>>) {
            let count = starts.count
            let stride = self.stride
            var index = 0
            while index &+ 4 <= count {
                let start0 = starts[index], start1 = starts[index &+ 1]
                let start2 = starts[index &+ 2], start3 = starts[index &+ 3]
                let base0 = index &* stride
                let taps = Swift.max(Swift.max(counts[index], counts[index &+ 1]), Swift.max(counts[index &+ 2], counts[index &+ 3]))
                var sum0 = SIMD4<Float>(), sum1 = SIMD4<Float>(), sum2 = SIMD4<Float>(), sum3 = SIMD4<Float>()
                for tap in 0..<taps {
                    sum0 += input[start0 &+ tap] * SIMD4(repeating: values[base0 &+ tap])
                    sum1 += input[start1 &+ tap] * SIMD4(repeating: values[base0 &+ stride &+ tap])
                    sum2 += input[start2 &+ tap] * SIMD4(repeating: values[base0 &+ 2 &* stride &+ tap])
                    sum3 += input[start3 &+ tap] * SIMD4(repeating: values[base0 &+ 3 &* stride &+ tap])
                }
                output[index] = sum0
                output[index &+ 1] = sum1
                output[index &+ 2] = sum2
                output[index &+ 3] = sum3
                index &+= 4
            }
            while index < count {
                let start = starts[index]
                let base = index &* stride
                var sum = SIMD4<Float>()
                for tap in 0..<counts[index] {
                    sum += input[start &+ tap] * SIMD4(repeating: values[base &+ tap])
                }
                output[index] = sum
                index &+= 1
            }
        }

        /// Filters output pixel row `row` from a ring of `rows` input rows of `width` pixels,
        /// input row `r` in slot `r % rows`: `output[x] = Σ input[start + k][x] * w[k]`,
        /// row by row so every read is sequential, up to four input rows per sweep so that
        /// each sum stays in a register across them (the taps are still added in order).
        @inline(__always)
        func filterColumns(_ ring: UnsafeBufferPointer<SIMD4<Float>>, width: Int, rows: Int, output row: Int,
                           into output: UnsafeMutableBufferPointer<SIMD4<Float>>) {
            let start = starts[row]
            let base = row &* stride
            let count = counts[row]
            @inline(__always) func source(_ tap: Int) -> UnsafePointer<SIMD4<Float>> {
                ring.baseAddress! + ((start &+ tap) % rows) &* width
            }
            @inline(__always) func weight(_ tap: Int) -> SIMD4<Float> { SIMD4(repeating: values[base &+ tap]) }
            let out = output.baseAddress!
            // Up to four taps per sweep over the row: each pixel's sum is kept in a register
            // across them and still adds the taps in order.
            var tap = 0
            while tap < count {
                let taps = Swift.min(4, count &- tap)
                let w0 = weight(tap), s0 = source(tap)
                switch taps {
                case 4:
                    let w1 = weight(tap &+ 1), w2 = weight(tap &+ 2), w3 = weight(tap &+ 3)
                    let s1 = source(tap &+ 1), s2 = source(tap &+ 2), s3 = source(tap &+ 3)
                    if tap == 0 {
                        for x in 0..<width { out[x] = ((s0[x] * w0 + s1[x] * w1) + s2[x] * w2) + s3[x] * w3 }
                    } else {
                        for x in 0..<width { out[x] = (((out[x] + s0[x] * w0) + s1[x] * w1) + s2[x] * w2) + s3[x] * w3 }
                    }
                case 3:
                    let w1 = weight(tap &+ 1), w2 = weight(tap &+ 2)
                    let s1 = source(tap &+ 1), s2 = source(tap &+ 2)
                    if tap == 0 {
                        for x in 0..<width { out[x] = (s0[x] * w0 + s1[x] * w1) + s2[x] * w2 }
                    } else {
                        for x in 0..<width { out[x] = ((out[x] + s0[x] * w0) + s1[x] * w1) + s2[x] * w2 }
                    }
                case 2:
                    let w1 = weight(tap &+ 1), s1 = source(tap &+ 1)
                    if tap == 0 {
                        for x in 0..<width { out[x] = s0[x] * w0 + s1[x] * w1 }
                    } else {
                        for x in 0..<width { out[x] = (out[x] + s0[x] * w0) + s1[x] * w1 }
                    }
                default:
                    if tap == 0 {
                        for x in 0..<width { out[x] = s0[x] * w0 }
                    } else {
                        for x in 0..<width { out[x] = out[x] + s0[x] * w0 }
                    }
                }
                tap &+= taps
            }
        }
    }
}

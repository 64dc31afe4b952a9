import CAlcedoCodecs
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Everything about resizing one size to another that does not depend on the pixels: the
/// box factors and the Lanczos3 weight tables. Built once, run on every frame.
///
/// A run splits the output rows into bands, each on its own core when the work is large
/// enough. A band makes the boxed rows (``ResamplerBox``) its output rows need, filters
/// them horizontally as they are made, then filters each output row vertically from them,
/// unpremultiplies, rounds and clamps to 8 bits. Each row is computed the same way
/// whichever band it falls in, so the result does not depend on the number of bands.
///
/// A plan may compute only some of the output: a window (a crop of the result) or a grid of
/// chosen columns and rows. Every output pixel depends only on its own weights and the boxed
/// pixels under them, so each one computed is exactly the pixel of the whole output. Only the
/// weights of those columns and rows are made, only the boxed rows their vertical windows
/// reach are boxed, and of those only the columns their horizontal windows reach.
struct ResamplerPlan: Sendable {
    /// How a run spreads its rows over cores.
    enum Concurrency: Sendable, Equatable {
        /// Bands on every core when the work is at least ``parallelWorkThreshold``.
        case automatic
        /// One band on the calling thread.
        case serial
        /// Exactly this many bands (at most one per row), run concurrently.
        case bands(Int)
    }

    /// Below this estimate of multiply-adds (about a quarter of a millisecond of work), a
    /// run stays on the calling thread: handing bands to other threads would cost more.
    static let parallelWorkThreshold = 1 << 18

    let source: PixelSize
    let target: PixelSize
    /// The box pre-shrink factors (1 when the axis is not box-shrunk).
    let boxX: Int
    let boxY: Int
    /// The size after the box pre-shrink.
    let boxed: PixelSize
    /// The weights of the computed columns, their starts counted from ``boxedColumns``' first.
    let horizontal: ResamplerWeights
    /// The weights of the computed rows (starts in boxed rows).
    let vertical: ResamplerWeights
    /// The size of what a run makes: the computed columns by the computed rows.
    let output: PixelSize
    /// The boxed columns the computed columns read.
    let boxedColumns: Range<Int>
    /// Whether the computed columns are boxed columns as they are (no horizontal filter).
    let copiesColumns: Bool

    /// A plan from `source` to `target`; both must be at least 1x1.
    init(from source: PixelSize, to target: PixelSize) {
        self.init(from: source, to: target, columns: nil, rows: nil)
    }

    /// A plan that makes only the `window` of the resize from `source` to `target`: the
    /// window's pixels, exactly as they are in the whole result. `window` must lie inside `target`.
    init(from source: PixelSize, to target: PixelSize, window: (x: Int, y: Int, size: PixelSize)) {
        let whole = window.x == 0 && window.y == 0 && window.size == target
        self.init(from: source, to: target,
                  columns: whole ? nil : Array(window.x..<(window.x + window.size.width)),
                  rows: whole ? nil : Array(window.y..<(window.y + window.size.height)))
    }

    /// A plan that makes only output `columns` of output `rows` (ascending indices inside
    /// `target`; `nil`: all of them), each pixel as in the whole result.
    init(from source: PixelSize, to target: PixelSize, columns: [Int]?, rows: [Int]?) {
        self.source = source
        self.target = target
        (boxX, boxY) = Self.boxFactors(from: source, to: target)
        boxed = PixelSize(width: (source.width + boxX - 1) / boxX, height: (source.height + boxY - 1) / boxY)
        var horizontal = ResamplerWeights(inputCount: boxed.width, outputCount: target.width,
                                          extent: Double(source.width) / Double(boxX), outputs: columns)
        vertical = ResamplerWeights(inputCount: boxed.height, outputCount: target.height,
                                    extent: Double(source.height) / Double(boxY), outputs: rows)
        output = PixelSize(width: columns?.count ?? target.width, height: rows?.count ?? target.height)
        let span = horizontal.inputSpan
        boxedColumns = span
        if span.lowerBound > 0 { horizontal.starts = horizontal.starts.map { $0 - span.lowerBound } }
        self.horizontal = horizontal
        // The same size across: the columns are boxed columns, when they follow each other.
        let contiguous = columns.map { $0.isEmpty || $0[$0.count - 1] - $0[0] == $0.count - 1 } ?? true
        copiesColumns = horizontal.isIdentity && boxed.width == target.width && contiguous
    }

    /// The integer box factors per axis: the largest `k` that keeps `source / k` at least
    /// twice the target (1 when enlarging or shrinking by less than 2), with the block area
    /// capped at ``ResamplerBox/maximumBoxArea``.
    static func boxFactors(from source: PixelSize, to target: PixelSize) -> (x: Int, y: Int) {
        var x = max(1, source.width / max(1, 2 * target.width))
        var y = max(1, source.height / max(1, 2 * target.height))
        let limit = ResamplerBox.maximumBoxArea
        if x * y > limit {
            // Shrink the larger factor; when both are large, share the area evenly.
            let even = Int(Double(limit).squareRoot())
            if x > even && y > even {
                (x, y) = (even, even)
            } else if x > y {
                x = limit / y
            } else {
                y = limit / x
            }
        }
        return (x, y)
    }

    /// The bytes a plan from `source` to `target` and one run of it would take besides the
    /// output, computed without building it: the weight tables of both axes (per output pixel
    /// a start, a count and `stride` weights) and, per band, the ring of filtered rows the
    /// vertical pass keeps (`stride` rows of the output width, 16 bytes a pixel). `Int.max`
    /// when that does not fit in an `Int`.
    static func workingMemory(from source: PixelSize, to target: PixelSize) -> Int {
        workingMemory(from: source, to: target, window: target)
    }

    /// ``workingMemory(from:to:)`` of a plan that makes only a `window` of the output: the
    /// weights of its columns and rows, the ring of its width.
    static func workingMemory(from source: PixelSize, to target: PixelSize, window: PixelSize) -> Int {
        let (boxX, boxY) = boxFactors(from: source, to: target)
        func stride(input: Int, box: Int, output: Int) -> Int {
            let boxed = max(1, (input + box - 1) / box)
            let scale = Double(input) / Double(box) / Double(max(1, output))
            let support = ResamplerWeights.radius * max(scale, 1)
            return max(1, min(Int(support.rounded(.up)) * 2 + 1, boxed))
        }
        let strideX = stride(input: source.width, box: boxX, output: target.width)
        let strideY = stride(input: source.height, box: boxY, output: target.height)
        let bands = max(1, ProcessInfo.processInfo.activeProcessorCount)
        var total = 0
        let columns = min(window.width, target.width), rows = min(window.height, target.height)
        for (count, perItem) in [(columns, 16 + 4 * strideX), (rows, 16 + 4 * strideY), (columns, 16 * strideY * bands)] {
            let (bytes, overflow) = max(0, count).multipliedReportingOverflow(by: perItem)
            guard !overflow else { return Int.max }
            let (sum, sumOverflow) = total.addingReportingOverflow(bytes)
            guard !sumOverflow else { return Int.max }
            total = sum
        }
        return total
    }

    /// An estimate of the multiply-adds of one run, to decide whether to use several cores.
    var estimatedWork: Int {
        let boxedRows = vertical.inputSpan.count
        return min(source.height, boxedRows * boxY) * min(source.width, boxedColumns.count * boxX)
            + output.width * boxedRows * horizontal.stride
            + output.width * output.height * vertical.stride
    }

    /// Resizes one frame: `pixels` holds `source.width * source.height * 4` bytes. The result
    /// holds the ``output`` pixels (the whole target unless the plan makes a part of it).
    func resize(_ pixels: UnsafeBufferPointer<UInt8>, concurrency: Concurrency = .automatic) -> [UInt8] {
        precondition(pixels.count == source.width * source.height * 4,
                     "a \(source) RGBA8 buffer holds \(source.width * source.height * 4) bytes, got \(pixels.count)")
        let count = output.width * output.height * 4
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            run(pixels, into: UnsafeMutableBufferPointer(rebasing: buffer[0..<count]), concurrency: concurrency)
            initialized = count
        }
    }

    /// The number of bands a run uses; `.automatic` uses at most `coreLimit` cores when it is
    /// positive (default ``Resampler/maximumConcurrency``).
    func bandCount(for concurrency: Concurrency, coreLimit: Int = Resampler.maximumConcurrency) -> Int {
        switch concurrency {
        case .serial: return 1
        case .bands(let count): return max(1, count)
        case .automatic:
            let all = ProcessInfo.processInfo.activeProcessorCount
            let cores = coreLimit > 0 ? min(coreLimit, all) : all
            guard cores > 1, estimatedWork >= Self.parallelWorkThreshold else { return 1 }
            // One band per core: bands share nothing, but each recomputes the boxed rows at
            // its top edge that the band above also needs.
            return cores
        }
    }

    /// Resizes `pixels` into `destination` (`output.width * output.height * 4` bytes).
    ///
    /// Each band walks its output rows top to bottom. The boxed rows their vertical windows
    /// need are made and filtered horizontally as they come into view, into a ring of
    /// `vertical.stride` rows: the intermediate picture is never held whole, and what is
    /// read is still in cache. Bands recompute the few boxed rows their windows share.
    func run(_ pixels: UnsafeBufferPointer<UInt8>, into destination: UnsafeMutableBufferPointer<UInt8>,
             concurrency: Concurrency) {
        let bands = bandCount(for: concurrency)
        let outputWidth = output.width
        let ringRows = vertical.stride
        let horizontalStride = horizontal.stride
        let (source, boxX, boxY, boxedColumns) = (self.source, self.boxX, self.boxY, self.boxedColumns)
        let boxedWidth = boxedColumns.count
        let filtersHorizontally = !copiesColumns

        horizontal.withTable { horizontal in
            vertical.withTable { vertical in
                Self.perform(bands: bands, rows: output.height) { rows in
                    let box = ResamplerBox(source: pixels, width: source.width, height: source.height, boxX: boxX, boxY: boxY)
                    // Zero padding past the row: the horizontal filter reads whole windows there.
                    let boxedRow = UnsafeMutableBufferPointer<SIMD4<Float>>.allocate(
                        capacity: filtersHorizontally ? boxedWidth + horizontalStride : 0)
                    boxedRow.initialize(repeating: SIMD4<Float>())
                    let ring = UnsafeMutableBufferPointer<SIMD4<Float>>.allocate(capacity: ringRows * outputWidth)
                    // Whether the boxed row in each ring slot had alpha 255 throughout.
                    let opaqueSlots = UnsafeMutableBufferPointer<Bool>.allocate(capacity: ringRows)
                    opaqueSlots.initialize(repeating: false)
                    let sums = UnsafeMutableBufferPointer<SIMD4<Float>>.allocate(capacity: outputWidth)
                    defer {
                        boxedRow.deallocate()
                        ring.deallocate()
                        opaqueSlots.deallocate()
                        sums.deallocate()
                    }
                    var nextRow = 0
                    for y in rows {
                        let first = vertical.starts[y]
                        let end = first + vertical.counts[y]
                        nextRow = Swift.max(nextRow, first)
                        while nextRow < end {
                            let slot = nextRow % ringRows
                            let filtered = UnsafeMutableBufferPointer(rebasing: ring[(slot * outputWidth)..<((slot + 1) * outputWidth)])
                            if filtersHorizontally {
                                opaqueSlots[slot] = box.makeRow(nextRow, columns: boxedColumns, into: boxedRow)
                                horizontal.filterRow(UnsafeBufferPointer(boxedRow), into: filtered)
                            } else {
                                opaqueSlots[slot] = box.makeRow(nextRow, columns: boxedColumns, into: filtered)
                            }
                            nextRow += 1
                        }
                        vertical.filterColumns(UnsafeBufferPointer(ring), width: outputWidth, rows: ringRows, output: y, into: sums)
                        let output = UnsafeMutableRawBufferPointer(
                            rebasing: UnsafeMutableRawBufferPointer(destination)[(y * outputWidth * 4)..<((y + 1) * outputWidth * 4)])
                        var opaque = true
                        for row in first..<end where !opaqueSlots[row % ringRows] { opaque = false }
                        if opaque {
                            // Every pixel the row is made of had alpha 255, so its alpha is 255
                            // and the colours need no division (sums of weights that add up to
                            // 1 leave alpha within rounding of 255, not exactly on it).
                            sums.withMemoryRebound(to: Float.self) { floats in
                                alcedo_store_opaque_rgba8(floats.baseAddress!, output.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                                          outputWidth)
                            }
                        } else {
                            for x in 0..<outputWidth {
                                output.storeBytes(of: Self.unpremultiply(sums[x]), toByteOffset: x &* 4, as: SIMD4<UInt8>.self)
                            }
                        }
                    }
                }
            }
        }
    }

    /// Splits `rows` into `bands` contiguous ranges and runs `body` on each, concurrently
    /// when there is more than one; returns when all are done.
    ///
    /// `body` reads shared input and writes only the output rows of its own range, so the
    /// concurrent calls never touch the same memory. That is what makes handing the
    /// non-`Sendable` closure (it captures buffer pointers) to other threads sound.
    private static func perform(bands: Int, rows: Int, _ body: (Range<Int>) -> Void) {
        let bands = min(bands, rows)
        guard bands > 1 else {
            body(0..<rows)
            return
        }
        withoutActuallyEscaping(body) { body in
            nonisolated(unsafe) let body = body
            DispatchQueue.concurrentPerform(iterations: bands) { band in
                body((rows * band / bands)..<(rows * (band + 1) / bands))
            }
        }
    }

    /// A premultiplied pixel back to straight RGBA8: alpha clamped to 0...255 and rounded; a
    /// pixel whose alpha rounds to 0 becomes transparent black; colours divided by alpha,
    /// clamped and rounded (to nearest, ties to even).
    @inline(__always)
    static func unpremultiply(_ pixel: SIMD4<Float>) -> SIMD4<UInt8> {
        let alpha = Swift.min(Swift.max(pixel.w, 0), 255)
        guard alpha >= 0.5 else { return SIMD4<UInt8>() }
        let scale = 255 / alpha
        // Lane by lane: the generic SIMD clamps are not inlined and cost more than the rest.
        let straight = SIMD4<Float>(Swift.min(Swift.max(pixel.x * scale, 0), 255),
                                    Swift.min(Swift.max(pixel.y * scale, 0), 255),
                                    Swift.min(Swift.max(pixel.z * scale, 0), 255),
                                    alpha)
        // Adding 1.5 * 2^23 leaves the value rounded to an integer in the low mantissa bits.
        let rounded = unsafeBitCast(straight + SIMD4(repeating: 12_582_912), to: SIMD4<UInt32>.self)
        return SIMD4<UInt8>(truncatingIfNeeded: rounded)
    }
}

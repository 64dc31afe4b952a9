#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Resizes RGBA8 pixels (straight alpha) with an integer box pre-shrink followed by
/// separable Lanczos3 on premultiplied alpha. Every resizing processor uses it.
///
/// ## Method
/// 1. **Box pre-shrink** (shrinking by 2 or more only): each axis is divided by the largest
///    whole factor `k` that keeps it at least twice the target (`k = source / (2 * target)`),
///    every output pixel the exact average of its `kx` x `ky` block. This reads the big
///    source once, cheaply, and leaves Lanczos a small picture to filter.
/// 2. **Lanczos3** (`a = 3`), horizontally then vertically, to the exact target size, with
///    weights computed once per output pixel, normalised to sum 1 and cut at the edges.
///    When enlarging, the kernel keeps its 3-pixel support.
/// 3. Alpha is **premultiplied** on the way in and divided out on the way back, so the
///    colour of a fully transparent pixel never bleeds into its neighbours. An output row
///    whose every source pixel is opaque has alpha 255 exactly and its colours are only
///    rounded and clamped (no division): weights summing to 1 in `Float` leave its alpha
///    within rounding of 255, and dividing by that would only add noise.
///
/// Box sums are exact integers, the filtering is `Float` with `SIMD4<Float>` per pixel and
/// results are rounded to nearest: a picture of one colour stays exactly that colour (an
/// output pixel whose alpha rounds to 0 is transparent black). On photographs the result is
/// within 1 or 2 of Pillow's `Image.resize(size, Image.LANCZOS, reducing_gap=2.0)`
/// (PSNR about 55 dB).
///
/// When a box factor does not divide the size, the last boxed pixel averages the leftover
/// strip and the Lanczos weights count it for the fraction of a pixel it covers.
///
/// ## Windows
/// ``resize(_:width:height:to:window:)`` makes one rectangle of the result (a crop after the
/// resize) and ``resize(_:width:height:to:columns:rows:)`` chosen columns and rows of it, byte
/// for byte as the whole result has them: each output pixel depends only on its own weights
/// and the source pixels under them. Only those weights are computed, only the source rows
/// and columns under the window are boxed and filtered, and the rows kept between the two
/// passes are the window's width, so the cost follows the window, not the result's size.
///
/// ## Threads
/// The call is synchronous and CPU-bound: run it off Swift's cooperative pool. Large
/// resizes split their rows into bands computed on all cores (with Dispatch); the result is
/// byte for byte the same as on one core.
///
/// Decoders that scale while decoding (JPEG DCT scaling, WebP) should do so first, to the
/// smallest size that still covers the target; this then takes the picture to the exact size.
public enum Resampler {
    private static let coreLimit = Atomic<Int>(0)

    /// The most cores one resize may use (default 0: every core). A server that already runs
    /// one request per core sets 1, so that each resize stays on its request's thread instead
    /// of handing bands to the others' (as libvips' `VIPS_CONCURRENCY=1` does). Results are
    /// byte for byte the same whatever the value.
    public static var maximumConcurrency: Int {
        get { coreLimit.load(ordering: .relaxed) }
        set { coreLimit.store(max(0, newValue), ordering: .relaxed) }
    }

    /// Resizes `width` x `height` RGBA8 pixels (straight alpha, rows top to bottom, no
    /// padding) to `size`.
    ///
    /// - Parameters:
    ///   - pixels: exactly `width * height * 4` bytes. Anything else is a programming error
    ///     and traps.
    ///   - width: the source width in pixels; must be positive.
    ///   - height: the source height in pixels; must be positive.
    ///   - size: the exact output size; a side below 1 is raised to 1. The aspect ratio is
    ///     not kept (use ``PixelSize/fitting(in:)`` or ``PixelSize/filling(_:)``). The caller
    ///     bounds it: the output is allocated as asked.
    /// - Returns: `size.width * size.height * 4` bytes of RGBA8, straight alpha. When `size`
    ///   is the source size, a plain copy.
    public static func resize(_ pixels: UnsafeBufferPointer<UInt8>, width: Int, height: Int, to size: PixelSize) -> [UInt8] {
        precondition(width > 0 && height > 0, "Resampler needs a positive source size, got \(width)x\(height)")
        let source = PixelSize(width: width, height: height)
        let target = clamped(size)
        if target == source {
            precondition(pixels.count == width * height * 4,
                         "a \(source) RGBA8 buffer holds \(width * height * 4) bytes, got \(pixels.count)")
            return Array(pixels)
        }
        return ResamplerPlan(from: source, to: target).resize(pixels)
    }

    /// Resizes `width` x `height` RGBA8 pixels (straight alpha) to `size`, as the
    /// `UnsafeBufferPointer` overload does. When `size` is the source size, returns `pixels`
    /// itself (copy-on-write, nothing is copied).
    public static func resize(_ pixels: [UInt8], width: Int, height: Int, to size: PixelSize) -> [UInt8] {
        if clamped(size) == PixelSize(width: width, height: height) && pixels.count == width * height * 4 {
            return pixels
        }
        return pixels.withUnsafeBufferPointer { resize($0, width: width, height: height, to: size) }
    }

    /// Resizes `width` x `height` RGBA8 pixels (straight alpha) to `size` and returns only the
    /// `window` of the result: byte for byte what resizing the whole image and cutting the
    /// window out of it gives, without making the rest. Only the window's columns and rows are
    /// filtered and only the source rows under them are read, so the memory and time follow the
    /// window, not `size` (a 2000 x 1500 picture scaled to 26667 x 20000 for a 100 x 20000
    /// window costs what the window does).
    ///
    /// - Parameters:
    ///   - pixels: exactly `width * height * 4` bytes. Anything else is a programming error
    ///     and traps.
    ///   - width: the source width in pixels; must be positive.
    ///   - height: the source height in pixels; must be positive.
    ///   - size: the size of the whole result; a side below 1 is raised to 1.
    ///   - window: the rectangle of the result to make, in its pixels; its origin is moved
    ///     inside the result and its sides are cut to it (at least 1 pixel each).
    /// - Returns: the window's pixels, RGBA8 with straight alpha, rows top to bottom.
    public static func resize(_ pixels: UnsafeBufferPointer<UInt8>, width: Int, height: Int, to size: PixelSize,
                              window: (x: Int, y: Int, size: PixelSize)) -> [UInt8] {
        precondition(width > 0 && height > 0, "Resampler needs a positive source size, got \(width)x\(height)")
        precondition(pixels.count == width * height * 4,
                     "a \(width)x\(height) RGBA8 buffer holds \(width * height * 4) bytes, got \(pixels.count)")
        let target = clamped(size)
        let window = clamped(window, in: target)
        if target == PixelSize(width: width, height: height) {
            // Nothing to resample: the window's rows of the pixels themselves.
            var cut = [UInt8]()
            cut.reserveCapacity(window.size.width * window.size.height * 4)
            for y in window.y..<(window.y + window.size.height) {
                cut.append(contentsOf: pixels[((y * width + window.x) * 4)..<((y * width + window.x + window.size.width) * 4)])
            }
            return cut
        }
        return resize(pixels, width: width, height: height, to: target,
                      columns: Array(window.x..<(window.x + window.size.width)), rows: Array(window.y..<(window.y + window.size.height)))
    }

    /// Resizes `width` x `height` RGBA8 pixels (straight alpha) to `size` and returns only the
    /// pixels at the crossings of `columns` and `rows` of the result, row by row: the pixels
    /// of the whole result at those places, byte for byte, made without the rest (a sparse
    /// preview that content-aware cropping can analyse instead of the whole result).
    ///
    /// - Parameters:
    ///   - pixels: exactly `width * height * 4` bytes. Anything else is a programming error
    ///     and traps.
    ///   - width: the source width in pixels; must be positive.
    ///   - height: the source height in pixels; must be positive.
    ///   - size: the size of the whole result; a side below 1 is raised to 1.
    ///   - columns: the result's columns to make; indices outside the result are dropped,
    ///     the rest sorted and each kept once.
    ///   - rows: the result's rows to make, as `columns`.
    /// - Returns: `columns.count * rows.count * 4` bytes (after dropping), RGBA8 with straight alpha.
    public static func resize(_ pixels: UnsafeBufferPointer<UInt8>, width: Int, height: Int, to size: PixelSize,
                              columns: [Int], rows: [Int]) -> [UInt8] {
        precondition(width > 0 && height > 0, "Resampler needs a positive source size, got \(width)x\(height)")
        precondition(pixels.count == width * height * 4,
                     "a \(width)x\(height) RGBA8 buffer holds \(width * height * 4) bytes, got \(pixels.count)")
        let target = clamped(size)
        let columns = ascending(columns, below: target.width), rows = ascending(rows, below: target.height)
        guard !columns.isEmpty, !rows.isEmpty else { return [] }
        guard target != PixelSize(width: width, height: height) else {
            // Nothing to resample: the pixels themselves.
            let source = UnsafeRawBufferPointer(pixels)
            return [UInt8](unsafeUninitializedCapacity: columns.count * rows.count * 4) { buffer, initialized in
                let picked = UnsafeMutableRawBufferPointer(buffer)
                var offset = 0
                for y in rows {
                    for x in columns {
                        picked.storeBytes(of: source.loadUnaligned(fromByteOffset: (y * width + x) * 4, as: UInt32.self),
                                          toByteOffset: offset, as: UInt32.self)
                        offset += 4
                    }
                }
                initialized = offset
            }
        }
        let all = columns.count == target.width && rows.count == target.height
        return ResamplerPlan(from: PixelSize(width: width, height: height), to: target,
                             columns: all ? nil : columns, rows: all ? nil : rows).resize(pixels)
    }

    /// The bytes resizing `source` to `size` needs besides its source and its result (the
    /// weight tables and the rows kept between the two passes), when only a `window` of the
    /// result is made (default: the whole result): they follow the window, not `size`.
    public static func workingMemory(from source: PixelSize, to size: PixelSize, window: PixelSize? = nil) -> Int {
        let target = clamped(size)
        return ResamplerPlan.workingMemory(from: clamped(source), to: target, window: clamped(window ?? target))
    }

    /// The box pre-shrink factors used from `source` to `target`: per axis the largest whole
    /// `k` with `source / k >= 2 * target` (1 when enlarging or shrinking by less than 2).
    /// The block area `x * y` is capped at 65,536 so the integer sums cannot overflow.
    public static func boxFactors(from source: PixelSize, to target: PixelSize) -> (x: Int, y: Int) {
        ResamplerPlan.boxFactors(from: clamped(source), to: clamped(target))
    }

    /// `size` with each side raised to at least 1.
    static func clamped(_ size: PixelSize) -> PixelSize {
        PixelSize(width: max(1, size.width), height: max(1, size.height))
    }

    /// `window` moved inside `target` and cut to it, each side at least 1.
    static func clamped(_ window: (x: Int, y: Int, size: PixelSize), in target: PixelSize) -> (x: Int, y: Int, size: PixelSize) {
        let x = min(max(0, window.x), target.width - 1), y = min(max(0, window.y), target.height - 1)
        return (x, y, PixelSize(width: min(max(1, window.size.width), target.width - x),
                                height: min(max(1, window.size.height), target.height - y)))
    }

    /// The indices of `indices` in `0..<limit`, ascending, each once.
    static func ascending(_ indices: [Int], below limit: Int) -> [Int] {
        var sorted = indices.filter { $0 >= 0 && $0 < limit }
        sorted.sort()
        var unique = [Int]()
        unique.reserveCapacity(sorted.count)
        for index in sorted where unique.last != index { unique.append(index) }
        return unique
    }
}

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
}

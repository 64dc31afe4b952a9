#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Changes the colour channels of every pixel with integer arithmetic, as thumbor's filters do
/// (`brightness`, `contrast`, `rgb`, `saturation`, `grayscale`, `colorize`, `curve`, `equalize`),
/// on straight (not premultiplied) RGB; alpha is kept. Each result is clamped to `0...255`.
///
/// Identifier: `com.alcedo.levels(<adjustment>)`, for example `com.alcedo.levels(brightness:10)`.
///
/// ```swift
/// let processor = LevelsImageProcessor(.brightness(percent: 10)) |> LevelsImageProcessor(.grayscale)
/// ```
public struct LevelsImageProcessor: ImageProcessor {
    /// One channel operation.
    public enum Adjustment: Sendable, Hashable {
        /// Adds `255 * percent / 100` (truncated) to R, G and B; `percent` in `-100...100`.
        case brightness(percent: Int)
        /// Scales each channel around 128 by `(percent + 100)² / 100` percent (integer steps),
        /// thumbor's arithmetic for any `percent` (held to ±1,000,000): 0 leaves the image
        /// unchanged, -100 makes it grey, -200 (a factor of 100%) unchanged again, past 100 the
        /// contrast keeps growing.
        case contrast(percent: Int)
        /// Adds `255 * percent / 100` (truncated) to each channel separately, each in `-100...100`.
        case rgb(red: Int, green: Int, blue: Int)
        /// Moves each channel away from the perceived brightness
        /// `√(0.299 r² + 0.587 g² + 0.114 b²)` by `factor` (1 unchanged, 0 grey).
        case saturation(factor: Double)
        /// Rec. 601 luma, `(19595 r + 38470 g + 7471 b + 32768) >> 16`, in every channel.
        case grayscale
        /// Blends each channel towards `color`: `c + (color - c) * percent / 100`, per channel percentages.
        case colorize(red: Int, green: Int, blue: Int, color: RGBA)
        /// Natural cubic splines through `(input, output)` points in `0...255`, as thumbor's
        /// `curve` filter draws them: each channel through its own curve (`red`, `green`, `blue`),
        /// then through `all`. The points are taken in the order given, inputs increasing; below
        /// the first input a curve gives the first output, from the last input on the last
        /// output; an empty list leaves a channel unchanged.
        case curves(all: [Point], red: [Point], green: [Point], blue: [Point])
        /// Stretches each channel's histogram so its cumulative distribution is uniform (computed per frame).
        case equalize
    }

    /// A curve point: `input` maps to `output`, both in `0...255`.
    public struct Point: Sendable, Hashable {
        public var input: Int
        public var output: Int

        public init(_ input: Int, _ output: Int) {
            self.input = input
            self.output = output
        }
    }

    /// The operation applied.
    public let adjustment: Adjustment

    /// Creates the processor for one `adjustment`.
    public init(_ adjustment: Adjustment) {
        self.adjustment = adjustment
    }

    /// `com.alcedo.levels(<adjustment>)`.
    public var identifier: String {
        let text: String
        switch adjustment {
        case .brightness(let percent): text = "brightness:\(percent)"
        case .contrast(let percent): text = "contrast:\(percent)"
        case .rgb(let r, let g, let b): text = "rgb:\(r):\(g):\(b)"
        case .saturation(let factor): text = "saturation:" + ProcessorSupport.number(factor)
        case .grayscale: text = "grayscale"
        case .colorize(let r, let g, let b, let color): text = "colorize:\(r):\(g):\(b):" + ProcessorSupport.color(color)
        case .curves(let all, let red, let green, let blue):
            text = "spline:" + [all, red, green, blue].map { $0.map { "\($0.input),\($0.output)" }.joined(separator: ";") }
                .joined(separator: ":")
        case .equalize: text = "equalize"
        }
        return ProcessorSupport.identifier("levels", [text])
    }

    /// Adjusts every frame. Throws `.invalidParameter` for a non-finite saturation factor or a
    /// curve point outside `0...255`.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        switch adjustment {
        case .brightness(let percent):
            return Self.shifted(image, Self.offset(percent), Self.offset(percent), Self.offset(percent))
        case .rgb(let r, let g, let b):
            return Self.shifted(image, Self.offset(r), Self.offset(g), Self.offset(b))
        case .contrast(let percent):
            let clampedPercent = max(-1_000_000, min(1_000_000, percent))
            let factor = (clampedPercent + 100) * (clampedPercent + 100) / 100
            let table = (0...255).map { Self.clamp(factor * ($0 - 128) / 100 + 128) }
            return image.mappingFrames { PixelOps.mapChannels($0, red: table, green: table, blue: table) }
        case .saturation(let factor):
            try ProcessorSupport.requireFinite(factor, "factor", in: "LevelsImageProcessor")
            let change = Float(factor)
            return image.mappingFrames { pixels in
                PixelOps.mapPixels(pixels) { s, d in
                    let r = Float(s[0]), g = Float(s[1]), b = Float(s[2])
                    let weighted: Float = r * r * 0.299 + g * g * 0.587 + b * b * 0.114
                    let p = weighted.squareRoot()
                    d[0] = Self.clamp(Self.truncated(p + (r - p) * change))
                    d[1] = Self.clamp(Self.truncated(p + (g - p) * change))
                    d[2] = Self.clamp(Self.truncated(p + (b - p) * change))
                    d[3] = s[3]
                }
            }
        case .grayscale:
            return image.mappingFrames { pixels in
                PixelOps.mapPixels(pixels) { s, d in
                    let red: UInt32 = 19595 * UInt32(s[0])
                    let green: UInt32 = 38470 * UInt32(s[1])
                    let blue: UInt32 = 7471 * UInt32(s[2])
                    let luma = UInt8(truncatingIfNeeded: (red + green + blue + 32768) >> 16)
                    d[0] = luma
                    d[1] = luma
                    d[2] = luma
                    d[3] = s[3]
                }
            }
        case .colorize(let r, let g, let b, let color):
            func table(_ percent: Int, _ target: UInt8) -> [UInt8] {
                (0...255).map { Self.clamp($0 + (Int(target) - $0) * percent / 100) }
            }
            let red = table(r, color.red), green = table(g, color.green), blue = table(b, color.blue)
            return image.mappingFrames { PixelOps.mapChannels($0, red: red, green: green, blue: blue) }
        case .curves(let all, let red, let green, let blue):
            for point in all + red + green + blue where !(0...255).contains(point.input) || !(0...255).contains(point.output) {
                throw ProcessorSupport.invalid("LevelsImageProcessor", "curve points must be in 0...255, got (\(point.input), \(point.output))")
            }
            let common = Self.curve(all)
            let r = Self.curve(red).map { common[Int($0)] }, g = Self.curve(green).map { common[Int($0)] }
            let b = Self.curve(blue).map { common[Int($0)] }
            return image.mappingFrames { PixelOps.mapChannels($0, red: r, green: g, blue: b) }
        case .equalize:
            return image.mappingFrames { pixels in
                var histograms = [Int](repeating: 0, count: 768)
                var index = 0
                while index + 3 < pixels.count {
                    histograms[Int(pixels[index])] += 1
                    histograms[256 + Int(pixels[index + 1])] += 1
                    histograms[512 + Int(pixels[index + 2])] += 1
                    index += 4
                }
                let tables = (0..<3).map { Self.equalizing(histograms[($0 * 256)..<($0 * 256 + 256)]) }
                return PixelOps.mapChannels(pixels, red: tables[0], green: tables[1], blue: tables[2])
            }
        }
    }

    /// `255 * percent / 100` with C's truncating division.
    private static func offset(_ percent: Int) -> Int { 255 * max(-100, min(100, percent)) / 100 }

    private static func shifted(_ image: AlcedoImage, _ r: Int, _ g: Int, _ b: Int) -> AlcedoImage {
        guard r != 0 || g != 0 || b != 0 else { return image }
        let red = (0...255).map { clamp($0 + r) }, green = (0...255).map { clamp($0 + g) }, blue = (0...255).map { clamp($0 + b) }
        return image.mappingFrames { PixelOps.mapChannels($0, red: red, green: green, blue: blue) }
    }

    @inline(__always)
    private static func truncated(_ value: Float) -> Int {
        guard value.isFinite else { return 0 }
        return Int(max(-1024, min(1024, value)))
    }

    @inline(__always)
    private static func clamp(_ value: Int) -> UInt8 { UInt8(max(0, min(255, value))) }

    /// The 256-entry table of the natural cubic spline through `points` (in the order given,
    /// rounded half away from zero and clamped; the ends held flat); the identity for no points.
    static func curve(_ points: [Point]) -> [UInt8] {
        guard let first = points.first, let last = points.last else { return (0...255).map { UInt8($0) } }
        var table = [UInt8](repeating: clamp(first.output), count: 256)
        let second = secondDerivatives(points)
        for index in 0..<(points.count - 1) {
            let a = points[index], b = points[index + 1]
            guard a.input < b.input else { continue }
            let h = Double(b.input - a.input)
            for x in a.input..<b.input {
                let t = Double(x - a.input) / h, u = 1 - t
                let y = u * Double(a.output) + t * Double(b.output)
                    + (h * h / 6) * ((u * u * u - u) * second[index] + (t * t * t - t) * second[index + 1])
                table[x] = y.isFinite ? clamp(Int(y.rounded(.toNearestOrAwayFromZero))) : 0
            }
        }
        for x in max(0, last.input)..<256 { table[x] = clamp(last.output) }
        return table
    }

    /// The second derivatives of the natural cubic spline through `points` (0 at both ends),
    /// from the tridiagonal system solved as thumbor's `_curve` solves it.
    private static func secondDerivatives(_ points: [Point]) -> [Double] {
        let n = points.count
        var lower = [Double](repeating: 0, count: n), diagonal = [Double](repeating: 0, count: n)
        var upper = [Double](repeating: 0, count: n), result = [Double](repeating: 0, count: n)
        diagonal[0] = 1
        diagonal[n - 1] = 1
        if n > 2 {
            for i in 1..<(n - 1) {
                let x0 = Double(points[i - 1].input), x1 = Double(points[i].input), x2 = Double(points[i + 1].input)
                let y0 = Double(points[i - 1].output), y1 = Double(points[i].output), y2 = Double(points[i + 1].output)
                lower[i] = (x1 - x0) / 6
                diagonal[i] = (x2 - x0) / 3
                upper[i] = (x2 - x1) / 6
                result[i] = (y2 - y1) / (x2 - x1) - (y1 - y0) / (x1 - x0)
            }
        }
        for i in stride(from: 1, to: n, by: 1) {
            let k = lower[i] / diagonal[i - 1]
            diagonal[i] -= k * upper[i - 1]
            lower[i] = 0
            result[i] -= k * result[i - 1]
        }
        for i in stride(from: n - 2, through: 0, by: -1) {
            let k = upper[i] / diagonal[i + 1]
            diagonal[i] -= k * lower[i + 1]
            upper[i] = 0
            result[i] -= k * result[i + 1]
        }
        return (0..<n).map { result[$0] / diagonal[$0] }
    }

    /// The table that equalizes one channel's 256-bin histogram.
    static func equalizing(_ histogram: ArraySlice<Int>) -> [UInt8] {
        let total = histogram.reduce(0, +)
        guard total > 0 else { return (0...255).map { UInt8($0) } }
        var table = [UInt8](repeating: 0, count: 256)
        var cumulative = 0
        let firstCount = histogram.first { $0 > 0 } ?? 0
        for (offset, count) in histogram.enumerated() {
            cumulative += count
            let denominator = total - firstCount
            table[offset] = denominator > 0 ? clamp((cumulative - firstCount) * 255 / denominator) : UInt8(offset)
        }
        return table
    }
}

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

/// CIE L*a*b* samples (TIFF's CIELab and ICCLab photometric interpretations) to sRGB: L*a*b*
/// to XYZ relative to the file's white point (the WhitePoint tag; D50 without one, as libtiff
/// and Adobe's TIFF notes take it), Bradford adaptation to D65, then the sRGB primaries and
/// transfer curve. Colours outside sRGB are clipped.
struct TIFFLabConverter {
    /// XYZ (relative to the source white) to linear sRGB, adaptation included.
    private let matrix: [Double]

    /// D50, the white point of a Lab TIFF that names none.
    static let defaultWhite = (x: 0.3457, y: 0.3585)

    init(white: (x: Double, y: Double)?) {
        var (x, y) = white ?? Self.defaultWhite
        if !(x > 0 && y > 0 && x + y < 1) { (x, y) = Self.defaultWhite }
        let source = [x / y, 1, (1 - x - y) / y]
        let d65 = [0.95047, 1.0, 1.08883]
        let bradford = [0.8951, 0.2664, -0.1614, -0.7502, 1.7135, 0.0367, 0.0389, -0.0685, 1.0296]
        let inverse = [0.9869929, -0.1470543, 0.1599627, 0.4323053, 0.5183603, 0.0492912, -0.0085287, 0.0400428, 0.9684867]
        let toSRGB = [3.2404542, -1.5371385, -0.4985314, -0.9692660, 1.8760108, 0.0415560, 0.0556434, -0.2040259, 1.0572252]
        func apply(_ m: [Double], _ v: [Double]) -> [Double] {
            (0..<3).map { (r: Int) -> Double in
                let first: Double = m[r * 3] * v[0]
                return first + m[r * 3 + 1] * v[1] + m[r * 3 + 2] * v[2]
            }
        }
        func multiply(_ a: [Double], _ b: [Double]) -> [Double] {
            (0..<9).map { (i: Int) -> Double in
                var sum = 0.0
                for k in 0..<3 { sum += a[i / 3 * 3 + k] * b[k * 3 + i % 3] }
                return sum
            }
        }
        // Source cone responses scaled to the destination's: M⁻¹ · diag(ρd/ρs) · M.
        let coneSource = apply(bradford, source), coneDestination = apply(bradford, d65)
        var scale = [Double](repeating: 0, count: 9)
        for i in 0..<3 { scale[i * 4] = coneDestination[i] / coneSource[i] }
        let adaptation = multiply(inverse, multiply(scale, bradford))
        // The source white in XYZ: L*a*b* is relative to it.
        let whiteScale: [Double] = [source[0], 0, 0, 0, source[1], 0, 0, 0, source[2]]
        matrix = multiply(toSRGB, multiply(adaptation, whiteScale))
    }

    /// The sRGB value (0...65535 a channel) of `l` (0...100), `a` and `b`.
    func rgb(l: Double, a: Double, b: Double) -> (UInt32, UInt32, UInt32) {
        let fy = (l + 16) / 116, fx = fy + a / 500, fz = fy - b / 200
        func inverse(_ t: Double) -> Double { t > 6.0 / 29 ? t * t * t : 3 * (6.0 / 29) * (6.0 / 29) * (t - 4.0 / 29) }
        let xyz = (inverse(fx), inverse(fy), inverse(fz))
        func channel(_ row: Int) -> UInt32 {
            var linear: Double = matrix[row * 3] * xyz.0
            linear += matrix[row * 3 + 1] * xyz.1 + matrix[row * 3 + 2] * xyz.2
            let clipped = min(1, max(0, linear))
            let encoded = clipped <= 0.0031308 ? 12.92 * clipped : 1.055 * pow(clipped, 1 / 2.4) - 0.055
            return UInt32((encoded * 65535).rounded())
        }
        return (channel(0), channel(1), channel(2))
    }
}

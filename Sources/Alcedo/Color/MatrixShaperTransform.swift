import CLCMS2
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

/// A fast path for matrix-shaper RGB profiles (Display P3, Adobe RGB, ProPhoto and most
/// camera and phone profiles): per-channel linearisation tables, one 3x3 matrix to linear
/// sRGB and a 4,096-entry sRGB encoding table, all computed by lcms from the profile.
///
/// It is what lcms's own matrix-shaper optimisation computes, in floating point without
/// lcms's per-pixel dispatch, and it is only used when it agrees with lcms's transform
/// within 1 on every probe colour (checked once per profile when the transform is built).
/// Black-point compensation changes nothing here: both blacks are 0.
struct MatrixShaperTransform: Sendable {
    private let linear: [Float]          // 3 x 256: channel c, level v at c * 256 + v
    private let matrix: [Float]          // row-major 3x3, source linear RGB -> linear sRGB
    private let encode: [UInt8]          // 4,096 entries over linear 0...1

    /// Builds the tables for `profile`, or `nil` when it is not an RGB matrix-shaper profile.
    init?(_ profile: LCMSProfile) {
        guard profile.colorSpace == .rgb, cmsIsMatrixShaper(profile.handle) != 0,
              let source = Self.columnsAndCurves(profile), let target = Self.columnsAndCurves(LCMSProfile.sRGB()),
              let inverse = Self.invert(target.columns) else { return nil }
        linear = source.curves
        var m = [Float](repeating: 0, count: 9)
        for row in 0..<3 {
            for column in 0..<3 {
                var sum = 0.0
                for k in 0..<3 { sum += inverse[row * 3 + k] * source.columns[k * 3 + column] }
                m[row * 3 + column] = Float(sum)
            }
        }
        matrix = m
        encode = (0..<4096).map { index in
            let l = Double(index) / 4095
            let v = l <= 0.0031308 ? 12.92 * l : 1.055 * pow(l, 1 / 2.4) - 0.055
            return UInt8(max(0, min(255, (v * 255).rounded())))
        }
    }

    /// Converts RGBA8 pixels in place (alpha untouched).
    func apply(to pixels: inout [UInt8]) {
        pixels.withUnsafeMutableBufferPointer { apply(to: $0) }
    }

    /// Converts RGBA8 pixels in place (alpha untouched).
    func apply(to p: UnsafeMutableBufferPointer<UInt8>) {
        let (m0, m1, m2, m3, m4, m5, m6, m7, m8) = (matrix[0], matrix[1], matrix[2], matrix[3], matrix[4],
                                                    matrix[5], matrix[6], matrix[7], matrix[8])
        linear.withUnsafeBufferPointer { lin in
            encode.withUnsafeBufferPointer { enc in
                var i = 0
                while i + 3 < p.count {
                    let r = lin[Int(p[i])], g = lin[256 + Int(p[i + 1])], b = lin[512 + Int(p[i + 2])]
                    p[i] = enc[Self.index(m0 * r + m1 * g + m2 * b)]
                    p[i + 1] = enc[Self.index(m3 * r + m4 * g + m5 * b)]
                    p[i + 2] = enc[Self.index(m6 * r + m7 * g + m8 * b)]
                    i += 4
                }
            }
        }
    }

    @inline(__always)
    private static func index(_ value: Float) -> Int {
        Int(min(max(value, 0), 1) * 4095 + 0.5)
    }

    /// The profile's colorant columns (XYZ, D50, relative colorimetric) and its three
    /// linearisation curves, both evaluated through lcms (RGB to XYZ, one channel at a time).
    private static func columnsAndCurves(_ profile: LCMSProfile) -> (columns: [Double], curves: [Float])? {
        guard let xyz = cmsCreateXYZProfile() else { return nil }
        let xyzProfile = LCMSProfile(handle: xyz)
        guard let transform = cmsCreateTransform(profile.handle, ALCEDO_TYPE_RGB_DBL, xyzProfile.handle, ALCEDO_TYPE_XYZ_DBL,
                                                 ALCEDO_INTENT_RELATIVE_COLORIMETRIC, ALCEDO_FLAGS_NOCACHE) else { return nil }
        defer { cmsDeleteTransform(transform) }
        func toXYZ(_ rgb: [Double]) -> [Double] {
            var input = rgb
            var output = [Double](repeating: 0, count: 3)
            cmsDoTransform(transform, &input, &output, 1)
            return output
        }
        var columns = [Double](repeating: 0, count: 9)  // row-major: columns[row * 3 + channel]
        var curves = [Float](repeating: 0, count: 768)
        for channel in 0..<3 {
            var unit = [0.0, 0.0, 0.0]
            unit[channel] = 1
            let column = toXYZ(unit)
            let norm = column.reduce(0) { $0 + $1 * $1 }
            guard norm > 1e-12 else { return nil }
            for row in 0..<3 { columns[row * 3 + channel] = column[row] }
            for level in 0..<256 {
                var rgb = [0.0, 0.0, 0.0]
                rgb[channel] = Double(level) / 255
                let value = toXYZ(rgb)
                curves[channel * 256 + level] = Float(zip(value, column).reduce(0) { $0 + $1.0 * $1.1 } / norm)
            }
        }
        return (columns, curves)
    }

    /// The inverse of a row-major 3x3 matrix, or `nil` when it is singular.
    private static func invert(_ m: [Double]) -> [Double]? {
        let det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6])
        guard abs(det) > 1e-12 else { return nil }
        let c: [Double] = [
            m[4] * m[8] - m[5] * m[7], m[2] * m[7] - m[1] * m[8], m[1] * m[5] - m[2] * m[4],
            m[5] * m[6] - m[3] * m[8], m[0] * m[8] - m[2] * m[6], m[2] * m[3] - m[0] * m[5],
            m[3] * m[7] - m[4] * m[6], m[1] * m[6] - m[0] * m[7], m[0] * m[4] - m[1] * m[3],
        ]
        return c.map { $0 / det }
    }
}

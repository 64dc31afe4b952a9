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

/// Sharpens with a five-level à trous wavelet decomposition, as thumbor's `sharpen(amount,
/// radius, luminance_only)` filter and GIMP's wavelet-sharpen plug-in do.
///
/// Each level `l` (0...4) splits the detail at scale 2ˡ off with the hat kernel `[1 2 1]/4`
/// (rows, then columns, mirrored at the edges) and multiplies it by
/// `amount · exp(-(l - radius)² / 1.5) + 1`: `radius` picks the scale that is sharpened most,
/// `amount` how much. With ``luminanceOnly`` the work is done on the JPEG Y channel only
/// (RGB → YCbCr → RGB), so colours do not fringe; otherwise on R, G and B each. Alpha is kept;
/// the channels are straight (not premultiplied), as thumbor reads them. An `amount` of 0
/// returns the image unchanged.
///
/// Identifier: `com.alcedo.waveletSharpen(<amount>,<radius>,<luminanceOnly>)`.
public struct WaveletSharpenImageProcessor: ImageProcessor {
    /// How strongly details are boosted (thumbor's `amount`; 0: unchanged).
    public let amount: Double
    /// The wavelet level boosted most, 0 (finest) to 4 (thumbor's `radius`).
    public let radius: Double
    /// Sharpen the luminance only (default `false`: each colour channel).
    public let luminanceOnly: Bool

    /// Creates the processor.
    /// - Parameters:
    ///   - amount: detail gain, finite (0 leaves the image unchanged).
    ///   - radius: the level sharpened most, finite.
    ///   - luminanceOnly: sharpen Y only (default `false`).
    public init(amount: Double, radius: Double, luminanceOnly: Bool = false) {
        self.amount = amount
        self.radius = radius
        self.luminanceOnly = luminanceOnly
    }

    /// `com.alcedo.waveletSharpen(<amount>,<radius>,<luminanceOnly>)`.
    public var identifier: String {
        ProcessorSupport.identifier("waveletSharpen", [ProcessorSupport.number(amount), ProcessorSupport.number(radius),
                                                        String(luminanceOnly)])
    }

    /// Sharpens every frame. Throws `.invalidParameter` for an amount or radius that is not finite.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        try ProcessorSupport.requireFinite(amount, "amount", in: "WaveletSharpenImageProcessor")
        try ProcessorSupport.requireFinite(radius, "radius", in: "WaveletSharpenImageProcessor")
        guard amount != 0, image.width > 0, image.height > 0 else { return image }
        let width = image.width, height = image.height
        return image.mappingFrames { pixels in
            Self.sharpen(pixels, width: width, height: height, amount: amount, radius: radius, luminanceOnly: luminanceOnly)
        }
    }

    static func sharpen(_ pixels: [UInt8], width: Int, height: Int, amount: Double, radius: Double, luminanceOnly: Bool) -> [UInt8] {
        let area = width * height
        var planes = [[Float]](repeating: [Float](repeating: 0, count: area), count: 3)
        for i in 0..<area {
            var r = Float(pixels[i * 4]), g = Float(pixels[i * 4 + 1]), b = Float(pixels[i * 4 + 2])
            if luminanceOnly {
                let y: Float = 0.2990 * r + 0.5870 * g + 0.1140 * b
                let cb: Float = -0.1687 * r - 0.3313 * g + 0.5000 * b + 128
                let cr: Float = 0.5000 * r - 0.4187 * g - 0.0813 * b + 128
                (r, g, b) = (y, cb, cr)
            }
            planes[0][i] = r / 255
            planes[1][i] = g / 255
            planes[2][i] = b / 255
        }
        var scratch = [[Float]](repeating: [Float](repeating: 0, count: area), count: 2)
        for channel in 0..<(luminanceOnly ? 1 : 3) {
            transform(&planes[channel], &scratch, width: width, height: height, amount: amount, radius: radius)
        }
        var out = pixels
        for i in 0..<area {
            var r = planes[0][i] * 255, g = planes[1][i] * 255, b = planes[2][i] * 255
            if luminanceOnly {
                let y = r, cb = g, cr = b
                r = y + 1.40200 * (cr - 128)
                g = y - 0.34414 * (cb - 128) - 0.71414 * (cr - 128)
                b = y + 1.77200 * (cb - 128)
            }
            // thumbor clamps, then stores the float in a byte: the fraction is dropped.
            out[i * 4] = UInt8(max(0, min(255, r)))
            out[i * 4 + 1] = UInt8(max(0, min(255, g)))
            out[i * 4 + 2] = UInt8(max(0, min(255, b)))
        }
        return out
    }

    /// The five levels on one plane (values in 0...1), `scratch` holding the two low-pass planes.
    private static func transform(_ plane: inout [Float], _ scratch: inout [[Float]], width: Int, height: Int,
                                  amount: Double, radius: Double) {
        let area = width * height
        var line = [Float](repeating: 0, count: max(width, height))
        var column = [Float](repeating: 0, count: height)
        // Level l reads the high pass `hpass` (the plane itself at first) and writes the low pass `lpass`.
        var hpass = -1
        var lpass = 0
        for level in 0..<5 {
            lpass = level & 1
            let step = 1 << level
            for row in 0..<height {
                let start = row * width
                if hpass < 0 {
                    hat(plane, start: start, stride: 1, size: width, scale: step, into: &line)
                } else {
                    hat(scratch[hpass], start: start, stride: 1, size: width, scale: step, into: &line)
                }
                for x in 0..<width { scratch[lpass][start + x] = line[x] * 0.25 }
            }
            for x in 0..<width {
                hat(scratch[lpass], start: x, stride: width, size: height, scale: step, into: &column)
                for row in 0..<height { scratch[lpass][row * width + x] = column[row] * 0.25 }
            }
            let distance = Double(level) - radius
            let gain = Float(amount * exp(-distance * distance / 1.5) + 1)
            for i in 0..<area {
                if hpass < 0 {
                    plane[i] = (plane[i] - scratch[lpass][i]) * gain
                } else {
                    let detail = (scratch[hpass][i] - scratch[lpass][i]) * gain
                    scratch[hpass][i] = detail
                    plane[i] += detail
                }
            }
            hpass = lpass
        }
        for i in 0..<area { plane[i] += scratch[lpass][i] }
    }

    /// `2·b[i] + b[i - scale] + b[i + scale]` along a line, mirrored at both ends.
    private static func hat(_ base: [Float], start: Int, stride: Int, size: Int, scale: Int, into out: inout [Float]) {
        func mirrored(_ index: Int) -> Int {
            guard size > 1 else { return 0 }
            var i = index
            while i < 0 || i >= size { i = i < 0 ? -i : 2 * size - 2 - i }
            return i
        }
        for i in 0..<size {
            out[i] = 2 * base[start + stride * i] + base[start + stride * mirrored(i - scale)]
                + base[start + stride * mirrored(i + scale)]
        }
    }
}

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

/// Adjusts brightness, contrast, saturation and exposure, with the formulas of CoreImage's
/// `CIColorControls` followed by `CIExposureAdjust` (what Kingfisher runs).
///
/// On each pixel's straight (un-premultiplied) colour, channels as `0...1`, in this order:
///
///     luma  = 0.2126 r + 0.7152 g + 0.0722 b          (Rec. 709 weights)
///     c     = luma + saturation * (c - luma)           saturation: 0 grey, 1 unchanged, > 1 more vivid
///     c     = c + brightness                           brightness: added, 0 unchanged
///     c     = (c - 0.5) * contrast + 0.5               contrast: scales around mid-grey, 1 unchanged
///     c     = clamp(c, 0, 1)
///     c     = srgb(min(1, linear(c) * 2^inputEV))      exposure: multiplies linear light, 0 unchanged
///
/// where `linear` and `srgb` are the sRGB transfer functions (IEC 61966-2-1): exposure acts on
/// light, as `CIExposureAdjust` does in CoreImage's linear working space; the first three act
/// on the sRGB-encoded values. Alpha is kept. Results are rounded to the nearest 8-bit value
/// (exactly: exposure uses precomputed decision thresholds, not an approximating table).
///
/// Identifier: `com.alcedo.colorcontrols(<brightness>,<contrast>,<saturation>,<inputEV>)`,
/// for example `com.alcedo.colorcontrols(0.0,1.0,0.0,0.7)`.
public struct ColorControlsProcessor: ImageProcessor {
    /// Added to each channel (`0...1` scale); 0 leaves the image unchanged.
    public let brightness: Double
    /// The factor around mid-grey; 1 leaves the image unchanged, 0 gives flat grey.
    public let contrast: Double
    /// The factor away from grey; 1 leaves the image unchanged, 0 gives grey.
    public let saturation: Double
    /// The exposure change in stops: linear light is multiplied by `2^inputEV`; 0 leaves it unchanged.
    public let inputEV: Double

    /// Creates a colour-controls processor; the defaults change nothing.
    /// - Parameters:
    ///   - brightness: added to each channel, any finite number (default 0).
    ///   - contrast: factor around mid-grey, at least 0 (default 1).
    ///   - saturation: factor away from the Rec. 709 luma, at least 0 (default 1).
    ///   - inputEV: exposure in stops, any finite number (default 0).
    public init(brightness: Double = 0, contrast: Double = 1, saturation: Double = 1, inputEV: Double = 0) {
        self.brightness = brightness
        self.contrast = contrast
        self.saturation = saturation
        self.inputEV = inputEV
    }

    /// Names the processor and its parameters: `com.alcedo.colorcontrols(<brightness>,<contrast>,<saturation>,<inputEV>)`.
    public var identifier: String {
        ProcessorSupport.identifier("colorcontrols", [brightness, contrast, saturation, inputEV].map(ProcessorSupport.number))
    }

    /// Adjusts every frame. Throws `.invalidParameter` for a non-finite value or a negative
    /// contrast or saturation.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        let name = "ColorControlsProcessor"
        try ProcessorSupport.requireFinite(brightness, "brightness", in: name)
        try ProcessorSupport.requireNonNegative(contrast, "contrast", in: name)
        try ProcessorSupport.requireNonNegative(saturation, "saturation", in: name)
        try ProcessorSupport.requireFinite(inputEV, "inputEV", in: name)
        if brightness == 0 && contrast == 1 && saturation == 1 && inputEV == 0 { return image }
        let curve = ToneCurve(brightness: brightness, contrast: contrast, inputEV: inputEV)
        if saturation == 1 {
            // Every channel on its own: one table for all 256 values.
            let table = (0...255).map { curve.byte(Float($0) / 255) }
            return image.mappingFrames { PixelOps.mapChannels($0, red: table, green: table, blue: table) }
        }
        if saturation == 0 {
            // Grey: one tone-curve lookup per pixel.
            return image.mappingFrames { pixels in
                PixelOps.mapPixels(pixels) { s, d in
                    let luma = (0.2126 * Float(s[0]) + 0.7152 * Float(s[1]) + 0.0722 * Float(s[2])) * (1 / 255)
                    let grey = curve.byte(luma)
                    d[0] = grey
                    d[1] = grey
                    d[2] = grey
                    d[3] = s[3]
                }
            }
        }
        let amount = Float(saturation)
        return image.mappingFrames { pixels in
            PixelOps.mapPixels(pixels) { s, d in
                let color = SIMD3<Float>(Float(s[0]), Float(s[1]), Float(s[2])) * (1 / 255)
                let luma = 0.2126 * color.x + 0.7152 * color.y + 0.0722 * color.z
                let mixed = luma + amount * (color - luma)
                d[0] = curve.byte(mixed.x)
                d[1] = curve.byte(mixed.y)
                d[2] = curve.byte(mixed.z)
                d[3] = s[3]
            }
        }
    }
}

/// Brightness, contrast, clamp and exposure for one channel value, to the nearest byte.
struct ToneCurve {
    private let gain: Float
    private let offset: Float
    /// `thresholds[o - 1]`: the smallest clamped value whose exposed result rounds to `o` or
    /// more, for `o` in `1...255`; empty when there is no exposure change.
    private let thresholds: [Float]
    /// `firstLevel[q]`: how many thresholds are <= `q / 4096`, a starting point for the search.
    private let firstLevel: [UInt8]

    init(brightness: Double, contrast: Double, inputEV: Double) {
        gain = Float(contrast)
        offset = Float((brightness - 0.5) * contrast + 0.5)
        guard inputEV != 0 else {
            thresholds = []
            firstLevel = []
            return
        }
        let factor = pow(2, inputEV)
        // round(255 * srgb(min(1, linear(c) * factor))) >= o  <=>  c >= srgb(linear((o - 0.5) / 255) / factor)
        let thresholds = (1...255).map { level in
            Float(SRGB.encode(SRGB.decode((Double(level) - 0.5) / 255) / factor))
        }
        var level = 0
        firstLevel = (0...4096).map { bin in
            let value = Float(bin) / 4096
            while level < 255 && thresholds[level] <= value { level += 1 }
            return UInt8(level)
        }
        self.thresholds = thresholds
    }

    /// The byte for a channel value `value` (`0...1` scale, possibly outside after saturation).
    @inline(__always)
    func byte(_ value: Float) -> UInt8 {
        // `raw > 0` is false for NaN: a NaN is 0, never a trapping conversion.
        let raw = value * gain + offset
        let c = raw > 0 ? min(raw, 1) : 0
        if thresholds.isEmpty { return UInt8(c * 255 + 0.5) }
        // Exact: start from the level at the bin's lower bound, then step over the thresholds <= c.
        var level = Int(firstLevel[Int(c * 4096)])
        while level < 255 && thresholds[level] <= c { level += 1 }
        return UInt8(level)
    }
}

/// The sRGB transfer functions (IEC 61966-2-1), on `0...1` values.
enum SRGB {
    /// Encoded value to linear light.
    static func decode(_ value: Double) -> Double {
        value <= 0.04045 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
    }

    /// Linear light to encoded value (values above 1 continue the curve).
    static func encode(_ linear: Double) -> Double {
        linear <= 0.0031308 ? linear * 12.92 : 1.055 * pow(linear, 1 / 2.4) - 0.055
    }
}

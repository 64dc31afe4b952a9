import Foundation

/// A colour with `UIColor`'s shape: red, green, blue and alpha components from 0 to 1 in sRGB,
/// the common named colours and `UIColor`'s initialisers, so that Kingfisher code such as
/// `TintImageProcessor(tint: .blue)` or `OverlayImageProcessor(overlay: .red, fraction: 0.7)`
/// compiles unchanged. Kingfisher calls it `KFCrossPlatformColor`.
///
/// Components outside `0...1` are clamped when the colour is turned into a pixel (``rgba``).
/// The `system…` colours have the values of Apple's light appearance.
public struct AlcedoColor: Sendable, Hashable, CustomStringConvertible {
    /// The red component, 0 to 1.
    public var red: CGFloat
    /// The green component, 0 to 1.
    public var green: CGFloat
    /// The blue component, 0 to 1.
    public var blue: CGFloat
    /// The opacity, 0 (transparent) to 1 (opaque).
    public var alpha: CGFloat

    /// Creates a colour from sRGB components from 0 to 1, as `UIColor(red:green:blue:alpha:)`.
    public init(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// Creates a grey: `white` 0 is black, 1 is white, as `UIColor(white:alpha:)`.
    public init(white: CGFloat, alpha: CGFloat) {
        self.init(red: white, green: white, blue: white, alpha: alpha)
    }

    /// Creates a colour from hue, saturation and brightness, each 0 to 1, as
    /// `UIColor(hue:saturation:brightness:alpha:)`.
    public init(hue: CGFloat, saturation: CGFloat, brightness: CGFloat, alpha: CGFloat) {
        let h = (hue - hue.rounded(.down)) * 6
        let sector = Int(h) % 6
        let f = h - CGFloat(Int(h))
        let (v, s) = (brightness, saturation)
        let p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f))
        let rgb: (CGFloat, CGFloat, CGFloat)
        switch sector {
        case 0: rgb = (v, t, p)
        case 1: rgb = (q, v, p)
        case 2: rgb = (p, v, t)
        case 3: rgb = (p, q, v)
        case 4: rgb = (t, p, v)
        default: rgb = (v, p, q)
        }
        self.init(red: rgb.0, green: rgb.1, blue: rgb.2, alpha: alpha)
    }

    /// The colour of a pixel.
    public init(_ rgba: RGBA) {
        self.init(red: CGFloat(rgba.red) / 255, green: CGFloat(rgba.green) / 255,
                  blue: CGFloat(rgba.blue) / 255, alpha: CGFloat(rgba.alpha) / 255)
    }

    /// The same colour with another opacity, as `UIColor.withAlphaComponent(_:)`.
    public func withAlphaComponent(_ alpha: CGFloat) -> AlcedoColor {
        AlcedoColor(red: red, green: green, blue: blue, alpha: alpha)
    }

    /// A colour given in Display P3 (UIKit's `init(displayP3Red:green:blue:alpha:)`), kept as
    /// extended sRGB: a P3 colour outside sRGB has components below 0 or above 1.
    public init(displayP3Red red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat) {
        func linear(_ v: Double) -> Double {
            let m = abs(v)
            let l = m <= 0.04045 ? m / 12.92 : pow((m + 0.055) / 1.055, 2.4)
            return v < 0 ? -l : l
        }
        func encoded(_ v: Double) -> CGFloat {
            let m = abs(v)
            let e = m <= 0.0031308 ? m * 12.92 : 1.055 * pow(m, 1 / 2.4) - 0.055
            return CGFloat(v < 0 ? -e : e)
        }
        let (r, g, b) = (linear(Double(red)), linear(Double(green)), linear(Double(blue)))
        // Linear Display P3 to linear sRGB (both D65).
        self.init(red: encoded(1.2249401 * r - 0.2249404 * g),
                  green: encoded(-0.0420569 * r + 1.0420571 * g),
                  blue: encoded(-0.0196376 * r - 0.0786361 * g + 1.0982735 * b),
                  alpha: alpha)
    }

    /// The components, unclamped (extended sRGB), as Kingfisher's `rgba` reads them.
    public var rgba: (r: CGFloat, g: CGFloat, b: CGFloat, a: CGFloat) { (red, green, blue, alpha) }

    /// The colour as an 8-bit pixel, each component clamped to `0...1` and rounded.
    public var pixel: RGBA {
        func byte(_ value: CGFloat) -> UInt8 {
            guard value.isFinite else { return 0 }
            return UInt8((min(max(value, 0), 1) * 255).rounded())
        }
        return RGBA(red: byte(red), green: byte(green), blue: byte(blue), alpha: byte(alpha))
    }

    /// `#RRGGBBAA`, as Kingfisher's `rgbaDescription` writes a colour.
    public var hex: String {
        let p = pixel
        return String(cFormat: "#%02X%02X%02X%02X", p.red, p.green, p.blue, p.alpha)
    }

    public var description: String { "AlcedoColor(\(hex))" }

    private static func rgb(_ r: Int, _ g: Int, _ b: Int) -> AlcedoColor {
        AlcedoColor(red: CGFloat(r) / 255, green: CGFloat(g) / 255, blue: CGFloat(b) / 255, alpha: 1)
    }

    // `UIColor`'s fixed colours.
    public static let black = AlcedoColor(white: 0, alpha: 1)
    public static let darkGray = AlcedoColor(white: 1.0 / 3, alpha: 1)
    public static let lightGray = AlcedoColor(white: 2.0 / 3, alpha: 1)
    public static let white = AlcedoColor(white: 1, alpha: 1)
    public static let gray = AlcedoColor(white: 0.5, alpha: 1)
    public static let red = AlcedoColor(red: 1, green: 0, blue: 0, alpha: 1)
    public static let green = AlcedoColor(red: 0, green: 1, blue: 0, alpha: 1)
    public static let blue = AlcedoColor(red: 0, green: 0, blue: 1, alpha: 1)
    public static let cyan = AlcedoColor(red: 0, green: 1, blue: 1, alpha: 1)
    public static let yellow = AlcedoColor(red: 1, green: 1, blue: 0, alpha: 1)
    public static let magenta = AlcedoColor(red: 1, green: 0, blue: 1, alpha: 1)
    public static let orange = AlcedoColor(red: 1, green: 0.5, blue: 0, alpha: 1)
    public static let purple = AlcedoColor(red: 0.5, green: 0, blue: 0.5, alpha: 1)
    public static let brown = AlcedoColor(red: 0.6, green: 0.4, blue: 0.2, alpha: 1)
    public static let clear = AlcedoColor(white: 0, alpha: 0)

    // `UIColor`'s system colours, light appearance.
    public static let systemRed = rgb(255, 59, 48)
    public static let systemOrange = rgb(255, 149, 0)
    public static let systemYellow = rgb(255, 204, 0)
    public static let systemGreen = rgb(52, 199, 89)
    public static let systemMint = rgb(0, 199, 190)
    public static let systemTeal = rgb(48, 176, 199)
    public static let systemCyan = rgb(50, 173, 230)
    public static let systemBlue = rgb(0, 122, 255)
    public static let systemIndigo = rgb(88, 86, 214)
    public static let systemPurple = rgb(175, 82, 222)
    public static let systemPink = rgb(255, 45, 85)
    public static let systemBrown = rgb(162, 132, 94)
    public static let systemGray = rgb(142, 142, 147)
}

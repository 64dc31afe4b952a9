import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One filter of a thumbor URL's `filters:` part: its name and its arguments, as written.
///
/// thumbor splits the part at `):`, takes the name before `(`, and ignores a filter whose name
/// it does not know, or whose arguments do not match the filter's patterns: so does Alcedo.
public struct ThumborFilter: Sendable, Hashable {
    public var name: String
    public var arguments: [String]

    /// The filters of `text` (`brightness(10):quality(50)`), those without `(…)` left out.
    public static func list(_ text: String) -> [ThumborFilter] {
        guard !text.isEmpty else { return [] }
        let parts = text.components(separatedBy: "):")
        var filters: [ThumborFilter] = []
        for (index, part) in parts.enumerated() {
            let call = index == parts.count - 1 ? part : part + ")"
            guard let open = call.firstIndex(of: "("), call.hasSuffix(")") else { continue }
            let name = String(call[..<open])
            let inside = call[call.index(after: open)..<call.index(before: call.endIndex)]
            let arguments = inside.isEmpty ? [] : Self.split(inside)
            filters.append(ThumborFilter(name: name, arguments: arguments))
        }
        return filters
    }

    /// The arguments split at commas outside single quotes, each trimmed.
    private static func split(_ text: Substring) -> [String] {
        var arguments: [String] = []
        var current = ""
        var quoted = false
        for character in text {
            if character == "'" { quoted.toggle() }
            if character == ",", !quoted {
                arguments.append(current.trimmingSpaces())
                current = ""
            } else {
                current.append(character)
            }
        }
        arguments.append(current.trimmingSpaces())
        return arguments
    }

    /// thumbor's 30 built-in filters and `autojpg`, by name.
    public static let builtIn: Set<String> = [
        "autojpg", "background_color", "blur", "brightness", "colorize", "contrast", "convolution", "curve", "equalize",
        "extract_focal", "fill", "focal", "format", "frame", "grayscale", "max_age", "max_bytes", "no_upscale", "noise",
        "proportion", "quality", "rgb", "rotate", "round_corner", "saturation", "sharpen", "stretch", "strip_exif",
        "strip_icc", "upscale", "watermark",
    ]

    /// Filters thumbor 7.8 ships but loads only when `FILTERS` names them (they are not in its
    /// `BUILTIN_FILTERS`): ignored unless ``ThumborRules/filters`` lists them.
    public static let optIn: Set<String> = ["autojpg"]

    // MARK: Argument patterns (thumbor's BaseFilter types)

    /// `[-]?\d+` (`Number`), within ±1,000,000.
    func integer(_ index: Int, negative: Bool = true) -> Int? {
        guard index < arguments.count else { return nil }
        var text = Substring(arguments[index])
        if negative, text.hasPrefix("-") { text = text.dropFirst() }
        guard !text.isEmpty, text.utf8.count <= 7, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(text) else { return nil }
        return arguments[index].hasPrefix("-") && negative ? -value : value
    }

    /// `DecimalNumber`: `[-]?(\d+\.?\d*|\d*\.?\d+)`, finite.
    func decimal(_ index: Int) -> Double? {
        guard index < arguments.count else { return nil }
        var text = Substring(arguments[index])
        if text.hasPrefix("-") { text = text.dropFirst() }
        guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ (0x30...0x39).contains($0) || $0 == UInt8(ascii: ".") }),
              text.utf8.filter({ $0 == UInt8(ascii: ".") }).count <= 1, text != ".",
              let value = Double(text.hasPrefix(".") ? "0" + text : String(text)), value.isFinite else { return nil }
        return arguments[index].hasPrefix("-") ? -value : value
    }

    /// `Boolean`: `true`/`True`/`1` or `false`/`False`/`0`; `fallback` when the argument is absent.
    func boolean(_ index: Int, default fallback: Bool) -> Bool? {
        guard index < arguments.count else { return fallback }
        switch arguments[index] {
        case "true", "True", "1": return true
        case "false", "False", "0": return false
        default: return nil
        }
    }

    /// `String`: the argument, without surrounding single quotes.
    func string(_ index: Int) -> String? {
        guard index < arguments.count, !arguments[index].isEmpty else { return nil }
        let text = arguments[index]
        if text.count >= 2, text.hasPrefix("'"), text.hasSuffix("'") { return String(text.dropFirst().dropLast()) }
        return text
    }

    /// A colour as thumbor's engine reads it: a CSS name Pillow knows (the common ones), or hex
    /// `RGB`/`RRGGBB` with or without `#`; `nil` for anything else.
    static func color(_ text: String) -> RGBA? {
        let named: [String: RGBA] = [
            "white": .white, "black": .black, "red": RGBA(red: 255, green: 0, blue: 0), "lime": RGBA(red: 0, green: 255, blue: 0),
            "green": RGBA(red: 0, green: 128, blue: 0), "blue": RGBA(red: 0, green: 0, blue: 255),
            "yellow": RGBA(red: 255, green: 255, blue: 0), "cyan": RGBA(red: 0, green: 255, blue: 255),
            "magenta": RGBA(red: 255, green: 0, blue: 255), "gray": RGBA(red: 128, green: 128, blue: 128),
            "grey": RGBA(red: 128, green: 128, blue: 128), "silver": RGBA(red: 192, green: 192, blue: 192),
            "orange": RGBA(red: 255, green: 165, blue: 0), "purple": RGBA(red: 128, green: 0, blue: 128),
            "transparent": .clear,
        ]
        let lowered = text.lowercased()
        if let color = named[lowered] { return color }
        let hex = lowered.hasPrefix("#") ? String(lowered.dropFirst()) : lowered
        guard hex.count == 3 || hex.count == 6 else { return nil }
        return try? ProcessingOptions.color(hex, "color")
    }
}

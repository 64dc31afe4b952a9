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

    /// The filters of `text` (`brightness(10):quality(50)`) whose arguments match thumbor's
    /// patterns for them (``patterns``), each with its matched arguments; the others left out.
    ///
    /// thumbor splits the part at `):`, matches each piece against `NAME\(ARGS\)` from its
    /// start (what follows the `)` is not read: `brightness(40)grayscale()` is `brightness(40)`),
    /// allows spaces around each argument, and drops a filter with too few or too many
    /// arguments (`grayscale(1)`, `brightness(10,20)`) or one of the wrong kind.
    public static func list(_ text: String) -> [ThumborFilter] {
        guard !text.isEmpty else { return [] }
        let parts = text.components(separatedBy: "):")
        var filters: [ThumborFilter] = []
        for (index, part) in parts.enumerated() {
            let call = index == parts.count - 1 ? part : part + ")"
            guard let open = call.firstIndex(of: "(") else { continue }
            let name = String(call[..<open])
            if let arguments = matchedArguments(name, call) { filters.append(ThumborFilter(name: name, arguments: arguments)) }
        }
        return filters
    }

    /// The arguments of `call` as thumbor's pattern for `name` matches them from its start (the
    /// groups that matched something, quotes around a string argument removed), `nil` when it
    /// does not match or the filter is unknown.
    static func matchedArguments(_ name: String, _ call: String) -> [String]? {
        guard let parameters = patterns[name] else { return nil }
        // Filter names are letters and underscores: nothing in them needs escaping.
        var source = name + "\\("
        for (index, parameter) in parameters.enumerated() {
            source += "(?:" + (index > 0 ? "," : "") + "\\s*(" + parameter.kind.pattern + ")\\s*)" + (parameter.optional ? "?" : "")
        }
        source += "\\)"
        guard let regex = try? Regex(source), let match = try? regex.prefixMatch(in: call) else { return nil }
        var arguments: [String] = []
        for (index, parameter) in parameters.enumerated() {
            guard let text = match.output[index + 1].substring, !text.isEmpty else { continue }
            arguments.append(parameter.kind == .string ? Self.unquoted(String(text)) : String(text))
        }
        return arguments
    }

    /// `'…'` without its quotes (thumbor's `^'(.+)'$`).
    private static func unquoted(_ text: String) -> String {
        text.count > 2 && text.hasPrefix("'") && text.hasSuffix("'") ? String(text.dropFirst().dropLast()) : text
    }

    /// One argument of a filter: its kind and whether it may be left out.
    struct Parameter: Sendable {
        var kind: Kind
        var optional = false

        /// thumbor's `BaseFilter` argument types, and the few patterns filters write themselves.
        enum Kind: Sendable, Equatable {
            case positive, positiveNonZero, number, decimal, boolean, string
            case custom(String)

            var pattern: String {
                switch self {
                case .positive: return "[\\d]+"
                case .positiveNonZero: return "[\\d]*[1-9][\\d]*"
                case .number: return "[-]?[\\d]+"
                case .decimal: return "[-]?(?:(?:[\\d]+\\.?[\\d]*)|(?:[\\d]*\\.?[\\d]+))"
                case .boolean: return "[Tt]rue|[Ff]alse|1|0"
                case .string: return "(?:'.+?')|(?:[^,]+?)"
                case .custom(let pattern): return pattern
                }
            }
        }

        static func required(_ kind: Kind) -> Parameter { Parameter(kind: kind) }
        static func optional(_ kind: Kind) -> Parameter { Parameter(kind: kind, optional: true) }
    }

    /// thumbor 7.8's argument patterns, filter by filter (each filter's `filter_method`).
    static let patterns: [String: [Parameter]] = {
        let coordinate = Parameter.Kind.custom("(?:-?\\d+p?)|center|repeat"), ratio = Parameter.Kind.custom("(?:-?\\d+)|none")
        let curve = Parameter.required(.custom("\\[(?:\\(\\d+,\\d+\\),?)*\\]")), word = Parameter.required(.custom("[\\w]+"))
        return [
            "autojpg": [.optional(.boolean)], "background_color": [word],
            "blur": [.required(.positiveNonZero), .optional(.decimal)], "brightness": [.required(.number)],
            "colorize": [.required(.positive), .required(.positive), .required(.positive), .required(.string)],
            "contrast": [.required(.number)],
            "convolution": [.required(.custom("-?\\d+(?:\\.\\d*)?(?:;-?\\d+(?:\\.\\d*)?)*")), .required(.positiveNonZero),
                            .optional(.boolean)],
            "curve": [curve, curve, curve, curve], "equalize": [], "extract_focal": [],
            "fill": [word, .optional(.boolean)], "focal": [.required(.string)],
            "format": [.required(.string)], "frame": [.required(.string)], "grayscale": [], "max_age": [.required(.positive)],
            "max_bytes": [.required(.positive)], "no_upscale": [], "noise": [.required(.positive), .optional(.positive)],
            "proportion": [.required(.decimal)], "quality": [.required(.positive)],
            "rgb": [.required(.number), .required(.number), .required(.number)], "rotate": [.required(.number)],
            "round_corner": [.required(.custom("[\\d]+(?:\\|[\\d]+)?")), .required(.positive), .required(.positive),
                             .required(.positive), .optional(.boolean)],
            "saturation": [.required(.decimal)], "sharpen": [.required(.decimal), .required(.decimal), .required(.boolean)],
            "stretch": [], "strip_exif": [], "strip_icc": [], "upscale": [],
            "watermark": [.required(.string), .required(coordinate), .required(coordinate), .required(.positive), .optional(ratio),
                          .optional(ratio)],
        ]
    }()

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
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An explicit JSON `null` in the `[String: Any]` objects ``JSONText`` writes (what `NSNull`
/// is to Foundation's `JSONSerialization`).
package struct JSONNull: Sendable, Equatable {
    package init() {}
}

/// Writes the `[String: Any]` objects of `alcedo info --json`, `fetch --json` and the server's
/// `/info` as JSON text, as Foundation's `JSONSerialization` writes them: strings, integers,
/// doubles (whole ones without a fraction), booleans, arrays, objects, ``JSONNull`` and `nil`
/// optionals as `null`. Not-finite numbers, which JSON cannot hold, are written as `null`.
package enum JSONText {
    /// The JSON text of `value`; keys sorted when `sortedKeys` (default `true`), `/` written
    /// as `\/` when `escapingSlashes` (default `false`; `JSONSerialization` escapes them
    /// unless told `.withoutEscapingSlashes`).
    package static func string(_ value: Any, sortedKeys: Bool = true, escapingSlashes: Bool = false) -> String {
        var out = ""
        write(value, into: &out, sortedKeys: sortedKeys, escapingSlashes: escapingSlashes)
        return out
    }

    /// ``string(_:sortedKeys:escapingSlashes:)`` as UTF-8 bytes.
    package static func data(_ value: Any, sortedKeys: Bool = true, escapingSlashes: Bool = false) -> Data {
        Data(string(value, sortedKeys: sortedKeys, escapingSlashes: escapingSlashes).utf8)
    }

    private static func write(_ value: Any, into out: inout String, sortedKeys: Bool, escapingSlashes: Bool) {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { out += "null"; return }
            write(wrapped, into: &out, sortedKeys: sortedKeys, escapingSlashes: escapingSlashes)
            return
        }
        switch value {
        case is JSONNull:
            out += "null"
        case let text as String:
            writeString(text, into: &out, escapingSlashes: escapingSlashes)
        case let text as Substring:
            writeString(String(text), into: &out, escapingSlashes: escapingSlashes)
        case let flag as Bool:
            out += flag ? "true" : "false"
        case let number as any BinaryInteger:
            out += String(describing: number)
        case let number as Double:
            writeNumber(number, into: &out)
        case let number as Float:
            writeNumber(Double(number), into: &out)
        case let object as [String: Any]:
            out += "{"
            let keys = sortedKeys ? object.keys.sorted() : Array(object.keys)
            for (index, key) in keys.enumerated() {
                if index > 0 { out += "," }
                writeString(key, into: &out, escapingSlashes: escapingSlashes)
                out += ":"
                write(object[key]!, into: &out, sortedKeys: sortedKeys, escapingSlashes: escapingSlashes)
            }
            out += "}"
        case let array as [Any]:
            out += "["
            for (index, element) in array.enumerated() {
                if index > 0 { out += "," }
                write(element, into: &out, sortedKeys: sortedKeys, escapingSlashes: escapingSlashes)
            }
            out += "]"
        default:
            writeString(String(describing: value), into: &out, escapingSlashes: escapingSlashes)
        }
    }

    private static func writeNumber(_ number: Double, into out: inout String) {
        guard number.isFinite else { out += "null"; return }
        if number == number.rounded(), abs(number) < 1e15 {
            out += String(Int64(number))
        } else {
            out += String(describing: number)
        }
    }

    private static func writeString(_ text: String, into out: inout String, escapingSlashes: Bool) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/": out += escapingSlashes ? "\\/" : "/"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}

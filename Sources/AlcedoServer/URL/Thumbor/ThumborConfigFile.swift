import Alcedo

/// The plain assignments of a `thumbor.conf`, read as data: the file is Python, but only lines
/// `NAME = LITERAL` at the start of a line are taken, where `LITERAL` is a string (`'…'`,
/// `"…"`), a number, `True`, `False`, `None`, or a list or tuple of those (over several lines
/// when its brackets are open). Nothing is executed; any other line (imports, expressions,
/// computed values) is skipped and named in ``skippedLines``.
public struct ThumborConfigFile: Sendable, Hashable {
    /// A value of the file.
    public enum Value: Sendable, Hashable, CustomStringConvertible {
        case string(String)
        case number(Double)
        case bool(Bool)
        case none
        case list([Value])

        /// The value as Alcedo's settings read text: lists comma-separated, booleans `true`/`false`.
        public var description: String {
            switch self {
            case .string(let text): return text
            case .number(let value): return value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
            case .bool(let value): return value ? "true" : "false"
            case .none: return ""
            case .list(let items): return items.map(\.description).joined(separator: ",")
            }
        }
    }

    /// The assignments, by name (the last one wins, as in Python).
    public var values: [String: Value] = [:]
    /// The numbers (1-based) of the lines that were not plain assignments.
    public var skippedLines: [Int] = []

    /// Reads a file's text.
    public init(text: String) {
        var pending = "", pendingLine = 0
        for (offset, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let code = Self.withoutComment(line)
            if pending.isEmpty {
                if code.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\r" }) { continue }
                pendingLine = offset + 1
            }
            pending += (pending.isEmpty ? "" : " ") + code
            if Self.opensBrackets(pending) { continue }
            if !assign(pending) { skippedLines.append(pendingLine) }
            pending = ""
        }
        if !pending.isEmpty { skippedLines.append(pendingLine) }
    }

    private mutating func assign(_ statement: String) -> Bool {
        guard let first = statement.first, first.isLetter || first == "_", let equals = statement.firstIndex(of: "=") else { return false }
        let name = statement[..<equals].trimmingSpaces()
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }), name.utf8.allSatisfy({ $0 < 0x80 }) else { return false }
        var parser = LiteralParser(Array(statement[statement.index(after: equals)...].unicodeScalars))
        guard let value = parser.value(), parser.atEnd else { return false }
        values[String(name)] = value
        return true
    }

    /// The line up to a `#` outside quotes.
    private static func withoutComment(_ line: Substring) -> String {
        var quote: Character?
        var result = ""
        for character in line {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "#" {
                break
            }
            result.append(character)
        }
        return result
    }

    /// Whether more `[` and `(` than `]` and `)` are open outside quotes.
    private static func opensBrackets(_ text: String) -> Bool {
        var depth = 0
        var quote: Character?
        for character in text {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "[" || character == "(" {
                depth += 1
            } else if character == "]" || character == ")" {
                depth -= 1
            }
        }
        return depth > 0
    }

    /// A recursive reader of Python literals, bounded in depth.
    private struct LiteralParser {
        let scalars: [Unicode.Scalar]
        var index = 0

        init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

        var atEnd: Bool {
            mutating get {
                skipSpaces()
                return index >= scalars.count
            }
        }

        mutating func skipSpaces() {
            while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" || scalars[index] == "\r" { index += 1 }
        }

        mutating func value(depth: Int = 0) -> Value? {
            skipSpaces()
            guard index < scalars.count, depth < 8 else { return nil }
            let scalar = scalars[index]
            if scalar == "'" || scalar == "\"" { return string(quote: scalar) }
            if scalar == "[" || scalar == "(" { return list(close: scalar == "[" ? "]" : ")", depth: depth) }
            var word = ""
            while index < scalars.count, scalars[index].properties.isAlphabetic || ("0"..."9").contains(scalars[index])
                    || scalars[index] == "." || scalars[index] == "-" || scalars[index] == "+" || scalars[index] == "_" {
                word.unicodeScalars.append(scalars[index])
                index += 1
            }
            switch word {
            case "True": return .bool(true)
            case "False": return .bool(false)
            case "None": return Value.none
            default:
                guard let number = Double(word.replacing(literal: "_", with: "")), number.isFinite else { return nil }
                return .number(number)
            }
        }

        mutating func string(quote: Unicode.Scalar) -> Value? {
            index += 1
            var text = ""
            while index < scalars.count, scalars[index] != quote {
                if scalars[index] == "\\", index + 1 < scalars.count { index += 1 }
                text.unicodeScalars.append(scalars[index])
                index += 1
            }
            guard index < scalars.count else { return nil }
            index += 1
            return .string(text)
        }

        mutating func list(close: Unicode.Scalar, depth: Int) -> Value? {
            index += 1
            var items: [Value] = []
            while true {
                skipSpaces()
                guard index < scalars.count else { return nil }
                if scalars[index] == close {
                    index += 1
                    return .list(items)
                }
                guard let item = value(depth: depth + 1) else { return nil }
                items.append(item)
                skipSpaces()
                guard index < scalars.count else { return nil }
                if scalars[index] == "," { index += 1 } else if scalars[index] != close { return nil }
            }
        }
    }
}

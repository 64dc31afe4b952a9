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

// The few text helpers Alcedo needs from full Foundation, written on the standard library and
// FoundationEssentials. Full Foundation on Linux brings CoreFoundation and ICU's 30 MB data
// table into every executable that touches one of its string extensions; these keep the
// `alcedo` binary free of them (see "Install and deploy" in the README).

extension StringProtocol {
    /// The text without the white space and line breaks at either end (what Foundation's
    /// `trimmingCharacters(in: .whitespacesAndNewlines)` returns).
    package func trimmingWhitespace() -> String {
        trimmed { $0.properties.isWhitespace }
    }

    /// The text without the white space at either end; line breaks are kept (what
    /// Foundation's `trimmingCharacters(in: .whitespaces)` returns: Unicode white space that
    /// is not a line or paragraph separator).
    package func trimmingSpaces() -> String {
        trimmed { $0.properties.isWhitespace && !Self.isLineBreak($0) }
    }

    private static func isLineBreak(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A...0x0D, 0x85, 0x2028, 0x2029: true
        default: false
        }
    }

    private func trimmed(_ drop: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !drop($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !drop($0) })!
        var result = ""
        result.unicodeScalars.append(contentsOf: scalars[first...last])
        return result
    }

    /// The text with every `%XX` escape decoded, or `nil` when a `%` is not followed by two
    /// hexadecimal digits or the decoded bytes are not UTF-8 (Foundation's
    /// `removingPercentEncoding`).
    package var percentDecoded: String? {
        let bytes = Array(utf8)
        guard bytes.contains(UInt8(ascii: "%")) else { return String(self) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, let high = hexValue(bytes[index + 1]),
                      let low = hexValue(bytes[index + 2]) else { return nil }
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(byte)
                index += 1
            }
        }
        return String(validating: decoded, as: UTF8.self)
    }

    /// The text with every UTF-8 byte that `allowed` refuses written as `%XX` (upper-case hex),
    /// as Foundation's `addingPercentEncoding(withAllowedCharacters:)` does for an ASCII set.
    package func percentEncoded(allowing allowed: (UInt8) -> Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        for byte in utf8 {
            if byte < 0x80, allowed(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigit(byte >> 4))
                out.append(hexDigit(byte & 0x0F))
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The text padded with spaces at its end to `width` characters; longer text is returned
    /// whole.
    package func padded(to width: Int) -> String {
        count >= width ? String(self) : String(self) + String(repeating: " ", count: width - count)
    }
}

// Literal search, code unit by code unit, as full Foundation's `contains`, `range(of:)` and
// `replacingOccurrences(of:with:)` search. The standard library's `contains("/")` and
// `firstRange(of:)` compare whole characters, so a combining mark after `/` (`"/\u{301}"`, one
// character) hides the slash from them, though a file system or a URL parser still sees it:
// checks on paths, hosts, URLs and markup must use these.
extension String {
    /// `true` when `needle`'s UTF-8 bytes occur in the text (an empty needle is not found).
    package func contains(literal needle: String) -> Bool { range(ofLiteral: needle) != nil }

    /// The first range whose UTF-8 bytes are `needle`'s, or `nil` (also for an empty needle).
    package func range(ofLiteral needle: String) -> Range<Index>? { self[...].range(ofLiteral: needle) }

    /// The text with every non-overlapping occurrence of `needle`'s bytes, left to right,
    /// replaced by `replacement`.
    package func replacing(literal needle: String, with replacement: String) -> String {
        self[...].replacing(literal: needle, with: replacement)
    }
}

extension Substring {
    /// `true` when `needle`'s UTF-8 bytes occur in the text (an empty needle is not found).
    package func contains(literal needle: String) -> Bool { range(ofLiteral: needle) != nil }

    /// The first range whose UTF-8 bytes are `needle`'s, or `nil` (also for an empty needle).
    package func range(ofLiteral needle: String) -> Range<Index>? {
        firstRange(ofBytes: needle, folding: { $0 })
    }

    /// The first range of `needle`'s UTF-8 bytes once both sides are mapped by `fold`.
    /// At most the text's length times the needle's comparisons; the needles are short words.
    fileprivate func firstRange(ofBytes needle: String, folding fold: (UInt8) -> UInt8) -> Range<Index>? {
        let pattern = needle.utf8.map(fold)
        guard let head = pattern.first else { return nil }
        let bytes = utf8
        var start = bytes.startIndex
        while let found = bytes[start...].firstIndex(where: { fold($0) == head }) {
            var position = bytes.index(after: found)
            var matched = 1
            while matched < pattern.count, position < bytes.endIndex, fold(bytes[position]) == pattern[matched] {
                matched += 1
                position = bytes.index(after: position)
            }
            if matched == pattern.count { return found..<position }
            start = bytes.index(after: found)
        }
        return nil
    }

    /// The text with every non-overlapping occurrence of `needle`'s bytes, left to right,
    /// replaced by `replacement`.
    package func replacing(literal needle: String, with replacement: String) -> String {
        var result = String.UnicodeScalarView()
        var rest = unicodeScalars[...]
        while let found = Substring(rest).range(ofLiteral: needle) {
            result.append(contentsOf: rest[rest.startIndex..<found.lowerBound])
            result.append(contentsOf: replacement.unicodeScalars)
            rest = rest[found.upperBound...]
        }
        result.append(contentsOf: rest)
        return String(result)
    }
}

extension UInt8 {
    /// `true` for the ASCII letters and digits (the ASCII part of Foundation's
    /// `CharacterSet.alphanumerics`).
    package var isASCIIAlphanumeric: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }

    /// `true` for the bytes Foundation's `urlPathAllowed` holds, but `/`: letters, digits,
    /// `-._~`, `!$&'()*+,=`, `:` and `@` (RFC 3986's path characters but `;`).
    package var isURLPathSegmentAllowed: Bool {
        if isASCIIAlphanumeric { return true }
        switch self {
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"),
             UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
             UInt8(ascii: ","), UInt8(ascii: "="), UInt8(ascii: ":"),
             UInt8(ascii: "@"):
            return true
        default:
            return false
        }
    }
}

extension Unicode.Scalar {
    /// `true` for the ASCII letters and digits.
    package var isASCIIAlphanumeric: Bool { isASCII && UInt8(value).isASCIIAlphanumeric }
}

extension String {
    /// The first range of `other`, compared byte by byte without regard to ASCII letter case.
    package func firstRangeIgnoringCase(of other: String) -> Range<Index>? {
        self[...].firstRange(ofBytes: other, folding: asciiLowercased)
    }

    /// The text C's `snprintf` makes of `format` and `arguments`: numeric conversions only
    /// (`%d` wants `Int32`, `%ld` `Int`, `%f`/`%g` `Double`, `%x`/`%X` `UInt32`), which is all
    /// Alcedo formats. Foundation's `String(format:)` needs full Foundation.
    package init(cFormat format: String, _ arguments: any CVarArg...) {
        self = withVaList(arguments) { list in
            var buffer = [CChar](repeating: 0, count: 128)
            let needed = Int(vsnprintf(&buffer, buffer.count, format, list))
            if needed < buffer.count { return String(nulTerminated: buffer) }
            buffer = [CChar](repeating: 0, count: needed + 1)
            return withVaList(arguments) { again in
                _ = vsnprintf(&buffer, buffer.count, format, again)
                return String(nulTerminated: buffer)
            }
        }
    }

    /// The UTF-8 text of a C buffer up to its first NUL (all of it when there is none).
    package init(nulTerminated buffer: [CChar]) {
        let end = buffer.firstIndex(of: 0) ?? buffer.endIndex
        self = String(decoding: buffer[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The last path component's extension (after the last `.`; empty when there is none or
    /// the name starts with its only dot), as `NSString.pathExtension` reads it.
    package var filePathExtension: String {
        let name = split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }

    /// The path without its last component, as `NSString.deletingLastPathComponent` reads it:
    /// `"/a/b"` gives `"/a"`, `"/a"` gives `"/"`, `"a"` gives `""`; repeated slashes count as one.
    package var deletingLastFilePathComponent: String {
        let absolute = hasPrefix("/")
        var parts = split(separator: "/")
        guard !parts.isEmpty else { return absolute ? "/" : "" }
        parts.removeLast()
        let joined = parts.joined(separator: "/")
        return absolute ? "/" + joined : joined
    }
}

/// `bytes` as lower-case hexadecimal digits, two per byte (a digest's usual text form).
package func lowercaseHex(_ bytes: some Sequence<UInt8>) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(bytes.underestimatedCount * 2)
    for byte in bytes {
        out.append(lowercaseHexDigit(byte >> 4))
        out.append(lowercaseHexDigit(byte & 0x0F))
    }
    return String(decoding: out, as: UTF8.self)
}

/// A one-line reason for `error`: its `LocalizedError` description, the system's message for
/// a POSIX error (also one under a FoundationEssentials file error), or its `description`.
package func errorReason(_ error: any Error) -> String {
    if let localized = error as? any LocalizedError, let text = localized.errorDescription { return text }
    if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
    if let cocoa = error as? CocoaError {
        if let underlying = cocoa.userInfo["NSUnderlyingError"] as? POSIXError {
            return String(cString: strerror(underlying.code.rawValue))
        }
        if let path = cocoa.userInfo["NSFilePath"] as? String { return "\(cocoa.code) (\(path))" }
    }
    return String(describing: error)
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}

private func hexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
}

private func lowercaseHexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
}

private func asciiLowercased(_ byte: UInt8) -> UInt8 {
    (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
}

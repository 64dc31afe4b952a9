#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Removes what can run code from an SVG document that is to be served as SVG (a browser
/// runs scripts in an SVG opened as a document), keeping everything else byte for byte.
///
/// Removed: `<script>` elements (with any namespace prefix, and their content); every
/// attribute whose name starts with `on` (event handlers such as `onload`); every attribute
/// whose value, after character references are decoded and blanks dropped, starts with
/// `javascript:` (`href`, `xlink:href`, `src`, an `<animate>`'s `to`…); and the document type
/// declaration with its internal subset, whose entities could smuggle markup past the rest.
/// Comments, CDATA sections, processing instructions and text are kept as they are.
///
/// The scan is linear in the size of the document and never fails: malformed markup is
/// copied as far as it goes (a browser will not render it as SVG either).
public enum SVGSanitizer {
    /// The document `data` with scripts, event attributes and `javascript:` values removed.
    public static func sanitize(_ data: Data) -> Data {
        var scanner = Scanner(bytes: [UInt8](data))
        return Data(scanner.run())
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        var output: [UInt8] = []

        init(bytes: [UInt8]) {
            self.bytes = bytes
            output.reserveCapacity(bytes.count)
        }

        func starts(with text: String, at position: Int) -> Bool {
            let pattern = Array(text.utf8)
            guard position + pattern.count <= bytes.count else { return false }
            for (offset, byte) in pattern.enumerated() {
                let actual = bytes[position + offset]
                let lower = (actual >= 65 && actual <= 90) ? actual + 32 : actual
                if lower != byte { return false }
            }
            return true
        }

        /// The index just past the first `terminator` at or after `position` (the end when none).
        func end(of terminator: String, from position: Int) -> Int {
            var i = position
            while i < bytes.count {
                if starts(with: terminator, at: i) { return i + terminator.utf8.count }
                i += 1
            }
            return bytes.count
        }

        mutating func copy(to end: Int) {
            output.append(contentsOf: bytes[index..<end])
            index = end
        }

        mutating func run() -> [UInt8] {
            while index < bytes.count {
                guard let next = bytes[index...].firstIndex(of: UInt8(ascii: "<")) else {
                    copy(to: bytes.count)
                    break
                }
                copy(to: next)
                if starts(with: "<!--", at: index) {
                    copy(to: end(of: "-->", from: index + 4))
                } else if starts(with: "<![cdata[", at: index) {
                    copy(to: end(of: "]]>", from: index + 9))
                } else if starts(with: "<!doctype", at: index) {
                    index = endOfDoctype(from: index + 9)
                } else if starts(with: "<?", at: index) {
                    copy(to: end(of: "?>", from: index + 2))
                } else if starts(with: "</", at: index) {
                    copy(to: endOfTag(from: index + 2).end)
                } else {
                    element()
                }
            }
            return output
        }

        /// Skips a doctype, its bracketed internal subset and quoted strings included.
        func endOfDoctype(from position: Int) -> Int {
            var i = position
            var depth = 0
            var quote: UInt8?
            while i < bytes.count {
                let byte = bytes[i]
                if let open = quote {
                    if byte == open { quote = nil }
                } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                    quote = byte
                } else if byte == UInt8(ascii: "[") {
                    depth += 1
                } else if byte == UInt8(ascii: "]") {
                    depth = max(0, depth - 1)
                } else if byte == UInt8(ascii: ">") && depth == 0 {
                    return i + 1
                }
                i += 1
            }
            return bytes.count
        }

        /// The end of a tag starting at `position` (past its `>`), quoted values skipped, and
        /// whether it closes itself (`/>`).
        func endOfTag(from position: Int) -> (end: Int, selfClosing: Bool) {
            var i = position
            var quote: UInt8?
            while i < bytes.count {
                let byte = bytes[i]
                if let open = quote {
                    if byte == open { quote = nil }
                } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                    quote = byte
                } else if byte == UInt8(ascii: ">") {
                    return (i + 1, i > position && bytes[i - 1] == UInt8(ascii: "/"))
                }
                i += 1
            }
            return (bytes.count, false)
        }

        static func isNameByte(_ byte: UInt8) -> Bool {
            !(byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == UInt8(ascii: ">")
              || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "="))
        }

        static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

        /// An opening tag at `index`: a script is dropped with its content; other tags are
        /// copied without their dangerous attributes.
        mutating func element() {
            var i = index + 1
            let nameStart = i
            while i < bytes.count && Self.isNameByte(bytes[i]) { i += 1 }
            let name = String(decoding: bytes[nameStart..<i], as: UTF8.self)
            let localName = (name.split(separator: ":").last.map(String.init) ?? name).lowercased()
            let tag = endOfTag(from: i)
            if localName == "script" {
                index = tag.selfClosing ? tag.end : endOfScript(named: name, from: tag.end)
                return
            }
            output.append(contentsOf: bytes[index..<i])
            attributes(from: i, to: tag.end)
            index = tag.end
        }

        /// Past the `</name>` that closes a script whose content starts at `position`.
        func endOfScript(named name: String, from position: Int) -> Int {
            var i = position
            while i < bytes.count {
                if starts(with: "</", at: i) {
                    var j = i + 2
                    let start = j
                    while j < bytes.count && Self.isNameByte(bytes[j]) { j += 1 }
                    let closing = String(decoding: bytes[start..<j], as: UTF8.self)
                    if closing.lowercased() == name.lowercased() { return endOfTag(from: j).end }
                }
                i += 1
            }
            return bytes.count
        }

        /// Copies the attributes between `start` and `end` (the tag's end, past `>`), leaving
        /// out event handlers and `javascript:` values.
        mutating func attributes(from start: Int, to end: Int) {
            var i = start
            while i < end {
                // Blanks, and the closing `/>` or `>`, are copied as they are.
                if Self.isBlank(bytes[i]) || bytes[i] == UInt8(ascii: "/") || bytes[i] == UInt8(ascii: ">") {
                    output.append(bytes[i])
                    i += 1
                    continue
                }
                let attributeStart = i
                while i < end && Self.isNameByte(bytes[i]) { i += 1 }
                let name = String(decoding: bytes[attributeStart..<i], as: UTF8.self).lowercased()
                var j = i
                while j < end && Self.isBlank(bytes[j]) { j += 1 }
                var value: ArraySlice<UInt8> = []
                if j < end && bytes[j] == UInt8(ascii: "=") {
                    j += 1
                    while j < end && Self.isBlank(bytes[j]) { j += 1 }
                    if j < end, bytes[j] == UInt8(ascii: "\"") || bytes[j] == UInt8(ascii: "'") {
                        let quote = bytes[j]
                        let valueStart = j + 1
                        j = valueStart
                        while j < end && bytes[j] != quote { j += 1 }
                        value = bytes[valueStart..<min(j, end)]
                        j = min(end, j + 1)
                    } else {
                        let valueStart = j
                        while j < end && Self.isNameByte(bytes[j]) { j += 1 }
                        value = bytes[valueStart..<j]
                    }
                    i = j
                }
                if i == attributeStart { i += 1 }  // a stray byte: keep moving
                let local = name.split(separator: ":").last.map(String.init) ?? name
                if local.hasPrefix("on") || Self.isScriptURL(value) { continue }
                output.append(contentsOf: bytes[attributeStart..<i])
            }
        }

        /// `true` when a value starts with `javascript:` once character references are
        /// decoded and blanks and control characters dropped, as browsers read URLs.
        static func isScriptURL(_ value: ArraySlice<UInt8>) -> Bool {
            var decoded: [UInt8] = []
            var i = value.startIndex
            while i < value.endIndex && decoded.count < 16 {
                let byte = value[i]
                if byte == UInt8(ascii: "&"), let semicolon = value[i...].prefix(12).firstIndex(of: UInt8(ascii: ";")) {
                    let reference = String(decoding: value[(i + 1)..<semicolon], as: UTF8.self).lowercased()
                    var scalar: UInt32?
                    if reference.hasPrefix("#x") { scalar = UInt32(reference.dropFirst(2), radix: 16) }
                    else if reference.hasPrefix("#") { scalar = UInt32(reference.dropFirst(1)) }
                    else if reference == "colon" { scalar = 58 }
                    else if reference == "tab" || reference == "newline" { scalar = 9 }
                    if let scalar {
                        if scalar > 0x20 && scalar < 0x7F { decoded.append(UInt8(scalar) | (scalar >= 65 && scalar <= 90 ? 0x20 : 0)) }
                        i = semicolon + 1
                        continue
                    }
                }
                if byte > 0x20 && byte != 0x7F { decoded.append((byte >= 65 && byte <= 90) ? byte + 32 : byte) }
                i += 1
            }
            return decoded.starts(with: Array("javascript:".utf8))
        }
    }
}

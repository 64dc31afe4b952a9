import Alcedo
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
import Logging
import Synchronization

/// The log line formats of imgproxy's `IMGPROXY_LOG_FORMAT`.
public enum ImgproxyLogFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    /// `2026-01-02 15:04:05 [INF] message key=value`, the level in colour (imgproxy's default on a terminal).
    case pretty
    /// `time="2026-01-02 15:04:05" level="INFO" msg="message" key="value"` (imgproxy's default otherwise).
    case structured
    /// `{"time":"2026-01-02T15:04:05Z","level":"INFO","msg":"message","key":"value"}`.
    case json
    /// JSON as Google Cloud Logging reads it: `severity` and `message` in place of `level` and `msg`.
    case gcp

    /// The format named `name` (`pretty`, `structured`, `json` or `gcp`, any case), else `nil`.
    public init?(name: String) {
        self.init(rawValue: name.lowercased())
    }

    public var description: String { rawValue }
}

/// A swift-log handler writing one line per message in one of imgproxy's formats
/// (``ImgproxyLogFormat``) to standard error, with times in UTC.
///
/// Metadata keys are written in a fixed order (the access line's fields first, the rest by
/// name, `error` last as imgproxy does); a dictionary value is a group (`stages.decode=…` in
/// the structured format, a nested object in JSON). Integers, floating-point numbers and
/// booleans given as `.stringConvertible` are written as numbers and booleans.
///
/// ```swift
/// LoggingSystem.bootstrap { label in ImgproxyLogHandler(label: label, format: .json) }
/// ```
public struct ImgproxyLogHandler: LogHandler {
    /// The format of each line.
    public let format: ImgproxyLogFormat
    /// The logger's label (not written: imgproxy's lines have none).
    public let label: String
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let write: @Sendable (String) -> Void

    /// A handler writing `format` lines.
    /// - Parameters:
    ///   - label: the logger's label.
    ///   - format: the line format.
    ///   - write: where each line goes, newline included (default: standard error, one `write(2)` per line).
    public init(label: String, format: ImgproxyLogFormat, write: @escaping @Sendable (String) -> Void = ImgproxyLogHandler.standardError) {
        self.label = label
        self.format = format
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    // swift-log's current entry point.
    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        write(Self.line(format: format, level: event.level, message: event.message.description, metadata: merged, date: Date()))
    }

    /// One line (with its newline) of `format` for a message.
    public static func line(format: ImgproxyLogFormat, level: Logger.Level, message: String, metadata: Logger.Metadata, date: Date) -> String {
        let time = HTTPDate.utcComponents(of: date)
        let day = "\(time.year)-\(pad(time.month))-\(pad(time.day))"
        let clock = "\(pad(time.hour)):\(pad(time.minute)):\(pad(time.second))"
        let pairs = ordered(metadata)
        var out = ""
        switch format {
        case .json, .gcp:
            out = "{\"time\":\"\(day)T\(clock)Z\",\"" + (format == .gcp ? "severity" : "level") + "\":\"" + levelName(level)
                + "\",\"" + (format == .gcp ? "message" : "msg") + "\":" + jsonString(message)
            for (key, value) in pairs { out += "," + jsonString(key) + ":" + json(value) }
            out += "}"
        case .structured:
            out = "time=\"\(day) \(clock)\" level=\"\(levelName(level))\" msg=" + goQuoted(message)
            for (key, value) in pairs { structured(key, value, into: &out) }
        case .pretty:
            let (thin, bold) = colors(level)
            out = "\(day) \(clock) " + bold + prettyLevelName(level) + reset + " " + message
            for (key, value) in pairs { pretty(key, value, color: thin, into: &out) }
        }
        return out + "\n"
    }

    /// Writes `line` to standard error in one call.
    public static let standardError: @Sendable (String) -> Void = { line in writeAll(line, to: 2) }

    // MARK: Order and levels

    /// The access line's fields in imgproxy's order, then the others by name.
    static let leadingKeys = ["request_id", "method", "path", "status", "bytes", "duration", "cache", "source_host", "client_ip", "error_type"]

    private static func ordered(_ metadata: Logger.Metadata) -> [(String, Logger.Metadata.Value)] {
        var pairs: [(String, Logger.Metadata.Value)] = []
        pairs.reserveCapacity(metadata.count)
        for key in leadingKeys { if let value = metadata[key] { pairs.append((key, value)) } }
        for key in metadata.keys.sorted() where key != "error" && !leadingKeys.contains(key) {
            if let value = metadata[key] { pairs.append((key, value)) }
        }
        if let error = metadata["error"] { pairs.append(("error", error)) }
        return pairs
    }

    static func levelName(_ level: Logger.Level) -> String {
        switch level {
        case .trace, .debug: "DEBUG"
        case .info, .notice: "INFO"
        case .warning: "WARNING"
        case .error: "ERROR"
        case .critical: "CRITICAL"
        }
    }

    private static func prettyLevelName(_ level: Logger.Level) -> String {
        switch level {
        case .trace, .debug: "[DBG]"
        case .info, .notice: "[INF]"
        case .warning: "[WRN]"
        case .error: "[ERR]"
        case .critical: "[CRT]"
        }
    }

    private static let reset = "\u{1B}[0m"

    private static func colors(_ level: Logger.Level) -> (String, String) {
        switch level {
        case .trace, .debug: ("\u{1B}[34m", "\u{1B}[1;34m")
        case .info, .notice: ("\u{1B}[32m", "\u{1B}[1;32m")
        case .warning: ("\u{1B}[33m", "\u{1B}[1;33m")
        case .error, .critical: ("\u{1B}[31m", "\u{1B}[1;31m")
        }
    }

    private static func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    // MARK: Values

    /// A number or boolean given as `.stringConvertible`, written bare.
    private static func bare(_ value: any CustomStringConvertible & Sendable) -> String? {
        switch value {
        case let value as Int: String(value)
        case let value as Int64: String(value)
        case let value as UInt64: String(value)
        case let value as Double: value.isFinite ? String(value) : nil
        case let value as Bool: value ? "true" : "false"
        default: nil
        }
    }

    private static func json(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): return jsonString(text)
        case .stringConvertible(let value): return bare(value) ?? jsonString(value.description)
        case .array(let values): return "[" + values.map(json).joined(separator: ",") + "]"
        case .dictionary(let values):
            return "{" + values.keys.sorted().compactMap { key in values[key].map { jsonString(key) + ":" + json($0) } }
                .joined(separator: ",") + "}"
        }
    }

    private static func structured(_ key: String, _ value: Logger.Metadata.Value, into out: inout String) {
        switch value {
        case .dictionary(let values):
            for name in values.keys.sorted() { if let inner = values[name] { structured(key + "." + name, inner, into: &out) } }
        case .string(let text):
            out += " " + keyText(key) + "=" + goQuoted(text)
        case .stringConvertible(let value):
            out += " " + keyText(key) + "=" + (bare(value) ?? goQuoted(value.description))
        case .array(let values):
            out += " " + keyText(key) + "=" + goQuoted("[" + values.map(\.description).joined(separator: " ") + "]")
        }
    }

    private static func pretty(_ key: String, _ value: Logger.Metadata.Value, color: String, into out: inout String) {
        out += " " + color + keyText(key) + reset + "="
        switch value {
        case .dictionary(let values):
            out += "{"
            for name in values.keys.sorted() { if let inner = values[name] { pretty(name, inner, color: color, into: &out) } }
            out += " }"
        case .string(let text): out += keyText(text)
        case .stringConvertible(let value): out += bare(value) ?? keyText(value.description)
        case .array(let values): out += keyText("[" + values.map(\.description).joined(separator: " ") + "]")
        }
    }

    /// `text` as it is when every byte is quote-safe (imgproxy's set: printable ASCII but space,
    /// `"`, `'`, `:`, `=`, `\`, `` ` ``, `{`, `}`), else quoted.
    static func keyText(_ text: String) -> String {
        let safe = !text.isEmpty && text.utf8.allSatisfy { byte in
            byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "'") && byte != UInt8(ascii: ":")
                && byte != UInt8(ascii: "=") && byte != UInt8(ascii: "\\") && byte != UInt8(ascii: "`")
                && byte != UInt8(ascii: "{") && byte != UInt8(ascii: "}")
        }
        return safe ? text : goQuoted(text)
    }

    /// `text` quoted as Go's `strconv.Quote` quotes it (for ASCII control characters and the
    /// escapes; other characters are kept).
    static func goQuoted(_ text: String) -> String {
        quoted(text) { scalar in
            switch scalar {
            case "\u{07}": "\\a"
            case "\u{08}": "\\b"
            case "\u{0C}": "\\f"
            case "\u{0B}": "\\v"
            default: scalar.value < 0x20 || scalar.value == 0x7F ? "\\x" + hex(scalar.value, digits: 2) : nil
            }
        }
    }

    /// `text` as a JSON string.
    static func jsonString(_ text: String) -> String { JSONText.string(text) }

    /// `text` in double quotes, with `"`, `\`, newline, return and tab escaped as Go escapes
    /// them, and each other scalar as `escape` says (`nil`: kept).
    private static func quoted(_ text: String, escape: (Unicode.Scalar) -> String?) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if let escaped = escape(scalar) { out += escaped } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out + "\""
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// A duration as Go's `time.Duration.String` writes it (`850µs`, `12.345678ms`, `1.5s`).
    public static func goDuration(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        if nanoseconds == 0 { return "0s" }
        let negative = nanoseconds < 0
        let magnitude = nanoseconds.magnitude
        let (unit, name): (UInt64, String) = magnitude < 1_000 ? (1, "ns") : magnitude < 1_000_000 ? (1_000, "µs")
            : magnitude < 1_000_000_000 ? (1_000_000, "ms") : (1_000_000_000, "s")
        var text = String(magnitude / unit)
        if unit > 1 {
            var fraction = String(magnitude % unit)
            fraction = String(repeating: "0", count: String(unit).count - 1 - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            if !fraction.isEmpty { text += "." + fraction }
        }
        return (negative ? "-" : "") + text + name
    }
}

/// Writes all of `text` to the file descriptor `fd` (a failed write drops the rest).
private func writeAll(_ text: String, to fd: Int32) {
    var text = text
    text.withUTF8 { bytes in
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, base + offset, bytes.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}

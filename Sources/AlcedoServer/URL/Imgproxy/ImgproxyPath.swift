import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One imgproxy URL path, parsed: `/{signature}/{options}/plain/{percent-encoded URL}[@ext]`
/// or `/{signature}/{options}/{base64url URL}[.ext]` (the base64 may be split by `/`).
public struct ImgproxyPath: Sendable, Hashable {
    /// How the source URL is written in the path.
    public enum SourceEncoding: Sendable, Hashable {
        /// `plain/` followed by the percent-encoded URL, the extension after `@`.
        case plain
        /// URL-safe base64 of the URL, the extension after `.`.
        case base64
    }

    /// The signature segment as given (`insecure` or `_` when unsigned).
    public var signature: String
    /// The processing options, presets expanded.
    public var options: ProcessingOptions
    /// The source URL, decoded.
    public var sourceURL: String
    /// How the source was written.
    public var encoding: SourceEncoding
    /// The format named by the extension (default `nil`: none given).
    public var extensionFormat: ImageFormat?

    /// Creates a path value (the builder's input).
    public init(signature: String = "insecure", options: ProcessingOptions, sourceURL: String,
                encoding: SourceEncoding = .plain, extensionFormat: ImageFormat? = nil) {
        self.signature = signature
        self.options = options
        self.sourceURL = sourceURL
        self.encoding = encoding
        self.extensionFormat = extensionFormat
    }

    /// The format the URL asks for: the extension, else the `format` option; `nil` when
    /// neither is given (the server then negotiates).
    public var requestedFormat: ImageFormat? { extensionFormat ?? options.format }

    /// Parses a path (the request target without the query), expanding `presets`.
    /// - Parameters:
    ///   - presets: the named option lists `preset:NAME` expands (default none).
    ///   - defaults: the options the URL's own are applied to (default ``ProcessingOptions/init()``,
    ///     imgproxy's defaults; a server's `--auto-rotate` and `--strip-metadata` change them).
    /// - Returns: the parsed path and the signed part (everything after the signature segment).
    /// - Throws: ``ImgproxyURLError`` saying what was wrong.
    public static func parse(_ path: String, presets: [String: [String]] = [:],
                             defaults: ProcessingOptions = ProcessingOptions()) throws(ImgproxyURLError) -> (path: ImgproxyPath, signedPart: String) {
        var warnings: [String] = []
        return try parse(path, rules: ImgproxyParsingRules(presets: presets, allowSecurityOptions: true, defaults: defaults),
                         warnings: &warnings)
    }

    /// Parses a path under `rules`, as imgproxy 4 does: the signature segment may be anything
    /// without a `:` (checked against the keys by the server); `%3A` in the options is read as
    /// `:`; a plain source whose `scheme://` lost a slash (`http:/host`) is repaired; the
    /// options start from ``ImgproxyParsingRules/defaults``; the `default` preset applies first;
    /// with ``ImgproxyParsingRules/onlyPresets`` the first segment names presets. Non-fatal
    /// problems are added to `warnings`.
    /// - Returns: the parsed path and the signed part (everything after the signature segment,
    ///   repaired as above).
    /// - Throws: ``ImgproxyURLError`` saying what was wrong.
    public static func parse(_ path: String, rules: ImgproxyParsingRules,
                             warnings: inout [String]) throws(ImgproxyURLError) -> (path: ImgproxyPath, signedPart: String) {
        guard path.hasPrefix("/") else { throw .malformedPath("it must start with /") }
        let afterSlash = path.dropFirst()
        guard let end = afterSlash.firstIndex(of: "/") else { throw .malformedPath("expected /signature/options/source") }
        let signature = String(afterSlash[..<end])
        guard !signature.isEmpty else { throw .malformedPath("the signature segment is empty") }
        guard !signature.contains(literal: ":") else { throw .malformedSignature }
        let signedPart = "/" + redenormalized(String(afterSlash[afterSlash.index(after: end)...]))
        var segments = signedPart.dropFirst().split(separator: "/", omittingEmptySubsequences: false)[...]
        var options = rules.defaults
        if rules.presets["default"] != nil {
            try options.applyPresets(["default"], rules: rules, usedPresets: [], warnings: &warnings)
        }
        if rules.onlyPresets {
            guard let first = segments.first, segments.count > 1 else { throw .malformedPath("expected /signature/presets/source") }
            if first != "plain" {
                let names = first.split(separator: rules.argumentsSeparator, omittingEmptySubsequences: true).map(String.init)
                for name in names where rules.presets[name] == nil { throw .presetsOnly(name) }
                try options.applyPresets(names, rules: rules, usedPresets: [], warnings: &warnings)
                segments = segments.dropFirst()
            }
        } else {
            while let segment = segments.first, segment.contains(rules.argumentsSeparator), segment != "plain" {
                if let allowed = rules.allowedOptions, let cut = segment.range(ofLiteral: rules.argumentsSeparator) {
                    let name = String(segment[..<cut.lowerBound])
                    guard allowed.contains(name) else { throw .optionNotAllowed(name) }
                }
                try options.apply(segment: segment, rules: rules, usedPresets: [], warnings: &warnings)
                segments = segments.dropFirst()
            }
        }
        guard let first = segments.first, !first.isEmpty else { throw .malformedPath("no source URL") }
        var result = ImgproxyPath(signature: signature, options: options, sourceURL: "", encoding: .base64)
        if first == "plain", segments.count > 1 {
            result.encoding = .plain
            var encoded = segments.dropFirst().joined(separator: "/")
            if let at = encoded.lastIndex(of: "@") {
                let ext = String(encoded[encoded.index(after: at)...])
                if !ext.isEmpty, !options.raw { result.extensionFormat = try ProcessingOptions.format(ext) }
                encoded = String(encoded[..<at])
            }
            guard let decoded = encoded.percentDecoded else { throw .invalidSource("bad percent-encoding") }
            result.sourceURL = decoded
        } else {
            if rules.base64URLIncludesFilename, segments.count > 1 { segments = segments.dropLast() }
            var encoded = segments.joined()
            if let dot = encoded.lastIndex(of: ".") {
                let ext = String(encoded[encoded.index(after: dot)...])
                if !ext.isEmpty, !options.raw { result.extensionFormat = try ProcessingOptions.format(ext) }
                encoded = String(encoded[..<dot])
            }
            guard let bytes = Base64URL.decode(encoded), let text = String(validating: bytes, as: UTF8.self) else {
                throw .invalidSource("not URL-safe base64 of a UTF-8 URL")
            }
            result.sourceURL = text
        }
        guard !result.sourceURL.isEmpty else { throw .invalidSource("empty") }
        guard result.sourceURL.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) else {
            throw .invalidSource("contains control characters")
        }
        return (result, signedPart)
    }

    /// The source URL as it is fetched: every character a URL cannot hold as it is (a space,
    /// a non-ASCII letter, a quote, `<`, `>`, `{`, `}`, `|`, `^`, a backslash or a backtick),
    /// which imgproxy accepts after its one percent-decoding of a plain source, percent-encoded
    /// as UTF-8; `%` escapes and the URL delimiters stay. So `plain/s3://bucket/my%20key.jpg`
    /// reads the object `my key.jpg`, and a key with `+` or `é` is read as it is named.
    public var fetchableSourceURL: String {
        guard sourceURL.utf8.contains(where: { !Self.isURLCharacter($0) }) else { return sourceURL }
        return sourceURL.percentEncoded(allowing: Self.isURLCharacter)
    }

    /// What a URL may hold unescaped: ASCII letters and digits, `-._~`, the delimiters
    /// `:/?#[]@!$&'()*+,;=`, and `%` (an escape already there stays one).
    private static func isURLCharacter(_ byte: UInt8) -> Bool {
        byte.isASCIIAlphanumeric || "-._~:/?#[]@!$&'()*+,;=%".utf8.contains(byte)
    }

    /// Undoes what proxies and browsers do to paths, as imgproxy does: `%3A` in the options part
    /// becomes `:`, and a plain source's `scheme:/x` (a slash merged away) becomes `scheme://x`
    /// (`local:///x` for the `local` scheme).
    static func redenormalized(_ path: String) -> String {
        var options: Substring, plain: Substring?
        if path.hasPrefix("plain/") {
            options = ""
            plain = path.dropFirst(6)
        } else if let range = path.range(ofLiteral: "/plain/") {
            options = path[..<range.lowerBound]
            plain = path[range.upperBound...]
        } else {
            options = path[...]
            plain = nil
        }
        let fixedOptions = options.contains(literal: "%3A") ? String(options.replacing(literal: "%3A", with: ":")) : String(options)
        guard var source = plain.map(String.init) else { return fixedOptions }
        source = repairedScheme(source)
        return fixedOptions.isEmpty ? "plain/" + source : fixedOptions + "/plain/" + source
    }

    /// imgproxy's `^(\S+):/([^/])` repair: the last `:/` followed by something other than `/`,
    /// with no white space before it, becomes `://`.
    private static func repairedScheme(_ source: String) -> String {
        let bytes = Array(source.utf8)
        let limit = bytes.firstIndex { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0x0B || $0 == 0x0C } ?? bytes.count
        var index = min(limit, bytes.count - 3)
        while index >= 1 {
            if bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == UInt8(ascii: "/"), bytes[index + 2] != UInt8(ascii: "/") {
                let scheme = String(decoding: bytes[..<index], as: UTF8.self)
                let rest = String(decoding: bytes[(index + 2)...], as: UTF8.self)
                return scheme + (scheme == "local" ? ":///" : "://") + rest
            }
            index -= 1
        }
        return source
    }

    /// The part of the path after the signature segment, in canonical form (what is signed).
    public var signedPart: String {
        var path = ""
        for segment in options.pathSegments { path += "/" + segment }
        switch encoding {
        case .plain:
            path += "/plain/" + Self.percentEncode(sourceURL)
            if let extensionFormat { path += "@" + extensionFormat.preferredFileExtension }
        case .base64:
            path += "/" + Base64URL.encode(Array(sourceURL.utf8))
            if let extensionFormat { path += "." + extensionFormat.preferredFileExtension }
        }
        return path
    }

    /// Percent-encodes everything but unreserved characters and the URL delimiters that are
    /// safe in a path (`:/`), so that `@`, `?`, `#` and `%` in the source survive.
    static func percentEncode(_ text: String) -> String {
        text.percentEncoded(allowing: isPathSafe)
    }

    /// ASCII letters and digits and `-._~:/`: what ``percentEncode(_:)`` leaves as it is (made once).
    private static func isPathSafe(_ byte: UInt8) -> Bool {
        byte.isASCIIAlphanumeric || "-._~:/".utf8.contains(byte)
    }
}

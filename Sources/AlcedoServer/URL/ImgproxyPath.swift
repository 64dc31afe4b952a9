import Alcedo
import Foundation

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
        guard path.hasPrefix("/") else { throw .malformedPath("it must start with /") }
        let afterSlash = path.dropFirst()
        guard let end = afterSlash.firstIndex(of: "/") else { throw .malformedPath("expected /signature/options/source") }
        let signature = String(afterSlash[..<end])
        guard !signature.isEmpty else { throw .malformedPath("the signature segment is empty") }
        let signedPart = String(afterSlash[end...])
        var segments = signedPart.dropFirst().split(separator: "/", omittingEmptySubsequences: false)[...]
        var options = defaults
        while let segment = segments.first, segment.contains(":"), segment != "plain" {
            try options.apply(segment: segment, presets: presets)
            segments = segments.dropFirst()
        }
        guard let first = segments.first, !first.isEmpty else { throw .malformedPath("no source URL") }
        var result = ImgproxyPath(signature: signature, options: options, sourceURL: "", encoding: .base64)
        if first == "plain" {
            result.encoding = .plain
            var encoded = segments.dropFirst().joined(separator: "/")
            if let at = encoded.lastIndex(of: "@") {
                let ext = String(encoded[encoded.index(after: at)...])
                result.extensionFormat = try ProcessingOptions.format(ext)
                encoded = String(encoded[..<at])
            }
            guard let decoded = encoded.removingPercentEncoding else { throw .invalidSource("bad percent-encoding") }
            result.sourceURL = decoded
        } else {
            var encoded = segments.joined()
            if let dot = encoded.lastIndex(of: ".") {
                let ext = String(encoded[encoded.index(after: dot)...])
                result.extensionFormat = try ProcessingOptions.format(ext)
                encoded = String(encoded[..<dot])
            }
            guard let bytes = Base64URL.decode(encoded), let text = String(validating: bytes, as: UTF8.self) else {
                throw .invalidSource("not URL-safe base64 of a UTF-8 URL")
            }
            result.sourceURL = text
        }
        guard !result.sourceURL.isEmpty else { throw .invalidSource("empty") }
        guard result.sourceURL.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else {
            throw .invalidSource("contains spaces or control characters")
        }
        return (result, signedPart)
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
        text.addingPercentEncoding(withAllowedCharacters: pathSafe) ?? text
    }

    /// ASCII letters and digits and `-._~:/`: what ``percentEncode(_:)`` leaves as it is (made once).
    private static let pathSafe: CharacterSet = {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        allowed.insert(charactersIn: "-._~:/")
        return allowed
    }()
}

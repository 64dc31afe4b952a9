import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Builds imgproxy URLs for an Alcedo server (or imgproxy itself), signed when a key is given.
///
/// ```swift
/// var options = ProcessingOptions()
/// options.resizingType = .fill
/// options.width = 300
/// options.height = 200
/// let builder = try ImgproxyURLBuilder(baseURL: "https://img.example.com",
///                                      key: SigningKey(hexKey: key, hexSalt: salt))
/// let url = builder.url(for: "https://example.com/cat.jpg", options: options, format: .webp)
/// // https://img.example.com/<signature>/rs:fill:300:200:0:0/plain/https://example.com/cat.jpg@webp
/// ```
public struct ImgproxyURLBuilder: Sendable {
    /// The server's base URL, without a trailing `/` (default empty: build paths only).
    public let baseURL: String
    /// The key that signs URLs (default `nil`: the signature segment is `insecure`).
    public let key: SigningKey?
    /// Bytes of the HMAC kept in signatures, 1...32 (default 32), as the server's
    /// `--signature-size` (imgproxy's `IMGPROXY_SIGNATURE_SIZE`).
    public let signatureSize: Int

    /// Creates a builder.
    /// - Parameters:
    ///   - baseURL: put before every path (default empty: paths only); a trailing `/` is dropped.
    ///   - key: signs every path (default `nil`: unsigned, `insecure`).
    ///   - signatureSize: bytes of the HMAC in each signature (default 32: all of it).
    public init(baseURL: String = "", key: SigningKey? = nil, signatureSize: Int = 32) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.key = key
        self.signatureSize = signatureSize
    }

    /// The URL of `path` with its signature (its own ``ImgproxyPath/signature`` is replaced).
    public func url(for path: ImgproxyPath) -> String {
        let signed = path.signedPart
        let signature = key?.signature(for: signed, size: signatureSize) ?? "insecure"
        return baseURL + "/" + signature + signed
    }

    /// The URL for `source` processed with `options`.
    /// - Parameters:
    ///   - source: the source image's URL.
    ///   - options: processing options (default: none, the source as it is).
    ///   - format: the output format, written as the extension (default `nil`: negotiated).
    ///   - encoding: `.plain` (default, readable) or `.base64`.
    public func url(for source: String, options: ProcessingOptions = ProcessingOptions(), format: ImageFormat? = nil,
                    encoding: ImgproxyPath.SourceEncoding = .plain) -> String {
        url(for: ImgproxyPath(options: options, sourceURL: source, encoding: encoding, extensionFormat: format))
    }

    /// The `/info` URL for `source` (the source's `alcedo info` JSON).
    public func infoURL(for source: String, encoding: ImgproxyPath.SourceEncoding = .plain) -> String {
        let path = ImgproxyPath(options: ProcessingOptions(), sourceURL: source, encoding: encoding).signedPart
        let signature = key?.signature(for: path, size: signatureSize) ?? "insecure"
        return baseURL + "/info/" + signature + path
    }
}

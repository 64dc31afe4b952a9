#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The bucket, key and version an `s3://bucket/key[?versionId=ID]` URL names.
///
/// The key is the URL's path without its first `/`, percent-decoded once: `s3://b/a%20b.jpg`
/// names the key `a b.jpg`, `s3://b/100%25.jpg` the key `100%.jpg`, and `+` stays a plus.
/// The version is the `versionId` query parameter, or (as imgproxy writes it) a query that is
/// only the ID: `s3://b/k?3HL4kqtJlcpXroDTDmJ` .
public struct S3ObjectLocation: Sendable, Hashable {
    /// The bucket name.
    public var bucket: String
    /// The object key, raw (not percent-encoded).
    public var key: String
    /// The version asked for, if any.
    public var versionID: String?

    /// Creates a location from its parts.
    public init(bucket: String, key: String, versionID: String? = nil) {
        self.bucket = bucket
        self.key = key
        self.versionID = versionID
    }

    /// Reads an `s3://` URL.
    /// - Throws: ``AlcedoError/requestError(reason:)`` with `.invalidURL` for another scheme,
    ///   a missing bucket or key, or invalid percent-encoding.
    public init(url: URL) throws(AlcedoError) {
        let invalid = AlcedoError.requestError(reason: .invalidURL(url.absoluteString))
        guard url.scheme?.lowercased() == "s3", let bucket = url.host(percentEncoded: false), !bucket.isEmpty,
              bucket.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0 != "/" }) else { throw invalid }
        let path = url.path(percentEncoded: true)
        guard path.hasPrefix("/"), path.count > 1, let key = String(path.dropFirst()).percentDecoded, !key.isEmpty else {
            throw invalid
        }
        var version: String?
        if let query = url.query(percentEncoded: true), !query.isEmpty {
            for item in query.split(separator: "&") {
                let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                if parts.count == 2, parts[0] == "versionId" {
                    version = String(parts[1]).percentDecoded
                }
            }
            if version == nil, !query.contains(literal: "=") { version = query.percentDecoded }
            if let found = version, found.isEmpty { version = nil }
        }
        self.init(bucket: bucket, key: key, versionID: version)
    }

    /// The `s3://` URL of this location (key percent-encoded as S3 signs it).
    public var url: URL {
        var text = "s3://\(bucket)/" + AWSSignatureV4.canonicalURI(forKeyPath: key)
        if let versionID { text += "?versionId=" + AWSSignatureV4.uriEncode(versionID, keepSlash: false) }
        return URL(string: text)!
    }
}

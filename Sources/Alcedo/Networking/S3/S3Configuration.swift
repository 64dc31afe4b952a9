#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where and how ``S3ImageDataLoader`` reads `s3://bucket/key` sources: the store's endpoint,
/// the region, the addressing style, the buckets allowed and the credentials. Every property
/// has the default stated on it.
///
/// ```swift
/// // AWS, credentials from the environment or ~/.aws/credentials:
/// let aws = S3Configuration(region: "eu-west-1")
/// // MinIO on a private network:
/// var minio = S3Configuration(endpoint: URL(string: "http://minio.internal:9000")!)
/// minio.credentials = S3Credentials(accessKeyID: "…", secretAccessKey: "…")
/// ```
public struct S3Configuration: Sendable {
    /// The region requests are signed for (default `us-east-1`; R2 takes `auto`, GCS `auto` or any).
    public var region: String
    /// The store's base URL, such as `http://127.0.0.1:9000` for MinIO or
    /// `https://ACCOUNT.r2.cloudflarestorage.com` for R2 (default `nil`: AWS,
    /// `https://s3.REGION.amazonaws.com`).
    public var endpoint: URL?
    /// Path-style addressing (`ENDPOINT/bucket/key`) rather than virtual-host addressing
    /// (`bucket.ENDPOINT-HOST/key`). Default `nil`: path-style when an ``endpoint`` is set (as
    /// imgproxy's `IMGPROXY_S3_ENDPOINT_USE_PATH_STYLE` defaults to true), virtual-host on
    /// AWS's own endpoint (buckets made since 2020 answer only that way). A bucket whose name
    /// has a dot is always addressed path-style over HTTPS (its host name would not match a
    /// wildcard certificate).
    public var usePathStyle: Bool?
    /// Buckets sources may name (default empty: any bucket not denied). When set, a bucket
    /// not listed is refused before any request.
    public var allowedBuckets: Set<String>
    /// Buckets refused before any request (default none). A bucket both allowed and denied is
    /// allowed, as in imgproxy.
    public var deniedBuckets: Set<String>
    /// The credentials that sign requests (default `nil`: found by ``S3Credentials/resolve(environment:)``
    /// when the loader is made; when none are found, requests go unsigned, as for a public bucket).
    public var credentials: S3Credentials?

    /// Creates a configuration; every parameter defaults to the value stated on its property.
    public init(region: String = "us-east-1", endpoint: URL? = nil, usePathStyle: Bool? = nil,
                allowedBuckets: Set<String> = [], deniedBuckets: Set<String> = [], credentials: S3Credentials? = nil) {
        self.region = region
        self.endpoint = endpoint
        self.usePathStyle = usePathStyle
        self.allowedBuckets = allowedBuckets
        self.deniedBuckets = deniedBuckets
        self.credentials = credentials
    }

    /// The endpoint requests go to: ``endpoint``, else AWS's for ``region``.
    public var effectiveEndpoint: URL {
        endpoint ?? URL(string: "https://s3.\(region).amazonaws.com")!
    }

    /// Whether `bucket` may be read: listed in ``allowedBuckets`` when that is set, else not in
    /// ``deniedBuckets``. `nil` when allowed, else why not.
    public func refusal(forBucket bucket: String) -> String? {
        if !allowedBuckets.isEmpty {
            return allowedBuckets.contains(bucket) ? nil : "the bucket \(bucket) is not among the allowed buckets"
        }
        return deniedBuckets.contains(bucket) ? "the bucket \(bucket) is denied" : nil
    }

    /// The HTTP URL of an object, path already encoded as it is signed and sent.
    /// - Parameters:
    ///   - bucket: the bucket name.
    ///   - key: the object key, raw (not percent-encoded).
    ///   - versionID: a version to read (default `nil`: the current one).
    public func objectURL(bucket: String, key: String, versionID: String? = nil) -> URL {
        let base = effectiveEndpoint
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false) ?? URLComponents()
        let basePath = components.percentEncodedPath.hasSuffix("/") ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        let keyPath = AWSSignatureV4.canonicalURI(forKeyPath: key)
        if pathStyle(for: bucket) {
            components.percentEncodedPath = basePath + "/" + AWSSignatureV4.uriEncode(bucket, keepSlash: false) + "/" + keyPath
        } else {
            components.host = bucket + "." + (components.host ?? "")
            components.percentEncodedPath = basePath + "/" + keyPath
        }
        components.percentEncodedQuery = versionID.map { "versionId=" + AWSSignatureV4.uriEncode($0, keepSlash: false) }
        return components.url!
    }

    /// Whether requests for `bucket` are path-style (see ``usePathStyle``).
    func pathStyle(for bucket: String) -> Bool {
        if effectiveEndpoint.scheme?.lowercased() == "https", bucket.contains(literal: ".") { return true }
        return usePathStyle ?? (endpoint != nil)
    }
}

/// A setting of the S3 source that cannot be used.
public enum S3ConfigurationError: LocalizedError, Sendable, Hashable, CustomStringConvertible {
    /// The shared credentials file exists but could not be read.
    case unreadableCredentialsFile(String, message: String)
    /// The profile asked for (`AWS_PROFILE`) is not in the credentials file.
    case missingProfile(String, file: String)
    /// The profile lacks `aws_access_key_id` or `aws_secret_access_key`.
    case incompleteProfile(String, file: String)
    /// The endpoint is not an `http` or `https` URL with a host.
    case invalidEndpoint(String)

    public var description: String {
        switch self {
        case .unreadableCredentialsFile(let path, let message): return "cannot read the AWS credentials file \(path): \(message)"
        case .missingProfile(let profile, let file): return "the AWS credentials file \(file) has no profile [\(profile)]"
        case .incompleteProfile(let profile, let file):
            return "the profile [\(profile)] of \(file) lacks aws_access_key_id or aws_secret_access_key"
        case .invalidEndpoint(let text): return "the S3 endpoint \"\(text)\" is not an http or https URL with a host"
        }
    }

    public var errorDescription: String? { description }
}

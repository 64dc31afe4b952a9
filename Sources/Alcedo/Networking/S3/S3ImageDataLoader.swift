#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads `s3://bucket/key` sources from Amazon S3 or an S3-compatible store (MinIO, Cloudflare
/// R2, Ceph, Google Cloud Storage's interoperability API), signing each GET with AWS Signature
/// Version 4 (``AWSSignatureV4``), with `x-amz-content-sha256: UNSIGNED-PAYLOAD` and the
/// session token of temporary credentials.
///
/// Put it behind an ``ImageDownloader`` (with ``CompositeImageDataLoader`` to keep HTTP too):
/// the caches, coalescing, byte and time limits, retries and revalidation then apply to S3
/// sources as to HTTP ones. The object's `ETag` and `Last-Modified` are kept with the cached
/// entry, and a stale entry is asked again with `If-None-Match`: a 304 refreshes it.
///
/// ```swift
/// let s3 = try S3ImageDataLoader(configuration: S3Configuration(region: "eu-west-1"))
/// let downloader = ImageDownloader(name: "s3", loader: CompositeImageDataLoader([HTTPImageLoader(), s3]))
/// let image = try await ImageManager(downloader: downloader).retrieveImage(with: URL(string: "s3://photos/cat.jpg")!)
/// ```
///
/// A bucket refused by ``S3Configuration/allowedBuckets`` or ``S3Configuration/deniedBuckets``
/// fails with ``RequestErrorReason/sourceNotAllowed(_:reason:)`` before any request. An error
/// answer of the store is ``ResponseErrorReason/URLSessionError(error:)`` with an ``ObjectStorageError``: its code
/// (`NoSuchKey`, `AccessDenied`, `SignatureDoesNotMatch`, `SlowDown`…); throttling is
/// retriable. Redirects (a bucket in another region) are errors, never followed.
public final class S3ImageDataLoader: ImageDataLoading {
    /// The store, region, addressing and buckets.
    public let configuration: S3Configuration
    /// The credentials found (``S3Configuration/credentials``, else the environment or the
    /// shared credentials file); `nil` when requests go unsigned.
    public let credentials: S3Credentials?
    private let signer: AWSSignatureV4?
    private let http: HTTPImageLoader

    /// The most bytes of an error answer read to find its code.
    private static let errorBodyLimit = 64 * 1024

    /// Creates a loader.
    /// - Parameters:
    ///   - configuration: the store and its settings (default: AWS in `us-east-1`, credentials found as
    ///     ``S3Credentials/resolve(environment:)`` does).
    ///   - httpConfiguration: the connection settings of the loader's own HTTP client (default:
    ///     ``HTTPImageLoader/Configuration``'s defaults). Its `dnsOverride` can pin the
    ///     store's host names to addresses.
    ///   - environment: where credentials are looked for when the configuration has none
    ///     (default: this process's environment).
    /// - Throws: ``S3ConfigurationError`` for an endpoint that is not an http(s) URL with a host,
    ///   or a credentials file that does not hold the profile asked for.
    public convenience init(configuration: S3Configuration = S3Configuration(),
                httpConfiguration: HTTPImageLoader.Configuration = .init(),
                environment: [String: String] = ProcessInfo.processInfo.environment) throws(S3ConfigurationError) {
        if let endpoint = configuration.endpoint {
            guard let scheme = endpoint.scheme?.lowercased(), scheme == "http" || scheme == "https",
                  let host = endpoint.host, !host.isEmpty else { throw .invalidEndpoint(endpoint.absoluteString) }
        }
        var credentials = configuration.credentials
        if credentials == nil { credentials = try S3Credentials.resolve(environment: environment) }
        self.init(configuration: configuration, resolvedCredentials: credentials, httpConfiguration: httpConfiguration)
    }

    /// Creates a loader with credentials already found (`nil`: unsigned requests), without
    /// looking at the environment or checking the endpoint (a loader with an endpoint that is
    /// not an http(s) URL fails each load with `.invalidURL`).
    public init(configuration: S3Configuration, resolvedCredentials: S3Credentials?,
                httpConfiguration: HTTPImageLoader.Configuration = .init()) {
        self.configuration = configuration
        credentials = resolvedCredentials
        signer = resolvedCredentials.map { AWSSignatureV4(credentials: $0, region: configuration.region) }
        http = HTTPImageLoader(configuration: httpConfiguration)
    }

    public var supportedSchemes: Set<String> { ["s3"] }

    public func load(_ request: DownloadRequest) async throws -> ImageDataLoaderResponse {
        let location = try S3ObjectLocation(url: request.url)
        if let refusal = configuration.refusal(forBucket: location.bucket) {
            throw AlcedoError.requestError(reason: .sourceNotAllowed(request.url, reason: refusal))
        }
        let target = configuration.objectURL(bucket: location.bucket, key: location.key, versionID: location.versionID)
        guard let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https", target.host != nil else {
            throw AlcedoError.requestError(reason: .invalidURL(target.absoluteString))
        }
        var headers = HTTPHeaderFields()
        for field in request.headers {
            let name = field.name.lowercased()
            // The store's own authentication replaces any other; Host follows the target URL.
            guard name != "authorization", name != "host", name != "cookie", !name.hasPrefix("x-amz-") else { continue }
            headers.add(name: field.name, value: field.value)
        }
        if let signer {
            for field in signer.signedHeaders(method: "GET", url: target) { headers.add(name: field.name, value: field.value) }
        }
        let response = try await http.load(DownloadRequest(url: target, headers: headers))
        switch response.statusCode {
        case 200..<300, 304:
            return response
        default:
            var body = Data()
            do {
                for try await chunk in response.body {
                    body.append(chunk.prefix(Self.errorBodyLimit - body.count))
                    if body.count >= Self.errorBodyLimit { break }
                }
            } catch {
                // The status alone still says what happened.
            }
            throw AlcedoError.responseError(reason: .objectStorageError(
                ObjectStorageError.parse(url: request.url, statusCode: response.statusCode, headers: response.headers, body: body)))
        }
    }

    public func shutdown() async {
        await http.shutdown()
    }
}

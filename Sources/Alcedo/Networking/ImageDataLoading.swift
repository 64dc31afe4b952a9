#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Sends one GET and streams the response body: the transport under ``ImageDownloader``.
///
/// The downloader does everything else (redirects, status checks, limits, timeouts, retries,
/// coalescing, conditional requests), so a loader only moves bytes. Alcedo ships
/// ``HTTPImageLoader`` (`http`, `https`; the default), ``S3ImageDataLoader``
/// (`s3://bucket/key`, signed with AWS Signature Version 4) and
/// ``LocalFolderImageDataLoader`` (`local:///path` inside one folder);
/// ``CompositeImageDataLoader`` puts several behind one downloader. Conform your own type to
/// route requests through another client or storage.
///
/// A loader of another scheme than HTTP answers in HTTP's terms all the same: a status (200,
/// 304 for a conditional request whose validators still match, 404…), header fields
/// (`Content-Length`, `ETag`, `Last-Modified`, `Content-Type`) and a body.
///
/// A conforming loader:
/// - does **not** follow redirects: a 3xx comes back as it is, so the downloader can count
///   redirects, detect loops and ask its redirect handler;
/// - returns from ``load(_:)`` once the response head has arrived, with a body that streams;
/// - stops the request and throws `CancellationError` (or ``AlcedoError/requestError(reason:)``
///   with `.cancelled`) when the calling task is cancelled, while waiting for the head or the body;
/// - throws ``AlcedoError`` for failures it can name (such as ``NetworkErrorReason/connectTimedOut(_:limit:)``);
///   any other error is reported as ``NetworkErrorReason/networkFailure(_:underlying:)``.
public protocol ImageDataLoading: Sendable {
    /// Sends `request` once and returns the response head with its streaming body.
    func load(_ request: DownloadRequest) async throws -> ImageDataLoaderResponse

    /// Releases the loader's connections and threads; later loads fail. Safe to call twice.
    func shutdown() async

    /// The URL schemes this loader reads, lower-case (default `["http", "https"]`). The
    /// manager and the downloader accept a source URL whose scheme is listed here.
    var supportedSchemes: Set<String> { get }
}

extension ImageDataLoading {
    public var supportedSchemes: Set<String> { ["http", "https"] }
}

/// A response head and its body, as a loader returns it.
public struct ImageDataLoaderResponse: Sendable {
    /// The HTTP status code.
    public var statusCode: Int
    /// The response header fields.
    public var headers: HTTPHeaderFields
    /// The body, as chunks of bytes in arrival order.
    public var body: ImageDataBody

    /// Creates a response from its status code, header fields and body.
    public init(statusCode: Int, headers: HTTPHeaderFields, body: ImageDataBody) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
    }
}

/// A response body: an asynchronous sequence of byte chunks, iterated once.
public struct ImageDataBody: AsyncSequence, Sendable {
    /// One chunk of the body.
    public typealias Element = Data

    private let makeNext: @Sendable () -> () async throws -> Data?

    /// Wraps any sendable sequence of `Data` chunks.
    public init<Base: AsyncSequence & Sendable>(_ base: Base) where Base.Element == Data {
        makeNext = {
            let box = IteratorBox(base.makeAsyncIterator())
            return { try await box.next() }
        }
    }

    /// A body made of the given bytes, in one chunk (nothing when `data` is empty).
    public init(data: Data) {
        makeNext = {
            var pending: Data? = data.isEmpty ? nil : data
            return {
                defer { pending = nil }
                return pending
            }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(next: makeNext()) }

    /// Iterates the chunks of an ``ImageDataBody``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let next: () async throws -> Data?

        public mutating func next() async throws -> Data? { try await next() }
    }
}

/// Holds a base iterator so a closure can advance it.
private final class IteratorBox<Base: AsyncIteratorProtocol> where Base.Element == Data {
    private var base: Base

    init(_ base: Base) { self.base = base }

    func next() async throws -> Data? { try await base.next() }
}

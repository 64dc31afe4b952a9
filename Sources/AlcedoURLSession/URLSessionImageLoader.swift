import Alcedo
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
/// `URLSession`'s request and response (Alcedo's `URLRequest` and `HTTPURLResponse` are
/// Kingfisher's names of its ``DownloadRequest`` and ``DownloadResponse``).
private typealias URLRequest = FoundationNetworking.URLRequest
private typealias HTTPURLResponse = FoundationNetworking.HTTPURLResponse
private typealias URLSession = FoundationNetworking.URLSession
private typealias URLResponse = FoundationNetworking.URLResponse
#endif
import Synchronization

/// An ``ImageDataLoading`` on Foundation's `URLSession`, for code that must go through it
/// (its proxy settings, its protocol classes).
///
/// Prefer the default ``HTTPImageLoader`` on Linux: there, `URLSession` keeps a
/// core busy while a request waits and rounds its timeouts to whole seconds. This loader uses
/// an ephemeral session without `URLCache` (revalidation is Alcedo's job), does not follow
/// redirects (the downloader does), and streams the body as it arrives.
public final class URLSessionImageLoader: ImageDataLoading {
    private let session: URLSession
    private let delegate: SessionDelegate

    /// Creates a loader with its own session.
    /// - Parameter configuration: The session configuration (default `.ephemeral`); its
    ///   `urlCache` is removed and its cache policy set to ignore local data.
    public init(configuration: URLSessionConfiguration = .ephemeral) {
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        delegate = SessionDelegate(idleTimeout: .milliseconds(Int(configuration.timeoutIntervalForRequest * 1000)))
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    public func load(_ request: DownloadRequest) async throws -> ImageDataLoaderResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = "GET"
        for field in request.headers {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        let task = session.dataTask(with: urlRequest)
        let (body, bodyContinuation) = AsyncThrowingStream.makeStream(of: Data.self)
        bodyContinuation.onTermination = { termination in
            if case .cancelled = termination { task.cancel() }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (head: CheckedContinuation<ImageDataLoaderResponse, any Error>) in
                delegate.register(task.taskIdentifier, head: head, body: bodyContinuation, stream: ImageDataBody(body))
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }

    public func shutdown() async {
        session.invalidateAndCancel()
    }
}

/// Routes the session's callbacks to the waiting loads. Its only state is behind a mutex.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct Pending {
        var head: CheckedContinuation<ImageDataLoaderResponse, any Error>?
        let body: AsyncThrowingStream<Data, any Error>.Continuation
        let stream: ImageDataBody
    }

    private let pending = Mutex<[Int: Pending]>([:])
    /// The session's `timeoutIntervalForRequest`, for error messages.
    private let idleTimeout: Duration

    init(idleTimeout: Duration) {
        self.idleTimeout = idleTimeout
    }

    func register(_ id: Int, head: CheckedContinuation<ImageDataLoaderResponse, any Error>,
                  body: AsyncThrowingStream<Data, any Error>.Continuation, stream: ImageDataBody) {
        pending.withLock { $0[id] = Pending(head: head, body: body, stream: stream) }
    }

    func urlSession(_ session: URLSession, task: FoundationNetworking.URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        // The downloader follows redirects itself: hand the 3xx back as the response.
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        let entry = pending.withLock { pending -> Pending? in
            defer { pending[dataTask.taskIdentifier]?.head = nil }
            return pending[dataTask.taskIdentifier]
        }
        guard let entry, let head = entry.head, let http = response as? HTTPURLResponse else {
            completionHandler(.cancel)
            return
        }
        var headers = HTTPHeaderFields()
        for (name, value) in http.allHeaderFields {
            headers.add(name: String(describing: name), value: String(describing: value))
        }
        // The session decompresses encoded bodies, so Content-Length no longer describes them.
        if let encoding = headers["Content-Encoding"], encoding.lowercased() != "identity" {
            headers.remove("Content-Length")
        }
        head.resume(returning: ImageDataLoaderResponse(statusCode: http.statusCode, headers: headers, body: entry.stream))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let body = pending.withLock { $0[dataTask.taskIdentifier]?.body }
        body?.yield(data)
    }

    func urlSession(_ session: URLSession, task: FoundationNetworking.URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = pending.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        let mapped = error.map { map($0, url: task.originalRequest?.url) }
        if let head = entry.head {
            head.resume(throwing: mapped ?? URLError(.badServerResponse))
        }
        entry.body.finish(throwing: mapped)
    }

    /// Cancellations become `CancellationError`, timeouts the downloader's timeout reasons,
    /// refused, unreachable, DNS, TLS and reset connections their ``NetworkErrorReason``.
    private func map(_ error: any Error, url: URL?) -> any Error {
        guard let urlError = error as? URLError else {
            let nsError = error as NSError
            if nsError.domain == NSPOSIXErrorDomain, let code = POSIXErrorCode(rawValue: Int32(nsError.code)) {
                return POSIXError(code)
            }
            return error
        }
        switch urlError.code {
        case .cancelled: return CancellationError()
        case .timedOut:
            guard let url else { return error }
            return AlcedoError.networkError(reason: .timedOut(url, limit: idleTimeout))
        default:
            guard let url, let reason = Self.reason(for: urlError, url: url) else { return error }
            return AlcedoError.networkError(reason: reason)
        }
    }

    /// The ``NetworkErrorReason`` a URLSession failure names, or `nil` for any other failure.
    private static func reason(for error: URLError, url: URL) -> NetworkErrorReason? {
        switch error.code {
        case .cannotConnectToHost: return .connectionRefused(url)
        case .cannotFindHost, .dnsLookupFailed: return .dnsFailure(url, host: url.host ?? "")
        case .networkConnectionLost: return .connectionReset(url)
        case .notConnectedToInternet: return .hostUnreachable(url)
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected:
            return .tlsFailure(url, message: error.localizedDescription)
        default: return nil
        }
    }
}

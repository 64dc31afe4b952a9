import Synchronization

/// Decides what happens when the server redirects.
///
/// The downloader has already checked the redirect (a `Location` that is an http(s) URL, no
/// loop, under the redirect limit) and built the request to the new URL with the same header
/// fields, less `Authorization` and `Cookie` when the origin (scheme, host, port) changes.
/// Return it, a changed one (credentials for the new host, say) or `nil` to stop: the 3xx
/// response is then checked like any other and fails as an unacceptable status.
///
/// Without a handler, redirects are followed the same way.
public protocol ImageDownloadRedirectHandler: Sendable {
    func handleRedirect(response: DownloadResponse, newRequest: DownloadRequest) async -> DownloadRequest?
}

/// A redirect handler made from a closure.
public struct AnyRedirectHandler: ImageDownloadRedirectHandler {
    private let block: @Sendable (DownloadResponse, DownloadRequest) async -> DownloadRequest?

    /// Creates a handler that runs `handle` with the 3xx response and the proposed request.
    public init(handle: @escaping @Sendable (DownloadResponse, DownloadRequest) async -> DownloadRequest?) {
        block = handle
    }

    public func handleRedirect(response: DownloadResponse, newRequest: DownloadRequest) async -> DownloadRequest? {
        await block(response, newRequest)
    }
}

extension AnyRedirectHandler {
    /// Creates a handler in Kingfisher's callback shape:
    /// `AnyRedirectHandler { task, response, newRequest, completionHandler in completionHandler(newRequest) }`.
    ///
    /// `task` is the request that got the 3xx (Kingfisher passes its session task): its URL,
    /// with the header fields carried to the new request;
    /// `completionHandler` takes the request to follow, or `nil` to stop, and must be called once.
    public init(handle: @escaping @Sendable (_ task: DownloadRequest, _ response: DownloadResponse, _ newRequest: DownloadRequest,
                                              _ completionHandler: @escaping @Sendable (DownloadRequest?) -> Void) -> Void) {
        self.init { (response: DownloadResponse, newRequest: DownloadRequest) async -> DownloadRequest? in
            await withCheckedContinuation { (continuation: CheckedContinuation<DownloadRequest?, Never>) in
                let resumed = Mutex(false)
                handle(DownloadRequest(url: response.url, headers: newRequest.headers), response, newRequest) { request in
                    let first = resumed.withLock { done in
                        defer { done = true }
                        return !done
                    }
                    if first { continuation.resume(returning: request) }
                }
            }
        }
    }
}

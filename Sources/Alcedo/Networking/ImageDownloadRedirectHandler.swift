/// Decides what happens when the server redirects.
///
/// The downloader has already checked the redirect (a `Location` that is an http(s) URL, no
/// loop, under the redirect limit) and built the request to the new URL with the same header
/// fields, less `Authorization` and `Cookie` when the origin (scheme, host, port) changes.
/// Return it, a changed one (credentials for the new host, say) or `nil` to stop: the 3xx
/// response is then checked like any other and fails as an unacceptable status.
///
/// Without a handler, redirects are followed the same way.
///
/// Implement one of the three forms; each defaults to the next, so a handler written in any of
/// them runs (one that implements none recurses at run time):
/// - ``handleRedirect(response:newRequest:)``, Alcedo's;
/// - ``handleHTTPRedirection(for:response:newRequest:)``, Kingfisher 8's `async` form, which
///   the downloader calls;
/// - ``handleHTTPRedirection(for:response:newRequest:completionHandler:)``, Kingfisher 7's
///   callback form (call the handler once).
///
/// Written as Kingfisher's documentation writes it, a handler compiles unchanged:
///
/// ```swift
/// final class MyRedirectHandler: ImageDownloadRedirectHandler {
///     func handleHTTPRedirection(for task: Kingfisher.SessionDataTask, response: HTTPURLResponse,
///                                newRequest: URLRequest) async -> URLRequest? {
///         newRequest
///     }
/// }
/// ```
///
/// On Linux `HTTPURLResponse` is ``DownloadResponse`` and `URLRequest` is ``DownloadRequest``
/// (see ``HTTPURLResponse`` and ``URLRequest``).
public protocol ImageDownloadRedirectHandler: Sendable {
    /// Alcedo's form: the 3xx `response` and the proposed `newRequest`; returns the request to
    /// follow, or `nil` to stop. Defaults to the callback form.
    func handleRedirect(response: DownloadResponse, newRequest: DownloadRequest) async -> DownloadRequest?

    /// Kingfisher 8's form, the one the downloader calls: `task` is the download being
    /// redirected (its ``SessionDataTask/originalURL`` is the URL the caller asked for).
    /// Defaults to ``handleRedirect(response:newRequest:)``.
    func handleHTTPRedirection(for task: SessionDataTask, response: DownloadResponse,
                               newRequest: DownloadRequest) async -> DownloadRequest?

    /// Kingfisher 7's callback form: call `completionHandler` once with the request to follow,
    /// or `nil` to stop. Defaults to running the `async` form and calling the handler with
    /// its result.
    func handleHTTPRedirection(for task: SessionDataTask, response: DownloadResponse, newRequest: DownloadRequest,
                               completionHandler: @escaping (DownloadRequest?) -> Void)
}

extension ImageDownloadRedirectHandler {
    public func handleRedirect(response: DownloadResponse, newRequest: DownloadRequest) async -> DownloadRequest? {
        await firstCallbackValue { (handler: @escaping @Sendable (DownloadRequest?) -> Void) in
            handleHTTPRedirection(for: SessionDataTask(originalURL: response.originalURL), response: response,
                                  newRequest: newRequest, completionHandler: handler)
        }
    }

    public func handleHTTPRedirection(for task: SessionDataTask, response: DownloadResponse,
                                      newRequest: DownloadRequest) async -> DownloadRequest? {
        await handleRedirect(response: response, newRequest: newRequest)
    }

    public func handleHTTPRedirection(for task: SessionDataTask, response: DownloadResponse, newRequest: DownloadRequest,
                                      completionHandler: @escaping (DownloadRequest?) -> Void) {
        // Kingfisher's handler type is not `@Sendable`; it is called once, from this task only.
        nonisolated(unsafe) let completion = completionHandler
        Task { completion(await handleHTTPRedirection(for: task, response: response, newRequest: newRequest)) }
    }
}

/// A redirect handler made from a closure.
public struct AnyRedirectHandler: ImageDownloadRedirectHandler {
    private let block: @Sendable (SessionDataTask, DownloadResponse, DownloadRequest) async -> DownloadRequest?

    /// Creates a handler that runs `handle` with the 3xx response and the proposed request.
    public init(handle: @escaping @Sendable (DownloadResponse, DownloadRequest) async -> DownloadRequest?) {
        block = { _, response, request in await handle(response, request) }
    }

    public func handleHTTPRedirection(for task: SessionDataTask, response: DownloadResponse,
                                      newRequest: DownloadRequest) async -> DownloadRequest? {
        await block(task, response, newRequest)
    }
}

extension AnyRedirectHandler {
    /// Creates a handler in Kingfisher's callback shape:
    /// `AnyRedirectHandler { task, response, newRequest, completionHandler in completionHandler(newRequest) }`.
    ///
    /// `task` is the download being redirected (Kingfisher's `SessionDataTask`);
    /// `completionHandler` takes the request to follow, or `nil` to stop, and must be called once.
    public init(handle: @escaping @Sendable (_ task: SessionDataTask, _ response: DownloadResponse, _ newRequest: DownloadRequest,
                                              _ completionHandler: @escaping @Sendable (DownloadRequest?) -> Void) -> Void) {
        block = { task, response, newRequest in
            await firstCallbackValue { handler in handle(task, response, newRequest, handler) }
        }
    }
}

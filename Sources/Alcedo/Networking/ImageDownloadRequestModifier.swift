/// Changes a request before it is sent: add headers, sign the URL, or refuse it.
///
/// The modifier runs once per network request (not once per caller of a coalesced request)
/// and may suspend, for example to fetch a fresh token.
public protocol ImageDownloadRequestModifier: Sendable {
    /// Returns the request to send, or `nil` to refuse it
    /// (the download fails with ``RequestErrorReason/emptyRequest``).
    func modified(for request: DownloadRequest) async -> DownloadRequest?
}

/// A request modifier made from a closure.
public struct AnyModifier: ImageDownloadRequestModifier {
    private let block: @Sendable (DownloadRequest) async -> DownloadRequest?

    /// Creates a modifier that runs `modify`.
    public init(modify: @escaping @Sendable (DownloadRequest) async -> DownloadRequest?) {
        block = modify
    }

    public func modified(for request: DownloadRequest) async -> DownloadRequest? { await block(request) }
}

/// A request modifier that adds header fields, replacing fields of the same names
/// (for instance `Authorization`).
public struct HeaderFieldsModifier: ImageDownloadRequestModifier {
    /// The fields set on every request.
    public let headers: HTTPHeaderFields

    /// Creates a modifier that sets `headers` on every request.
    public init(_ headers: HTTPHeaderFields) {
        self.headers = headers
    }

    public func modified(for request: DownloadRequest) async -> DownloadRequest? {
        var request = request
        for field in headers {
            request.headers[field.name] = field.value
        }
        return request
    }
}

/// A request modifier that is told when its download starts, as Kingfisher's
/// `AsyncImageDownloadRequestModifier`: Kingfisher returns no task from a call whose modifier
/// is asynchronous, so the task is given here instead.
///
/// ```swift
/// struct TokenModifier: AsyncImageDownloadRequestModifier {
///     let onDownloadTaskStarted: (@Sendable (DownloadTask?) -> Void)?
///     func modified(for request: DownloadRequest) async -> DownloadRequest? {
///         var r = request
///         r.setValue(await tokens.current(), forHTTPHeaderField: "Authorization")
///         return r
///     }
/// }
/// ```
public protocol AsyncImageDownloadRequestModifier: ImageDownloadRequestModifier {
    /// Called once per network request, after ``modified(for:)`` returned a request and as it
    /// is sent, with a task whose ``DownloadTask/cancel()`` stops that network request (for
    /// every caller of it). Default `nil`.
    var onDownloadTaskStarted: (@Sendable (DownloadTask?) -> Void)? { get }
}

extension AsyncImageDownloadRequestModifier {
    public var onDownloadTaskStarted: (@Sendable (DownloadTask?) -> Void)? { nil }
}

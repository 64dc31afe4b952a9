/// Changes a request before it is sent: add headers, sign the URL, or refuse it.
///
/// The modifier runs once per network request (not once per caller of a coalesced request)
/// and may suspend, for example to fetch a fresh token.
public protocol ImageDownloadRequestModifier: Sendable {
    /// Returns the request to send, or `nil` to refuse it
    /// (the download fails with ``RequestErrorReason/refusedByModifier(_:)``).
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

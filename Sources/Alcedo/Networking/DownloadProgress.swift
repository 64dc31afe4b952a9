/// How much of a body has arrived.
public struct DownloadProgress: Sendable, Hashable {
    /// Bytes of the body received so far.
    public var receivedBytes: Int
    /// The body length announced by `Content-Length`; `nil` when the server did not announce one.
    public var expectedBytes: Int?

    /// Creates a progress value (`expectedBytes` `nil` when the length is unknown).
    public init(receivedBytes: Int, expectedBytes: Int?) {
        self.receivedBytes = receivedBytes
        self.expectedBytes = expectedBytes
    }

    /// `receivedBytes / expectedBytes` between 0 and 1, or `nil` when the length is unknown.
    public var fractionCompleted: Double? {
        guard let expectedBytes, expectedBytes > 0 else { return nil }
        return min(1, Double(receivedBytes) / Double(expectedBytes))
    }
}

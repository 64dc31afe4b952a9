#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How much of a body has arrived.
public struct DownloadProgress: Sendable, Hashable {
    /// Bytes of the body received so far.
    public var receivedBytes: Int
    /// The body length announced by `Content-Length`; `nil` when the server did not announce one.
    public var expectedBytes: Int?

    /// The bytes that arrived with this progress report: the last `chunk.count` of the
    /// `receivedBytes` (shared with the downloader's buffer, not copied). Set by the
    /// downloader for progressive previews; not part of equality.
    var chunk: Data?

    /// The whole body received so far (of which ``chunk`` is the end), kept so that a caller
    /// joining the download late can be given the bytes it missed. Not part of equality.
    var body: ReceivedBody?

    /// Creates a progress value (`expectedBytes` `nil` when the length is unknown).
    public init(receivedBytes: Int, expectedBytes: Int?) {
        self.receivedBytes = receivedBytes
        self.expectedBytes = expectedBytes
    }

    init(receivedBytes: Int, expectedBytes: Int?, chunk: Data, body: ReceivedBody? = nil) {
        self.init(receivedBytes: receivedBytes, expectedBytes: expectedBytes)
        self.chunk = chunk
        self.body = body
    }

    /// What a caller joining the download after this report gets first: the same counts, with
    /// the whole body so far as its chunk (shared with the downloader's buffer) when the body
    /// is known, and no chunk otherwise.
    var catchUp: DownloadProgress {
        var progress = DownloadProgress(receivedBytes: receivedBytes, expectedBytes: expectedBytes)
        if let body {
            progress.chunk = body.prefix(receivedBytes)
            progress.body = body
        }
        return progress
    }

    public static func == (lhs: DownloadProgress, rhs: DownloadProgress) -> Bool {
        lhs.receivedBytes == rhs.receivedBytes && lhs.expectedBytes == rhs.expectedBytes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(receivedBytes)
        hasher.combine(expectedBytes)
    }

    /// `receivedBytes / expectedBytes` between 0 and 1, or `nil` when the length is unknown.
    public var fractionCompleted: Double? {
        guard let expectedBytes, expectedBytes > 0 else { return nil }
        return min(1, Double(receivedBytes) / Double(expectedBytes))
    }
}

/// Kingfisher's progress block: the bytes received so far and the announced body length
/// (`Content-Length`), or `-1` when the server did not announce one.
///
/// Every `progressBlock:` parameter takes this shape, in the `async` forms too: a closure with
/// one parameter given as a trailing closure can then only be a completion handler, never a
/// progress block (see <doc:ComingFromKingfisher>). For a ``DownloadProgress`` value use
/// ``DownloadProgress/init(receivedSize:totalSize:)``.
public typealias DownloadProgressBlock = @Sendable (_ receivedSize: Int64, _ totalSize: Int64) -> Void

extension DownloadProgress {
    /// The progress a ``DownloadProgressBlock`` was called with (`totalSize` `-1`: unknown length).
    public init(receivedSize: Int64, totalSize: Int64) {
        self.init(receivedBytes: Int(receivedSize), expectedBytes: totalSize < 0 ? nil : Int(totalSize))
    }

    /// ``expectedBytes`` as a ``DownloadProgressBlock`` gets it: `-1` when unknown.
    public var totalSize: Int64 { expectedBytes.map(Int64.init) ?? -1 }
}

/// `block` as the internal form that takes a ``DownloadProgress``.
func progressHandler(_ block: DownloadProgressBlock?) -> (@Sendable (DownloadProgress) -> Void)? {
    guard let block else { return nil }
    return { (progress: DownloadProgress) in block(Int64(progress.receivedBytes), progress.totalSize) }
}

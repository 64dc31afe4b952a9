#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Kingfisher's name for the network request a download runs: what a redirect handler gets as
/// `for task:`, and what a cancelled download reports in
/// ``RequestErrorReason/taskCancelled(task:token:)``.
///
/// Kingfisher's `SessionDataTask` wraps a `URLSessionDataTask`; Alcedo's requests do not go
/// through `URLSession`, so this one carries what a handler can use: the URL the caller asked
/// for, and Kingfisher's received-data buffer (``didReceiveData(_:)``, ``mutableData``,
/// ``sharedData``) for code that receives a body in chunks. Differences from Kingfisher: there
/// is no `task` (`URLSessionDataTask`) or `callbacks`, and Alcedo's downloader keeps a body in a
/// buffer of its own (a task handed to a redirect handler has received nothing); stop a download
/// with ``DownloadTask/cancel()`` or by cancelling the Swift task that awaits it.
public final class SessionDataTask: Sendable, CustomStringConvertible {
    /// Which caller of a shared request a cancellation was for: one number per caller of the
    /// same download (Kingfisher's `CancelToken`, also an `Int`).
    public typealias CancelToken = Int

    /// The URL the caller asked for (before redirects); `nil` when the cancelled work had no
    /// single URL, such as a wait for memory.
    public let originalURL: URL?

    private let received = Mutex(Data())

    /// Creates a task for a request to `originalURL`.
    public init(originalURL: URL?) {
        self.originalURL = originalURL
    }

    /// Appends a chunk of the body after the bytes received so far.
    public func didReceiveData(_ data: Data) {
        received.withLock { $0.append(data) }
    }

    /// A copy of the bytes received so far, in storage of its own (it never shares the task's).
    public var mutableData: Data {
        received.withLock { bytes in bytes.withUnsafeBytes { Data($0) } }
    }

    /// The bytes received so far without a copy: the value shares the task's storage until either
    /// changes (a later ``didReceiveData(_:)`` does not change a value already returned).
    public var sharedData: Data {
        received.withLock { $0 }
    }

    /// `SessionDataTask(<url>)`.
    public var description: String { "SessionDataTask(\(originalURL?.absoluteString ?? "no URL"))" }
}

/// Kingfisher's module name as a namespace, so that code that qualifies Kingfisher's names to
/// tell them from another module's (`Kingfisher.SessionDataTask`, `Kingfisher.ImageResource`,
/// `Kingfisher.ImageCache`…) compiles unchanged. On Apple platforms, where the real Kingfisher
/// module is imported instead of Alcedo, the name is the module's.
public enum Kingfisher {
    /// ``Alcedo/SessionDataTask``.
    public typealias SessionDataTask = Alcedo.SessionDataTask
    /// ``Alcedo/ImageResource``.
    public typealias ImageResource = Alcedo.ImageResource
    /// ``Alcedo/ImageCache``.
    public typealias ImageCache = Alcedo.ImageCache
    /// ``Alcedo/ImageDownloader``.
    public typealias ImageDownloader = Alcedo.ImageDownloader
    /// ``Alcedo/ImagePrefetcher``.
    public typealias ImagePrefetcher = Alcedo.ImagePrefetcher
    /// ``Alcedo/ImageManager`` (Kingfisher's `KingfisherManager`).
    public typealias KingfisherManager = Alcedo.ImageManager
    /// ``Alcedo/AlcedoImage`` (Kingfisher's `KFCrossPlatformImage`).
    public typealias KFCrossPlatformImage = Alcedo.AlcedoImage
    /// ``Alcedo/KF``.
    public typealias KF = Alcedo.KF
    /// ``Alcedo/Source``.
    public typealias Source = Alcedo.Source
    /// ``Alcedo/AlcedoError`` (Kingfisher's `KingfisherError`).
    public typealias KingfisherError = Alcedo.AlcedoError
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Kingfisher's per-downloader settings, on a live downloader: `ImageDownloader.default.downloadTimeout = 5`.
///
/// Each is a view of ``ImageDownloader/configuration``, changed under its lock (thread-safe);
/// a change applies to requests that start after it.
extension ImageDownloader {
    /// How long one download attempt may take, in seconds, from sending the request to the last
    /// body byte (Kingfisher's `downloadTimeout`; default 15). ``Configuration/timeout``.
    public var downloadTimeout: TimeInterval {
        get { configuration.timeout.alcedoTimeInterval }
        set { updateConfiguration { $0.timeout = .fromSeconds(newValue) } }
    }

    /// How long connecting may take, in seconds (default 10; Kingfisher sets it through
    /// `sessionConfiguration`). ``Configuration/connectTimeout``; the built-in loader follows
    /// it, a loader you passed in keeps its own.
    public var connectTimeout: TimeInterval {
        get { configuration.connectTimeout.alcedoTimeInterval }
        set { updateConfiguration { $0.connectTimeout = .fromSeconds(newValue) } }
    }

    /// Requests sent to one host at the same time (default 6; Kingfisher's
    /// `sessionConfiguration.httpMaximumConnectionsPerHost`).
    /// ``Configuration/maximumConcurrentRequestsPerHost``. Raising it lets waiting requests
    /// start at once; lowering it lets no more start until enough have finished.
    public var maximumConcurrentRequestsPerHost: Int {
        get { configuration.maximumConcurrentRequestsPerHost }
        set { updateConfiguration { $0.maximumConcurrentRequestsPerHost = max(1, newValue) } }
    }

    /// The largest body accepted, in bytes (default 32 MiB). ``Configuration/maximumBodySize``.
    public var maximumBodySize: Int {
        get { configuration.maximumBodySize }
        set { updateConfiguration { $0.maximumBodySize = newValue } }
    }

    /// Header fields sent with every request (default ``Configuration/standardHeaders``).
    /// ``Configuration/defaultHeaders``.
    public var defaultHeaders: HTTPHeaderFields {
        get { configuration.defaultHeaders }
        set { updateConfiguration { $0.defaultHeaders = newValue } }
    }

    /// Sees each complete body before it is used (Kingfisher's `delegate`; default `nil`).
    /// ``Configuration/delegate``.
    public var delegate: (any ImageDownloaderDelegate)? {
        get { configuration.delegate }
        set { updateConfiguration { $0.delegate = newValue } }
    }
}

extension Duration {
    /// `seconds` as a duration (millisecond precision is kept; negative values become zero).
    static func fromSeconds(_ seconds: TimeInterval) -> Duration {
        .nanoseconds(Int64((max(0, seconds) * 1e9).rounded()))
    }
}

/// The order in which waiting requests to one host get a connection slot: when the host's
/// concurrent request limit is reached, higher priorities go first and equal priorities go
/// in arrival order. A request already sent is not affected.
///
/// Use `.low` for prefetching, so images on screen are not kept waiting behind it.
public enum DownloadPriority: Int, Sendable, Hashable, Comparable, CaseIterable {
    /// Waits behind every normal and high request (prefetching).
    case low
    /// The default.
    case normal
    /// Goes before normal and low requests.
    case high

    public static func < (lhs: DownloadPriority, rhs: DownloadPriority) -> Bool { lhs.rawValue < rhs.rawValue }
}

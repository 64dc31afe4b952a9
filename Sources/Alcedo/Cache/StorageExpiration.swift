#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// When a cached entry expires. An expired entry is never returned and is removed by the next
/// clean-up.
public enum StorageExpiration: Sendable, Hashable, CustomStringConvertible {
    /// The entry never expires.
    case never
    /// The entry expires this many seconds after it is stored (or after its expiration is extended).
    case seconds(TimeInterval)
    /// The entry expires this many days (of 86,400 seconds) after it is stored.
    case days(Int)
    /// The entry expires at a fixed date.
    case date(Date)
    /// The entry is expired already: storing with it stores nothing.
    case expired

    /// The moment an entry stored (or accessed) at `date` expires; `Date.distantFuture` for
    /// ``never`` and `Date.distantPast` for ``expired``.
    public func estimatedExpiration(since date: Date) -> Date {
        switch self {
        case .never: return .distantFuture
        case .seconds(let seconds): return date.addingTimeInterval(seconds)
        case .days(let days): return date.addingTimeInterval(TimeInterval(days) * 86_400)
        case .date(let fixed): return fixed
        case .expired: return .distantPast
        }
    }

    /// `true` when an entry stored at `date` with this expiration would be expired at once.
    public func isExpired(at date: Date) -> Bool {
        estimatedExpiration(since: date) <= date
    }

    /// The duration to re-apply when the expiration is extended with
    /// ``ExpirationExtending/cacheTime``, or `nil` when the expiration is not a duration
    /// (``never``, ``date(_:)``, ``expired``): those are not moved by an access.
    var extensibleDuration: TimeInterval? {
        switch self {
        case .seconds(let seconds): return seconds
        case .days(let days): return TimeInterval(days) * 86_400
        case .never, .date, .expired: return nil
        }
    }

    public var description: String {
        switch self {
        case .never: return "never"
        case .seconds(let seconds): return "\(seconds) s"
        case .days(let days): return "\(days) days"
        case .date(let date): return "at \(date)"
        case .expired: return "expired"
        }
    }
}

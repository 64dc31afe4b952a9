#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Kingfisher's transitions, so that `.transition(.fade(0.2))` compiles. **No effect on
/// Linux:** there is no view to animate (see ``AlcedoOptionsInfoItem/transition(_:)``).
public enum ImageTransition: Sendable, Hashable {
    /// No transition (the default).
    case none
    /// A cross-fade over the duration, in seconds.
    case fade(TimeInterval)
    /// A flip from the left over the duration, in seconds.
    case flipFromLeft(TimeInterval)
    /// A flip from the right over the duration, in seconds.
    case flipFromRight(TimeInterval)
    /// A flip from the top over the duration, in seconds.
    case flipFromTop(TimeInterval)
    /// A flip from the bottom over the duration, in seconds.
    case flipFromBottom(TimeInterval)
}

extension AlcedoOptionsInfoItem {
    /// Kingfisher's `.downloadPriority(Float)`, the `URLSessionTask` priority between 0 and 1,
    /// mapped to ``DownloadPriority``: below 0.375 is `.low` (`URLSessionTask.lowPriority` is
    /// 0.25), above 0.625 is `.high` (`highPriority` is 0.75), the rest is `.normal`
    /// (`defaultPriority` is 0.5). A literal (`.downloadPriority(0.8)`) takes the
    /// ``DownloadPriority`` case, with the same mapping.
    @_disfavoredOverload
    public static func downloadPriority(_ value: Float) -> AlcedoOptionsInfoItem {
        .downloadPriority(DownloadPriority(urlSessionTaskPriority: value))
    }
}

extension DownloadPriority {
    /// The priority for a `URLSessionTask` priority between 0 and 1 (see
    /// ``AlcedoOptionsInfoItem/downloadPriority(_:)-(Float)``).
    public init(urlSessionTaskPriority value: Float) {
        self = value < 0.375 ? .low : (value > 0.625 ? .high : .normal)
    }
}

extension DownloadPriority: ExpressibleByFloatLiteral {
    /// A `URLSessionTask` priority written as a number (`0.8`), mapped as
    /// ``init(urlSessionTaskPriority:)`` maps it, so that Kingfisher's
    /// `options.downloadPriority == 0.8` compiles.
    public init(floatLiteral value: Float) {
        self.init(urlSessionTaskPriority: value)
    }
}

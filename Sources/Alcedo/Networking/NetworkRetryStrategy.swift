#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Retries when the network is there (Kingfisher's `NetworkRetryStrategy`): after a failure
/// worth retrying (see ``AlcedoError/isRetriable``), the request is sent again at once if the
/// host is reachable; otherwise the strategy waits until it is, checking every
/// ``pollInterval``, and stops after ``timeoutInterval``.
///
/// ```swift
/// let networkRetry = NetworkRetryStrategy()
/// let networkRetryWithTimeout = NetworkRetryStrategy(timeoutInterval: 30.0)
/// KingfisherManager.shared.retrieveImage(with: url, options: [.retryStrategy(networkRetry)]) { result in … }
/// ```
///
/// Linux has no path monitor that announces a network change, so reachability is checked by
/// ``reachability`` (default ``RouteReachability``: the host resolves and the kernel has a
/// route to it). Unlike Kingfisher's, the strategy stops after ``maxRetryCount`` retries in a
/// row: a host that is reachable but answers `503` at once would otherwise be asked again
/// without end.
public struct NetworkRetryStrategy: RetryStrategy {
    /// How long to wait for the network to come back, in seconds; `nil` waits as long as the
    /// request lives (it ends on cancellation). Default 30, as Kingfisher's.
    public let timeoutInterval: TimeInterval?
    /// The most retries after the first attempt (default 5).
    public let maxRetryCount: Int
    /// How often reachability is checked while waiting (default 1 s).
    public let pollInterval: Duration
    /// What says whether the host can be reached (default ``RouteReachability``).
    public let reachability: any NetworkReachability

    /// Creates the strategy; every parameter defaults to the value stated on its property.
    public init(timeoutInterval: TimeInterval? = 30, maxRetryCount: Int = 5, pollInterval: Duration = .seconds(1),
                reachability: any NetworkReachability = RouteReachability()) {
        self.timeoutInterval = timeoutInterval
        self.maxRetryCount = maxRetryCount
        self.pollInterval = pollInterval
        self.reachability = reachability
    }

    public func retry(context: RetryContext) async -> RetryDecision {
        guard context.retriedCount < maxRetryCount, context.error.isRetriable else { return .stop }
        if await reachability.isReachable(context.url) { return .retry(after: .zero) }
        let clock = ContinuousClock()
        let deadline = timeoutInterval.map { clock.now + Duration.fromSeconds($0) }
        while true {
            var wait = max(pollInterval, .milliseconds(1))
            if let deadline {
                let left = deadline - clock.now
                if left <= .zero { return .stop }
                wait = min(wait, left)
            }
            do {
                try await Task.sleep(for: wait)
            } catch {
                return .stop
            }
            if await reachability.isReachable(context.url) { return .retry(after: .zero) }
        }
    }
}

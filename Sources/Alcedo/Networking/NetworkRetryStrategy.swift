#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Retries when the network is there (Kingfisher's `NetworkRetryStrategy`): after a failure
/// worth retrying (see ``AlcedoError/isRetriable``), the request is sent again at once if the
/// network is there; otherwise the strategy waits until it is, and stops after
/// ``timeoutInterval``.
///
/// ```swift
/// let networkRetry = NetworkRetryStrategy()
/// let networkRetryWithTimeout = NetworkRetryStrategy(timeoutInterval: 30.0)
/// KingfisherManager.shared.retrieveImage(with: url, options: [.retryStrategy(networkRetry)]) { result in … }
/// ```
///
/// Two ways to tell whether the network is there:
/// - by default, ``reachability`` (``RouteReachability``: the URL's host resolves and the kernel
///   has a route to it), checked every ``pollInterval`` while waiting, since Linux has no path
///   monitor that announces a network change;
/// - as Kingfisher's, a ``NetworkMonitoring`` given to ``init(timeoutInterval:networkMonitor:maxRetryCount:)``
///   (such as ``NetworkMonitor/default``), which says when the network comes back. The wait's
///   ``NetworkObserver`` is kept in the context's ``RetryContext/userInfo`` and cancelled at
///   the next failure, as Kingfisher does.
///
/// Unlike Kingfisher's, the strategy stops after ``maxRetryCount`` retries in a row: a host
/// that is reachable but answers `503` at once would otherwise be asked again without end.
public struct NetworkRetryStrategy: RetryStrategy {
    /// How long to wait for the network to come back, in seconds; `nil` waits as long as the
    /// request lives (it ends on cancellation). Default 30, as Kingfisher's.
    public let timeoutInterval: TimeInterval?
    /// The most retries after the first attempt (default 5).
    public let maxRetryCount: Int
    /// How often reachability is checked while waiting (default 1 s); not used with a ``networkMonitor``.
    public let pollInterval: Duration
    /// What says whether the host can be reached (default ``RouteReachability``); not used with a ``networkMonitor``.
    public let reachability: any NetworkReachability
    /// The monitor that says when the network is back, if the strategy was made with one (default `nil`).
    public let networkMonitor: (any NetworkMonitoring)?

    /// Creates the strategy asking `reachability`; every parameter defaults to the value stated on its property.
    public init(timeoutInterval: TimeInterval? = 30, maxRetryCount: Int = 5, pollInterval: Duration = .seconds(1),
                reachability: any NetworkReachability = RouteReachability()) {
        self.timeoutInterval = timeoutInterval
        self.maxRetryCount = maxRetryCount
        self.pollInterval = pollInterval
        self.reachability = reachability
        self.networkMonitor = nil
    }

    /// Creates the strategy asking `networkMonitor` (Kingfisher's form), waiting at most
    /// `timeoutInterval` seconds (`nil`: no limit) and retrying at most `maxRetryCount` times (default 5).
    public init(timeoutInterval: TimeInterval?, networkMonitor: any NetworkMonitoring, maxRetryCount: Int = 5) {
        self.timeoutInterval = timeoutInterval
        self.maxRetryCount = maxRetryCount
        self.pollInterval = .seconds(1)
        self.reachability = RouteReachability()
        self.networkMonitor = networkMonitor
    }

    /// Kingfisher's form: with a ``networkMonitor``, answers at once when connected, or when the
    /// monitor says the network is back (``RetryDecision/retry(userInfo:)`` carrying the
    /// observer) or the time limit passes (``RetryDecision/stop``).
    public func retry(context: RetryContext, retryHandler: @escaping @Sendable (RetryDecision) -> Void) {
        if let previous = context.userInfo as? any NetworkObserver { previous.cancel() }
        guard context.retriedCount < maxRetryCount, context.error.isRetriable else {
            retryHandler(.stop)
            return
        }
        guard let networkMonitor else {
            Task { retryHandler(await retryWhenReachable(context)) }
            return
        }
        if networkMonitor.isConnected {
            retryHandler(.retry(userInfo: nil))
            return
        }
        let observer = networkMonitor.observeConnectivity(timeoutInterval: timeoutInterval) { [weak context] isConnected in
            retryHandler(isConnected ? .retry(userInfo: context?.userInfo) : .stop)
        }
        context.userInfo = observer
    }

    public func retry(context: RetryContext) async -> RetryDecision {
        guard networkMonitor != nil else {
            if let previous = context.userInfo as? any NetworkObserver { previous.cancel() }
            return await retryWhenReachable(context)
        }
        let decision = await firstCallbackValue(cancelledValue: RetryDecision.stop) { handler in
            retry(context: context, retryHandler: handler)
        }
        if Task.isCancelled, let observer = context.userInfo as? any NetworkObserver { observer.cancel() }
        return decision
    }

    /// The ``reachability`` form: retries when the URL's host is reachable, checking every ``pollInterval``.
    private func retryWhenReachable(_ context: RetryContext) async -> RetryDecision {
        guard context.retriedCount < maxRetryCount, context.error.isRetriable else { return .stop }
        guard let url = context.url else { return .retry(userInfo: nil) }
        if await reachability.isReachable(url) { return .retry(userInfo: nil) }
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
            if await reachability.isReachable(url) { return .retry(userInfo: nil) }
        }
    }
}

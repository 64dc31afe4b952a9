#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decides whether a failed download is tried again, and after how long.
///
/// The downloader asks only about failures worth retrying (see ``AlcedoError/isRetriable``):
/// timeouts, connection failures, 5xx, 429 and truncated bodies. A cancellation, a 404, a
/// body that is too large or not an image is never retried, whatever the strategy says.
///
/// Implement either form: the `async` one, or Kingfisher's callback form
/// `retry(context:retryHandler:)`, so that a strategy written for Kingfisher compiles
/// unchanged. Each has a default that calls the other (a type must implement one of them).
public protocol RetryStrategy: Sendable {
    /// Called after each failed attempt with what happened; return ``RetryDecision/retry(after:)``
    /// to try again or ``RetryDecision/stop`` to report the error.
    func retry(context: RetryContext) async -> RetryDecision

    /// Kingfisher's form: call `retryHandler` once with the decision, from any thread, after
    /// any wait of your own (``RetryDecision/retry(userInfo:)`` retries at once).
    func retry(context: RetryContext, retryHandler: @escaping @Sendable (RetryDecision) -> Void)
}

extension RetryStrategy {
    /// Waits for the callback form's decision (the first call of its handler counts).
    public func retry(context: RetryContext) async -> RetryDecision {
        await firstCallbackValue { handler in retry(context: context, retryHandler: handler) }
    }

    /// Runs the `async` form and passes its decision on.
    public func retry(context: RetryContext, retryHandler: @escaping @Sendable (RetryDecision) -> Void) {
        Task { retryHandler(await retry(context: context)) }
    }
}

/// What a ``RetryStrategy`` is told about a failed attempt.
public struct RetryContext: Sendable {
    /// The URL the caller asked for.
    public let url: URL
    /// Why the attempt failed.
    public let error: AlcedoError
    /// How many retries were already made (0 after the first attempt).
    public let retriedCount: Int

    /// Creates a context.
    public init(url: URL, error: AlcedoError, retriedCount: Int) {
        self.url = url
        self.error = error
        self.retriedCount = retriedCount
    }

    /// The source being retrieved, as Kingfisher's context names it: the URL as a network source.
    public var source: Source { .network(url) }

    /// The wait the server asked for with `Retry-After` on a 429 or 503 response, if any.
    public var retryAfter: Duration? {
        if case .responseError(let reason) = error, let storageError = reason.objectStorageError { return storageError.retryAfter }
        guard case .responseError(.invalidHTTPStatusCode(let response)) = error, response.statusCode == 429 || response.statusCode == 503 else {
            return nil
        }
        return response.retryAfter
    }
}

/// The answer of a ``RetryStrategy``.
public enum RetryDecision: Sendable, Equatable {
    /// Try again after waiting this long (the wait ends early if every caller cancels).
    case retry(after: Duration)
    /// Give up and report the error.
    case stop

    /// Kingfisher's "retry now": ``retry(after:)`` with no wait. Alcedo's context carries no
    /// `userInfo` to the next attempt; the value is ignored.
    public static func retry(userInfo: Any?) -> RetryDecision { .retry(after: .zero) }
}

/// Retries up to ``maxRetryCount`` times, waiting ``retryInterval`` between attempts; when a
/// 429 or 503 response carries `Retry-After`, waits what the server asked instead, or stops
/// when that is longer than ``maxRetryAfter``.
public struct DelayRetryStrategy: RetryStrategy {
    /// How long to wait before a retry.
    public enum Interval: Sendable {
        /// The same wait before every retry.
        case seconds(TimeInterval)
        /// A wait that grows by the given step: step, 2 x step, 3 x step…
        case accumulated(TimeInterval)
        /// A wait computed from the number of retries already made (0 before the first retry).
        case custom(block: @Sendable (_ retriedCount: Int) -> TimeInterval)

        /// The wait before the retry that follows `retriedCount` earlier retries.
        public func timeInterval(for retriedCount: Int) -> TimeInterval {
            switch self {
            case .seconds(let interval): return interval
            case .accumulated(let step): return Double(retriedCount + 1) * step
            case .custom(let block): return block(retriedCount)
            }
        }
    }

    /// The most retries after the first attempt.
    public let maxRetryCount: Int
    /// The wait between attempts (default 3 s).
    public let retryInterval: Interval
    /// The longest `Retry-After` honoured (default 60 s); a server asking for more is not retried.
    public let maxRetryAfter: Duration

    /// Creates a strategy retrying at most `maxRetryCount` times, waiting `retryInterval`
    /// (default 3 s) between attempts and honouring a `Retry-After` up to `maxRetryAfter` (default 60 s).
    public init(maxRetryCount: Int, retryInterval: Interval = .seconds(3), maxRetryAfter: Duration = .seconds(60)) {
        self.maxRetryCount = maxRetryCount
        self.retryInterval = retryInterval
        self.maxRetryAfter = maxRetryAfter
    }

    public func retry(context: RetryContext) async -> RetryDecision {
        guard context.retriedCount < maxRetryCount, context.error.isRetriable else { return .stop }
        if let retryAfter = context.retryAfter {
            return retryAfter <= maxRetryAfter ? .retry(after: retryAfter) : .stop
        }
        let seconds = max(0, retryInterval.timeInterval(for: context.retriedCount))
        return .retry(after: .milliseconds(Int((seconds * 1000).rounded())))
    }
}

extension AlcedoError {
    /// `true` for failures that may go away on another attempt: timeouts, connection failures
    /// (refused, unreachable, DNS, reset, other network failures), responses 408, 429 and 5xx,
    /// an object store's throttling and server errors (`SlowDown`, 503, `InternalError`), and
    /// bodies cut short. Cancellations and TLS failures (a certificate does not change
    /// between attempts) are never retriable.
    public var isRetriable: Bool {
        switch self {
        case .responseError(let reason):
            switch reason {
            case .URLSessionError(let error as NetworkErrorReason):
                if case .tlsFailure = error { return false }
                return true
            case .invalidHTTPStatusCode(let response):
                let code = response.statusCode
                return code == 408 || code == 429 || (500...599).contains(code)
            case .URLSessionError(let storageError as ObjectStorageError): return storageError.category == .throttled
            case .invalidURLResponse(.lengthMismatch(_, let expected, let received)): return received < expected
            default: return false
            }
        default:
            return false
        }
    }

    /// `true` when the error is a cancellation.
    public var isCancellation: Bool {
        if case .requestError(.cancelled) = self { return true }
        return false
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Decides whether a failed download is tried again.
///
/// The downloader asks the strategy about every failed attempt but a cancellation, with a
/// ``RetryContext`` that says what failed and how many retries were made. Alcedo's strategies
/// (``DelayRetryStrategy``, ``NetworkRetryStrategy``) retry only failures worth retrying (see
/// ``AlcedoError/isRetriable``): timeouts, connection failures, 5xx, 429 and truncated bodies;
/// never a 404, a body that is too large or not an image. A strategy of your own decides for
/// itself, as with Kingfisher.
///
/// A strategy waits as long as it wants before it answers ``RetryDecision/retry(userInfo:)``:
/// the next attempt starts when the answer comes. Implement either form: the `async` one, or
/// Kingfisher's callback form `retry(context:retryHandler:)`, so that a strategy written for
/// Kingfisher compiles unchanged. Each has a default that calls the other (a type must
/// implement one of them).
public protocol RetryStrategy: Sendable {
    /// Called after each failed attempt with what happened; return ``RetryDecision/retry(userInfo:)``
    /// (after any wait) to try again or ``RetryDecision/stop`` to report the error.
    func retry(context: RetryContext) async -> RetryDecision

    /// Kingfisher's form: call `retryHandler` once with the decision, from any thread, after
    /// any wait of your own.
    func retry(context: RetryContext, retryHandler: @escaping @Sendable (RetryDecision) -> Void)
}

extension RetryStrategy {
    /// Waits for the callback form's decision (the first call of its handler counts); when the
    /// request is cancelled first, the answer is ``RetryDecision/stop``.
    public func retry(context: RetryContext) async -> RetryDecision {
        await firstCallbackValue(cancelledValue: .stop) { handler in retry(context: context, retryHandler: handler) }
    }

    /// Runs the `async` form and passes its decision on.
    public func retry(context: RetryContext, retryHandler: @escaping @Sendable (RetryDecision) -> Void) {
        Task { retryHandler(await retry(context: context)) }
    }
}

/// What a ``RetryStrategy`` is told about a failed attempt (Kingfisher's `RetryContext`).
///
/// The downloader makes one context per failure, with the retries made so far and the
/// `userInfo` of the previous decision. A strategy may set ``userInfo`` on the context it is
/// given, as Kingfisher's `NetworkRetryStrategy` keeps its network observer there.
public final class RetryContext: Sendable {
    /// The source being retrieved.
    public let source: Source
    /// Why the attempt failed.
    public let error: AlcedoError

    private struct State {
        var retriedCount: Int
        var userInfo: (any Sendable)?
    }

    private let state: Mutex<State>

    /// Creates the context of a first failure: no retry made yet, no `userInfo`.
    public convenience init(source: Source, error: AlcedoError) {
        self.init(source: source, error: error, retriedCount: 0, userInfo: nil)
    }

    /// Creates a context for `url` after `retriedCount` retries.
    public convenience init(url: URL, error: AlcedoError, retriedCount: Int) {
        self.init(source: .network(url), error: error, retriedCount: retriedCount, userInfo: nil)
    }

    /// Creates a context after `retriedCount` retries, carrying the `userInfo` of the decision
    /// that asked for the last retry.
    public init(source: Source, error: AlcedoError, retriedCount: Int, userInfo: (any Sendable)?) {
        self.source = source
        self.error = error
        self.state = Mutex(State(retriedCount: retriedCount, userInfo: userInfo))
    }

    /// How many retries were already made (0 after the first attempt).
    public var retriedCount: Int { state.withLock { $0.retriedCount } }

    /// What the previous ``RetryDecision/retry(userInfo:)`` carried (`nil` on the first failure);
    /// a strategy may replace it.
    public var userInfo: (any Sendable)? {
        get { state.withLock { $0.userInfo } }
        set { state.withLock { $0.userInfo = newValue } }
    }

    /// Counts one more retry; returns the context itself.
    @discardableResult
    public func increaseRetryCount() -> RetryContext {
        state.withLock { $0.retriedCount += 1 }
        return self
    }

    /// The URL of the source: the download URL of a network source, or the provider's content
    /// URL (`nil` when it has none).
    public var url: URL? { source.url }

    /// The wait the server asked for with `Retry-After` on a 429 or 503 response, if any.
    public var retryAfter: Duration? {
        if case .responseError(let reason) = error, let storageError = reason.objectStorageError { return storageError.retryAfter }
        guard case .responseError(.invalidHTTPStatusCode(let response)) = error, response.statusCode == 429 || response.statusCode == 503 else {
            return nil
        }
        return response.retryAfter
    }
}

/// The answer of a ``RetryStrategy`` (Kingfisher's `RetryDecision`).
public enum RetryDecision: Sendable {
    /// Try again now; `userInfo` is handed to the strategy with the next failure's
    /// ``RetryContext/userInfo``. Kingfisher's is `Any?`; Alcedo's must be `Sendable`.
    case retry(userInfo: (any Sendable)?)
    /// Give up and report the error.
    case stop

    /// `true` for ``retry(userInfo:)``.
    public var isRetry: Bool {
        if case .retry = self { return true }
        return false
    }
}

/// Retries up to ``maxRetryCount`` times, waiting ``retryInterval`` before each retry; when a
/// 429 or 503 response carries `Retry-After`, waits what the server asked instead, or stops
/// when that is longer than ``maxRetryAfter``. Only failures worth retrying are retried
/// (``AlcedoError/isRetriable``).
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

    /// The wait before retrying after the failure `context` describes, or `nil` when the
    /// strategy stops there (too many retries, a failure not worth retrying, a `Retry-After`
    /// longer than ``maxRetryAfter``).
    public func delay(for context: RetryContext) -> Duration? {
        guard context.retriedCount < maxRetryCount, context.error.isRetriable else { return nil }
        if let retryAfter = context.retryAfter {
            return retryAfter <= maxRetryAfter ? retryAfter : nil
        }
        let seconds = max(0, retryInterval.timeInterval(for: context.retriedCount))
        return .milliseconds(Int((seconds * 1000).rounded()))
    }

    /// Waits ``delay(for:)`` and answers ``RetryDecision/retry(userInfo:)`` with no `userInfo`,
    /// or ``RetryDecision/stop`` (also when the request is cancelled during the wait).
    public func retry(context: RetryContext) async -> RetryDecision {
        guard let delay = delay(for: context) else { return .stop }
        if delay > .zero {
            do {
                try await Task.sleep(for: delay)
            } catch {
                return .stop
            }
        }
        return .retry(userInfo: nil)
    }
}

extension AlcedoError {
    /// `true` for failures that may go away on another attempt: timeouts, connection failures
    /// (refused, unreachable, DNS, reset, other network failures), responses 408, 429 and 5xx,
    /// an object store's throttling and server errors (`SlowDown`, 503, `InternalError`), and
    /// bodies cut short, and a transport failure of another kind (`.URLSessionError` with an
    /// error of your own loader, as Kingfisher retries any `URLSession` error). Cancellations and
    /// TLS failures (a certificate does not change between attempts) are never retriable.
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
            case .URLSessionError(let error): return !(error is CancellationError)
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

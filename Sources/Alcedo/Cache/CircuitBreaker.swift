/// The circuit breaker of one remote dependency (a Redis node, an object store): after
/// ``Config/failureThreshold`` failures in a row the dependency is skipped (open) for
/// ``Config/openDuration``; then one probe is let through (half-open): its success closes the
/// breaker, its failure opens it again.
public struct CircuitBreaker: Sendable, Hashable {
    /// The breaker's settings.
    public struct Config: Sendable, Hashable {
        /// Failures in a row that open the breaker. Default 3.
        public var failureThreshold: Int
        /// How long an open breaker skips the node before a probe. Default 2 s.
        public var openDuration: Duration

        /// Creates settings; every parameter has the default stated on its property.
        public init(failureThreshold: Int = 3, openDuration: Duration = .seconds(2)) {
            self.failureThreshold = failureThreshold
            self.openDuration = openDuration
        }
    }

    /// Where the breaker stands.
    public enum State: Sendable, Hashable, CustomStringConvertible {
        /// Commands go through; `failures` in a row so far.
        case closed(failures: Int)
        /// Commands are refused until `until`.
        case open(until: ContinuousClock.Instant)
        /// One probe is in flight; other commands are refused until it ends.
        case halfOpen

        public var description: String {
            switch self {
            case .closed: return "closed"
            case .open: return "open"
            case .halfOpen: return "half-open"
            }
        }
    }

    /// The settings.
    public let config: Config
    /// The current state.
    public private(set) var state: State = .closed(failures: 0)
    /// How many times the breaker opened.
    public private(set) var openings = 0

    /// A closed breaker.
    public init(config: Config = Config()) {
        self.config = config
    }

    /// Whether a command may go to the node at `now` (an open breaker past its time lets this
    /// one through as the probe).
    public mutating func allowsRequest(at now: ContinuousClock.Instant) -> Bool {
        switch state {
        case .closed: return true
        case .halfOpen: return false
        case .open(let until):
            guard now >= until else { return false }
            state = .halfOpen
            return true
        }
    }

    /// Records a command that reached the node and got an answer.
    public mutating func recordSuccess() {
        state = .closed(failures: 0)
    }

    /// Records a failed command (no connection, timeout, broken reply).
    /// - Returns: `true` when this failure opened the breaker.
    @discardableResult
    public mutating func recordFailure(at now: ContinuousClock.Instant) -> Bool {
        switch state {
        case .closed(let failures):
            if failures + 1 >= config.failureThreshold {
                state = .open(until: now.advanced(by: config.openDuration))
                openings += 1
                return true
            }
            state = .closed(failures: failures + 1)
            return false
        case .halfOpen:
            state = .open(until: now.advanced(by: config.openDuration))
            openings += 1
            return true
        case .open:
            return false
        }
    }

    /// `true` unless the breaker is open or half-open.
    public var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }
}

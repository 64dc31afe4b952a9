import Alcedo
import Logging
import NIOCore
import NIOSSL
import Synchronization

/// What one node's client counted, and where its circuit breaker stands.
public struct RedisNodeStatistics: Sendable, Hashable {
    /// The node, as `redis://host:port` (no credentials).
    public var node: String
    /// Commands answered (error replies included).
    public var commands = 0
    /// Commands that failed: no connection, timeout, closed connection, broken reply.
    public var failures = 0
    /// Commands that timed out (also counted in ``failures``).
    public var timeouts = 0
    /// Commands refused at once because the breaker was open.
    public var skipped = 0
    /// Connections made.
    public var connects = 0
    /// Connection attempts that failed.
    public var failedConnects = 0
    /// How many times the breaker opened.
    public var breakerOpenings = 0
    /// The breaker's state now: `closed`, `open` or `half-open`.
    public var breakerState = "closed"
}

/// The client of one node: a small pool of pipelined connections, made on demand, remade
/// after a failure with exponential backoff, behind a ``CircuitBreaker``. Failures are logged
/// once per change of state (failing, breaker open, back).
final class RedisNode: Sendable {
    let endpoint: RedisEndpoint
    let name: String
    private let configuration: RedisConfiguration
    private let group: any EventLoopGroup
    private let tls: NIOSSLContext?

    private struct State {
        var connections: [RedisConnection?]
        var pending: [EventLoopFuture<RedisConnection>?]
        var next = 0
        var connectFailures = 0
        var reconnectNotBefore: ContinuousClock.Instant?
        var breaker: CircuitBreaker
        var statistics: RedisNodeStatistics
        var failing = false
        var shutDown = false
    }

    private let state: Mutex<State>

    init(endpoint: RedisEndpoint, configuration: RedisConfiguration, tls: NIOSSLContext? = nil, group: any EventLoopGroup) {
        self.tls = tls
        self.endpoint = endpoint
        self.name = endpoint.description
        self.configuration = configuration
        self.group = group
        let count = max(1, configuration.connectionsPerNode)
        state = Mutex(State(connections: Array(repeating: nil, count: count), pending: Array(repeating: nil, count: count),
                            breaker: CircuitBreaker(config: configuration.circuitBreaker),
                            statistics: RedisNodeStatistics(node: endpoint.description)))
    }

    /// The counters and breaker state now.
    var statistics: RedisNodeStatistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.breakerOpenings = state.breaker.openings
            statistics.breakerState = state.breaker.state.description
            return statistics
        }
    }

    /// The breaker now.
    var breaker: CircuitBreaker { state.withLock { $0.breaker } }

    /// Sends `commands` in one write on one connection and returns their replies, through the
    /// breaker: an open breaker refuses at once with ``Alcedo/SharedStorageErrorReason/nodeUnavailable(node:)``.
    func execute(_ commands: [[RedisArgument]], timeout: Duration, name command: String) async throws(AlcedoError) -> [RESPValue] {
        let allowed = state.withLock { state in
            let allowed = state.breaker.allowsRequest(at: .now)
            if !allowed { state.statistics.skipped += 1 }
            return allowed
        }
        guard allowed else { throw .cacheError(reason: .sharedStorageError(reason: .nodeUnavailable(node: name))) }
        do throws(AlcedoError) {
            let connection = try await connection()
            let replies = try await connection.pipeline(commands, timeout: timeout, name: command)
            recordSuccess()
            return replies
        } catch {
            recordFailure(error)
            throw error
        }
    }

    /// Connects one connection now (for the start-up check), whatever the backoff says.
    func probe() async throws(AlcedoError) {
        let replies = try await execute([["PING"]], timeout: configuration.connectTimeout, name: "PING")
        if case .error(let message) = replies[0] {
            let reason: SharedStorageErrorReason = message.hasPrefix("NOAUTH") || message.hasPrefix("WRONGPASS")
                ? .authenticationFailed(node: name, message: message) : .serverError(node: name, command: "PING", message: message)
            throw .cacheError(reason: .sharedStorageError(reason: reason))
        }
    }

    /// Closes every connection; later commands fail.
    func shutdown() {
        let connections = state.withLock { state in
            state.shutDown = true
            defer { state.connections = state.connections.map { _ in nil } }
            return state.connections.compactMap { $0 }
        }
        connections.forEach { $0.close() }
    }

    // MARK: Connections

    private enum Plan {
        case use(RedisConnection)
        case wait(EventLoopFuture<RedisConnection>)
        case connect(EventLoopPromise<RedisConnection>, slot: Int)
        case backingOff
        case shutDown
    }

    private func connection() async throws(AlcedoError) -> RedisConnection {
        let now = ContinuousClock.now
        let loop = group.next()
        let plan: Plan = state.withLock { state in
            guard !state.shutDown else { return .shutDown }
            let slot = state.next % state.connections.count
            state.next &+= 1
            if let connection = state.connections[slot], connection.isActive { return .use(connection) }
            state.connections[slot] = nil
            // Another live connection serves while this slot is remade.
            if let live = state.connections.first(where: { $0?.isActive == true }), let live {
                if state.pending[slot] == nil, state.reconnectNotBefore.map({ now >= $0 }) ?? true {
                    let promise = loop.makePromise(of: RedisConnection.self)
                    state.pending[slot] = promise.futureResult
                    Task { [self] in _ = try? await self.connect(promise, slot: slot) }
                }
                return .use(live)
            }
            if let pending = state.pending[slot] { return .wait(pending) }
            if let notBefore = state.reconnectNotBefore, now < notBefore { return .backingOff }
            let promise = loop.makePromise(of: RedisConnection.self)
            state.pending[slot] = promise.futureResult
            return .connect(promise, slot: slot)
        }
        switch plan {
        case .use(let connection):
            return connection
        case .wait(let future):
            do {
                return try await future.get()
            } catch let error as AlcedoError {
                throw error
            } catch {
                throw .cacheError(reason: .sharedStorageError(reason: .connectionFailed(node: name, description: "\(error)")))
            }
        case .connect(let promise, let slot):
            return try await connect(promise, slot: slot)
        case .backingOff:
            throw .cacheError(reason: .sharedStorageError(reason: .connectionFailed(
                node: name, description: "waiting to reconnect after \(state.withLock { $0.connectFailures }) failed attempts")))
        case .shutDown:
            throw .cacheError(reason: .sharedStorageError(reason: .connectionClosed(node: name)))
        }
    }

    private func connect(_ promise: EventLoopPromise<RedisConnection>, slot: Int) async throws(AlcedoError) -> RedisConnection {
        do throws(AlcedoError) {
            let connection = try await RedisConnection.connect(to: endpoint, configuration: configuration, tls: tls, group: group)
            let keep = state.withLock { state in
                state.pending[slot] = nil
                state.statistics.connects += 1
                guard !state.shutDown else { return false }
                state.connections[slot] = connection
                state.connectFailures = 0
                state.reconnectNotBefore = nil
                return true
            }
            if !keep { connection.close() }
            promise.succeed(connection)
            return connection
        } catch {
            state.withLock { state in
                state.pending[slot] = nil
                state.statistics.failedConnects += 1
                state.connectFailures += 1
                let exponent = min(state.connectFailures - 1, 16)
                let wait = min(configuration.reconnectBackoff * (1 << exponent), configuration.maxReconnectBackoff)
                state.reconnectNotBefore = ContinuousClock.now.advanced(by: wait)
            }
            promise.fail(error)
            throw error
        }
    }

    // MARK: Accounting and logging

    private func recordSuccess() {
        let recovered = state.withLock { state in
            state.statistics.commands += 1
            state.breaker.recordSuccess()
            defer { state.failing = false }
            return state.failing
        }
        if recovered { configuration.logger.notice("Redis node \(name) answers again") }
    }

    private func recordFailure(_ error: AlcedoError) {
        let (first, opened) = state.withLock { state in
            state.statistics.failures += 1
            if case .cacheError(let reason) = error, case .timedOut? = reason.sharedStorageReason { state.statistics.timeouts += 1 }
            let opened = state.breaker.recordFailure(at: .now)
            defer { state.failing = true }
            return (!state.failing, opened)
        }
        if first { configuration.logger.warning("Redis node \(name) failing, its keys count as misses: \(error)") }
        if opened {
            configuration.logger.warning(
                "Redis node \(name) skipped for \(configuration.circuitBreaker.openDuration) after repeated failures (circuit breaker open)")
        }
    }
}

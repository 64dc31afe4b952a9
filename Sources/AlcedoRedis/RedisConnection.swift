import Alcedo
import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// One connection to one Redis node: authenticated and on its database once made, with any
/// number of commands in flight (see ``RedisCommandHandler``). A command that times out closes
/// the connection (its reply could otherwise be taken for the next command's).
final class RedisConnection: Sendable {
    let channel: any Channel
    let node: String
    private let closeReason: RedisCloseReason

    private init(channel: any Channel, node: String, closeReason: RedisCloseReason) {
        self.channel = channel
        self.node = node
        self.closeReason = closeReason
    }

    /// `true` until the connection closes.
    var isActive: Bool { channel.isActive }

    /// Connects to `endpoint`, starts TLS when it says so, then sends `AUTH` and `SELECT`.
    /// `tls` is the context of the storage's `rediss://` nodes (made once, see ``RedisTLS``);
    /// it is used when `endpoint` says TLS.
    static func connect(to endpoint: RedisEndpoint, configuration: RedisConfiguration, tls: NIOSSLContext?,
                        group: any EventLoopGroup) async throws(AlcedoError) -> RedisConnection {
        let node = endpoint.description
        let limits = configuration.decoderLimits
        let sslContext: NIOSSLContext?
        if endpoint.usesTLS {
            guard let tls else {
                throw .cacheError(reason: .sharedStorageError(reason: .invalidConfiguration("no TLS context for \(node)")))
            }
            sslContext = tls
        } else {
            sslContext = nil
        }
        let host = endpoint.host
        let closeReason = RedisCloseReason()
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(TimeAmount(configuration.connectTimeout))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        let tls = try NIOSSLClientHandler(context: sslContext, serverHostname: host.first?.isNumber == true ? nil : host)
                        try channel.pipeline.syncOperations.addHandler(tls)
                    }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(RESPDecoder(limits: limits)))
                    try channel.pipeline.syncOperations.addHandler(RedisCommandHandler(node: node, closeReason: closeReason))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: endpoint.host, port: endpoint.port).get()
        } catch ChannelError.connectTimeout {
            // Counted as a timeout like a command's: the node did not answer within its deadline.
            throw .cacheError(reason: .sharedStorageError(reason: .timedOut(
                node: node, command: "connect", timeout: configuration.connectTimeout)))
        } catch {
            throw .cacheError(reason: .sharedStorageError(reason: .connectionFailed(node: node, description: "\(error)")))
        }
        let connection = RedisConnection(channel: channel, node: node, closeReason: closeReason)
        do throws(AlcedoError) {
            if let password = endpoint.password {
                var auth: [RedisArgument] = ["AUTH"]
                if let user = endpoint.user { auth.append(.string(user)) }
                auth.append(.string(password))
                let reply = try await connection.send(auth, timeout: configuration.connectTimeout, name: "AUTH")
                if case .error(let message) = reply {
                    throw .cacheError(reason: .sharedStorageError(reason: .authenticationFailed(node: node, message: message)))
                }
            }
            if endpoint.database != 0 {
                let reply = try await connection.send(["SELECT", .string(String(endpoint.database))],
                                                      timeout: configuration.connectTimeout, name: "SELECT")
                try connection.check(reply, command: "SELECT")
            }
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// Sends one command and waits at most `timeout` for its reply (an error reply is returned,
    /// not thrown).
    func send(_ command: [RedisArgument], timeout: Duration, name: String) async throws(AlcedoError) -> RESPValue {
        try await pipeline([command], timeout: timeout, name: name)[0]
    }

    /// Sends `commands` in one write and waits at most `timeout` for all their replies.
    func pipeline(_ commands: [[RedisArgument]], timeout: Duration, name: String) async throws(AlcedoError) -> [RESPValue] {
        let loop = channel.eventLoop
        let promises = commands.map { _ in loop.makePromise(of: RESPValue.self) }
        let all = EventLoopFuture.whenAllSucceed(promises.map(\.futureResult), on: loop)
        let channel = self.channel
        let timer = loop.scheduleTask(in: TimeAmount(timeout)) {
            for promise in promises { promise.fail(RedisConnectionError.timedOut) }
            channel.close(promise: nil)
        }
        all.whenComplete { _ in timer.cancel() }
        // A write that fails (the connection closed before it, its handlers gone) fails the
        // commands at once with the reason of the close, instead of leaving them to the timer.
        let written = loop.makePromise(of: Void.self)
        let closeReason = self.closeReason
        written.futureResult.whenFailure { _ in
            let error = closeReason.value ?? .closed
            for promise in promises { promise.fail(error) }
        }
        channel.writeAndFlush(RedisRequest(commands: commands, promises: promises), promise: written)
        do {
            return try await all.get()
        } catch let error as RedisConnectionError {
            throw .cacheError(reason: .sharedStorageError(reason: Self.reason(error, node: node, command: name, timeout: timeout)))
        } catch {
            throw .cacheError(reason: .sharedStorageError(reason: .connectionFailed(node: node, description: "\(error)")))
        }
    }

    /// Throws the error reply as a typed error (`NOAUTH`/`WRONGPASS` as an authentication failure).
    func check(_ reply: RESPValue, command: String) throws(AlcedoError) {
        guard case .error(let message) = reply else { return }
        if message.hasPrefix("NOAUTH") || message.hasPrefix("WRONGPASS") {
            throw .cacheError(reason: .sharedStorageError(reason: .authenticationFailed(node: node, message: message)))
        }
        throw .cacheError(reason: .sharedStorageError(reason: .serverError(node: node, command: command, message: message)))
    }

    /// Closes the connection; commands in flight fail.
    func close() {
        channel.close(promise: nil)
    }

    private static func reason(_ error: RedisConnectionError, node: String, command: String, timeout: Duration) -> SharedStorageErrorReason {
        switch error {
        case .closed: return .connectionClosed(node: node)
        case .malformed(let description): return .malformedReply(node: node, description: description)
        case .io(let description): return .connectionFailed(node: node, description: description)
        case .tls(let description): return .tlsFailed(node: node, description: description)
        case .timedOut: return .timedOut(node: node, command: command, timeout: timeout)
        }
    }
}

extension TimeAmount {
    /// `duration` in nanoseconds.
    init(_ duration: Duration) {
        let parts = duration.components
        self = .nanoseconds(parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000)
    }
}

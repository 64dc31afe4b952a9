import Alcedo
import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// A ``Alcedo/SharedCacheStorage`` on one or more Redis nodes: give it to an
/// ``Alcedo/SharedCacheTier`` and the tier to ``Alcedo/ImageCache``.
///
/// ```swift
/// let redis = try RedisSharedStorage(configuration: RedisConfiguration(urls: ["redis://10.0.0.5:6379"]))
/// try await redis.start()
/// let cache = ImageCache(name: "images", sharedTier: SharedCacheTier(storage: redis))
/// ```
///
/// - Keys: `keyPrefix` + the SHA-256 hex of the cache key; each key lives on one node chosen
///   by rendezvous hashing (``RendezvousHashing``). Losing a node turns its share into misses;
///   adding one moves only the share it takes over.
/// - Values: ``SharedEntryCodec`` (version, checksum, metadata, bytes). A value that fails its
///   check is a miss and is deleted. Values over ``RedisConfiguration/maxValueSize`` are not
///   stored. Entries expire with `PX` at the entry's expiration.
/// - Work locks: `SET keyPrefix+lock:… token NX PX`, on the entry's node; released only by
///   their holder (a compare-and-delete script).
/// - Faults: every failure is thrown as a typed ``Alcedo/SharedStorageErrorReason`` (which the
///   tier turns into a miss); a node that keeps failing is skipped by its circuit breaker.
public final class RedisSharedStorage: SharedCacheStorage {
    /// The settings.
    public let configuration: RedisConfiguration
    let nodes: [RedisNode]
    /// The placement of keys on ``RedisConfiguration/nodes``.
    public let hashing: RendezvousHashing
    private let lockToken: String
    private let rejected = Mutex(0)

    /// Creates the storage; nothing connects until the first command or ``start()``.
    /// - Parameters:
    ///   - configuration: the nodes and settings.
    ///   - eventLoopGroup: the loops connections run on. Default `MultiThreadedEventLoopGroup.singleton`.
    /// - Throws: ``Alcedo/SharedStorageErrorReason/invalidConfiguration(_:)`` without nodes, with
    ///   a node named twice, with a pool size or value limit below 1, or, with a `rediss://`
    ///   node, when the TLS settings cannot be used (``RedisConfiguration/caFile`` unreadable or
    ///   holding no certificate).
    public init(configuration: RedisConfiguration,
                eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws(AlcedoError) {
        func invalid(_ message: String) -> AlcedoError {
            .cacheError(reason: .sharedStorageError(reason: .invalidConfiguration(message)))
        }
        guard !configuration.nodes.isEmpty else { throw invalid("no Redis node given") }
        guard configuration.connectionsPerNode >= 1 else { throw invalid("connectionsPerNode must be at least 1") }
        guard configuration.maxValueSize >= 1 else { throw invalid("maxValueSize must be at least 1 byte") }
        let names = configuration.nodes.map(\.description)
        guard Set(names).count == names.count else { throw invalid("a Redis node is named twice") }
        self.configuration = configuration
        let tls = configuration.nodes.contains(where: \.usesTLS) ? try RedisTLS.makeContext(configuration) : nil
        nodes = configuration.nodes.map { RedisNode(endpoint: $0, configuration: configuration, tls: tls, group: eventLoopGroup) }
        hashing = RendezvousHashing(nodes: names)
        lockToken = UUID().uuidString
    }

    /// Checks every node with `PING` (connecting, authenticating, selecting the database).
    /// A node that cannot be reached is logged and left to the breaker (the cache works
    /// without it); a configuration error — credentials refused, database refused, a TLS
    /// certificate not trusted — is logged and thrown, since retrying cannot fix it.
    /// - Throws: the first ``Alcedo/SharedStorageErrorReason/authenticationFailed(node:message:)``,
    ///   ``Alcedo/SharedStorageErrorReason/serverError(node:command:message:)`` or
    ///   ``Alcedo/SharedStorageErrorReason/tlsFailed(node:description:)``.
    public func start() async throws(AlcedoError) {
        var firstError: AlcedoError?
        for node in nodes {
            do throws(AlcedoError) {
                try await node.probe()
            } catch {
                let shared: SharedStorageErrorReason? = if case .cacheError(let reason) = error { reason.sharedStorageReason } else { nil }
                switch shared {
                case .authenticationFailed?, .serverError?:
                    configuration.logger.error("Redis node \(node.name) refused the configured login or database: \(error)")
                    if firstError == nil { firstError = error }
                case .tlsFailed?:
                    configuration.logger.error(
                        "Redis node \(node.name): TLS handshake failed, check the trusted CA (caFile, --redis-ca-file) and the node's certificate: \(error)")
                    if firstError == nil { firstError = error }
                default:
                    configuration.logger.warning("Redis node \(node.name) unreachable at start, its keys count as misses: \(error)")
                }
            }
        }
        if let firstError { throw firstError }
    }

    /// Closes every connection.
    public func shutdown() {
        nodes.forEach { $0.shutdown() }
    }

    /// Each node's counters and breaker state, in the configured order.
    public var nodeStatistics: [RedisNodeStatistics] { nodes.map(\.statistics) }

    /// Stored values that failed their check (and were deleted).
    public var rejectedEntries: Int { rejected.withLock { $0 } }

    /// The Redis key of cache key `key`.
    public func redisKey(forKey key: String) -> String {
        configuration.keyPrefix + lowercaseHex(SHA256.hash(data: Data(key.utf8)))
    }

    /// The index in ``RedisConfiguration/nodes`` of the node that holds `key`.
    public func nodeIndex(forKey key: String) -> Int {
        hashing.node(for: redisKey(forKey: key)) ?? 0
    }

    // MARK: SharedCacheStorage

    public func entry(forKey key: String) async throws(AlcedoError) -> SharedCacheEntry? {
        let redisKey = redisKey(forKey: key)
        let node = node(for: redisKey)
        let reply = try await node.execute([["GET", .string(redisKey)]], timeout: configuration.getTimeout, name: "GET")[0]
        switch reply {
        case .bulkString(nil):
            return nil
        case .bulkString(let buffer?):
            do throws(SharedEntryCodec.Rejection) {
                return try SharedEntryCodec.decode(buffer.readableBytesView, key: key)
            } catch {
                rejected.withLock { $0 += 1 }
                configuration.logger.warning("Redis entry \(redisKey) on \(node.name) rejected (\(error)); deleted")
                _ = try? await node.execute([["DEL", .string(redisKey)]], timeout: configuration.writeTimeout, name: "DEL")
                return nil
            }
        case .error(let message):
            throw serverError(node, "GET", message)
        default:
            throw .cacheError(reason: .sharedStorageError(reason: .malformedReply(node: node.name, description: "GET answered \(reply)")))
        }
    }

    @discardableResult
    public func store(_ entry: SharedCacheEntry, forKey key: String) async throws(AlcedoError) -> Bool {
        let expiresIn = entry.metadata.expirationDate.timeIntervalSinceNow
        guard expiresIn > 0.001 else { return false }
        guard entry.data.count <= configuration.maxValueSize, let value = SharedEntryCodec.encode(entry),
              value.count <= configuration.maxValueSize else { return false }
        let redisKey = redisKey(forKey: key)
        var command: [RedisArgument] = ["SET", .string(redisKey), .bytes(ByteBuffer(bytes: value))]
        if entry.metadata.expirationDate != .distantFuture {
            command += ["PX", .string(String(Int64(min(expiresIn * 1000, 9.0e15))))]
        }
        let node = node(for: redisKey)
        let reply = try await node.execute([command], timeout: configuration.writeTimeout, name: "SET")[0]
        if case .error(let message) = reply { throw serverError(node, "SET", message) }
        return true
    }

    public func removeEntry(forKey key: String) async throws(AlcedoError) {
        let redisKey = redisKey(forKey: key)
        let node = node(for: redisKey)
        let reply = try await node.execute([["DEL", .string(redisKey)]], timeout: configuration.writeTimeout, name: "DEL")[0]
        if case .error(let message) = reply { throw serverError(node, "DEL", message) }
    }

    public func acquireLock(forKey key: String, duration: Duration) async throws(AlcedoError) -> Bool {
        let redisKey = redisKey(forKey: key)
        let node = node(for: redisKey)
        let milliseconds = max(1, duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
        let reply = try await node.execute([["SET", .string(lockKey(redisKey)), .string(lockToken), "NX", "PX",
                                             .string(String(milliseconds))]],
                                           timeout: configuration.writeTimeout, name: "SET NX")[0]
        switch reply {
        case .simpleString: return true
        case .bulkString(nil): return false
        case .error(let message): throw serverError(node, "SET NX", message)
        default:
            throw .cacheError(reason: .sharedStorageError(reason: .malformedReply(node: node.name, description: "SET NX answered \(reply)")))
        }
    }

    public func releaseLock(forKey key: String) async throws(AlcedoError) {
        let redisKey = redisKey(forKey: key)
        let node = node(for: redisKey)
        let script = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end"
        let reply = try await node.execute([["EVAL", .string(script), "1", .string(lockKey(redisKey)), .string(lockToken)]],
                                           timeout: configuration.writeTimeout, name: "EVAL")[0]
        if case .error(let message) = reply { throw serverError(node, "EVAL", message) }
    }

    // MARK: Server statistics

    /// What one node says about itself in `INFO`.
    public struct ServerInfo: Sendable, Hashable {
        /// The node, as `redis://host:port`.
        public var node: String
        /// Keys in the selected database (`INFO keyspace`); Alcedo's and any others.
        public var keys: Int
        /// `used_memory` in bytes.
        public var usedMemory: Int
        /// `maxmemory` in bytes (0: no limit).
        public var maxMemory: Int
        /// `maxmemory_policy`, such as `allkeys-lru`.
        public var maxMemoryPolicy: String
    }

    /// Asks every node for `INFO memory` and `INFO keyspace` (pipelined).
    /// - Returns: one result per node, in the configured order: its info or the error.
    public func serverInfo() async -> [Result<ServerInfo, AlcedoError>] {
        var results: [Result<ServerInfo, AlcedoError>] = []
        for node in nodes {
            do throws(AlcedoError) {
                let replies = try await node.execute([["INFO", "memory"], ["INFO", "keyspace"]],
                                                     timeout: configuration.connectTimeout, name: "INFO")
                guard let memory = replies[0].string, let keyspace = replies[1].string else {
                    if case .error(let message) = replies[0] { throw serverError(node, "INFO", message) }
                    if case .error(let message) = replies[1] { throw serverError(node, "INFO", message) }
                    throw .cacheError(reason: .sharedStorageError(reason: .malformedReply(node: node.name, description: "INFO is not text")))
                }
                let fields = Self.infoFields(memory + "\n" + keyspace)
                var keys = 0
                if let db = fields["db\(node.endpoint.database)"] {
                    // "keys=12,expires=12,avg_ttl=0"
                    for part in db.split(separator: ",") where part.hasPrefix("keys=") { keys = Int(part.dropFirst(5)) ?? 0 }
                }
                results.append(.success(ServerInfo(node: node.name, keys: keys, usedMemory: Int(fields["used_memory"] ?? "") ?? 0,
                                                   maxMemory: Int(fields["maxmemory"] ?? "") ?? 0,
                                                   maxMemoryPolicy: fields["maxmemory_policy"] ?? "")))
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }

    // MARK: Helpers

    private func node(for redisKey: String) -> RedisNode {
        nodes[hashing.node(for: redisKey) ?? 0]
    }

    private func lockKey(_ redisKey: String) -> String {
        configuration.keyPrefix + "lock:" + redisKey.dropFirst(configuration.keyPrefix.count)
    }

    private func serverError(_ node: RedisNode, _ command: String, _ message: String) -> AlcedoError {
        if message.hasPrefix("NOAUTH") || message.hasPrefix("WRONGPASS") {
            return .cacheError(reason: .sharedStorageError(reason: .authenticationFailed(node: node.name, message: message)))
        }
        return .cacheError(reason: .sharedStorageError(reason: .serverError(node: node.name, command: command, message: message)))
    }

    static func infoFields(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = String(line[line.index(after: colon)...]).trimmingSpaces()
        }
        return fields
    }
}

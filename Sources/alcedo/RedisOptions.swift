import Alcedo
import AlcedoRedis
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The shared cache tier's options: `--redis URL` (repeatable) or `ALCEDO_REDIS` (comma-separated),
/// `--redis-max-value`, `--redis-timeout`, `--redis-lock-wait` and `--redis-ca-file`.
struct RedisOptions: ParsableArguments {
    @Option(name: .customLong("redis"), help: ArgumentHelp(
        "A Redis node of the shared cache tier, redis://[user:password@]host[:port][/db] or rediss:// for TLS; "
            + "repeat for several nodes (default: $ALCEDO_REDIS, comma-separated; none).",
        valueName: "url"))
    var urls: [String] = []

    @Option(name: .customLong("redis-max-value"), help: ArgumentHelp(
        "Entries larger than this many bytes are not stored in Redis (default: $ALCEDO_REDIS_MAX_VALUE, else 8388608: 8 MiB).",
        valueName: "bytes"))
    var maxValue: Int?

    @Option(name: .customLong("redis-timeout"), help: ArgumentHelp(
        "How long a Redis GET may take before it counts as a miss, in milliseconds (default 50; writes get 5 times as long).",
        valueName: "ms"))
    var timeout: Int = 50

    @Option(name: .customLong("redis-lock-wait"), help: ArgumentHelp(
        "How long a node waits for the result another node is making before it does the work itself, "
            + "in milliseconds (default 2000; 0 turns cross-node coalescing off).",
        valueName: "ms"))
    var lockWait: Int = 2000

    @Option(name: .customLong("redis-ca-file"), help: ArgumentHelp(
        "A PEM file of the certificate authorities trusted for rediss:// nodes, in place of the system's "
            + "(default: $ALCEDO_REDIS_CA_FILE, else the system's trust roots).",
        valueName: "path"))
    var caFile: String?

    /// The shared tier over `storage`, with the lock wait from `--redis-lock-wait`.
    func tier(over storage: RedisSharedStorage) -> SharedCacheTier {
        SharedCacheTier(storage: storage, config: .init(coalescesWork: lockWait > 0, lockWaitLimit: .milliseconds(lockWait)))
    }

    /// `--redis-max-value`, else `ALCEDO_REDIS_MAX_VALUE`, else 8 MiB.
    var maxValueSize: Int {
        maxValue ?? ProcessInfo.processInfo.environment["ALCEDO_REDIS_MAX_VALUE"].flatMap { Int($0) } ?? 8 << 20
    }

    /// The node URLs: the flags, else `ALCEDO_REDIS` split at commas.
    var nodeURLs: [String] {
        if !urls.isEmpty { return urls }
        let environment = ProcessInfo.processInfo.environment["ALCEDO_REDIS"] ?? ""
        return environment.split(separator: ",").map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
    }

    /// The storage on the nodes, or `nil` when none is given.
    func storage() throws(AlcedoError) -> RedisSharedStorage? {
        let urls = nodeURLs
        guard !urls.isEmpty else { return nil }
        var configuration = try RedisConfiguration(urls: urls, maxValueSize: maxValueSize)
        guard timeout > 0 else {
            throw .cacheError(reason: .sharedStorageError(reason: .invalidConfiguration("--redis-timeout must be at least 1 ms")))
        }
        guard lockWait >= 0 else {
            throw .cacheError(reason: .sharedStorageError(reason: .invalidConfiguration("--redis-lock-wait must not be negative")))
        }
        configuration.getTimeout = .milliseconds(timeout)
        configuration.writeTimeout = .milliseconds(5 * timeout)
        configuration.caFile = caFile ?? ProcessInfo.processInfo.environment["ALCEDO_REDIS_CA_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        return try RedisSharedStorage(configuration: configuration)
    }
}

/// What `alcedo cache stats --redis` prints per node.
struct RedisNodeOutput: Encodable {
    let node: String
    let keys: Int?
    let usedMemory: Int?
    let maxMemory: Int?
    let maxMemoryPolicy: String?
    let error: String?

    init(_ result: Result<RedisSharedStorage.ServerInfo, AlcedoError>, node: String) {
        self.node = node
        switch result {
        case .success(let info):
            (keys, usedMemory, maxMemory, maxMemoryPolicy, error) = (info.keys, info.usedMemory, info.maxMemory, info.maxMemoryPolicy, nil)
        case .failure(let failure):
            (keys, usedMemory, maxMemory, maxMemoryPolicy, error) = (nil, nil, nil, nil, "\(failure)")
        }
    }
}

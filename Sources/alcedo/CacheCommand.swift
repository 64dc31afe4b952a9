@_spi(Testing) import Alcedo
import AlcedoRedis
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `alcedo cache`: inspect and maintain a disk cache folder.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect and maintain the disk cache and the result store.",
        subcommands: [Stats.self, Clean.self, Clear.self, Path.self, DebugWrite.self, CacheStoreCommand.self]
    )
}

/// The options every `alcedo cache` subcommand shares.
struct CacheFolderOptions: ParsableArguments {
    @Option(name: .customLong("cache-dir"), help: ArgumentHelp(
        "The cache folder (default: the default cache, $XDG_CACHE_HOME/alcedo/default or ~/.cache/alcedo/default).",
        valueName: "dir"))
    var cacheDirectory: String?

    @Option(name: .customLong("size-limit"), help: ArgumentHelp(
        "The size limit in bytes that clean enforces and stats reports (default 0: none).", valueName: "bytes"))
    var sizeLimit: Int = 0

    @Flag(name: .customLong("json"), help: "Print JSON instead of text.")
    var json = false

    /// The disk storage of the chosen folder.
    func storage() -> DiskStorage.EntryStore {
        let config: DiskStorage.EntryStore.Config
        if let cacheDirectory {
            config = DiskStorage.EntryStore.Config(folderURL: URL(fileURLWithPath: cacheDirectory, isDirectory: true), sizeLimit: sizeLimit)
        } else {
            config = DiskStorage.EntryStore.Config(name: "default", sizeLimit: sizeLimit)
        }
        return DiskStorage.EntryStore(config: config)
    }

    /// Prints `value` as one line of sorted JSON.
    func printJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}

/// Ends the command with the error's description on stderr and status 1.
private func fail(_ error: AlcedoError) -> ExitCode {
    Console.error("alcedo: \(error)")
    return ExitCode.failure
}

extension CacheCommand {
    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "stats",
            abstract: "Entry count, total size and limits of a cache folder, and keys and memory of the shared Redis tier.")

        @OptionGroup var options: CacheFolderOptions
        @OptionGroup var redis: RedisOptions

        func run() async throws {
            let statistics: DiskStorage.Statistics
            let nodes: [RedisNodeOutput]
            do {
                statistics = try options.storage().statistics()
                nodes = try await redisNodes()
            } catch {
                throw fail(error)
            }
            if options.json {
                if redis.nodeURLs.isEmpty {
                    try options.printJSON(statistics)
                } else {
                    try options.printJSON(StatsOutput(disk: statistics, redis: nodes))
                }
                return
            }
            print("folder:      \(statistics.path)")
            print("entries:     \(statistics.entryCount) (\(statistics.expiredCount) expired)")
            print("total size:  \(ByteCount(statistics.totalSize))")
            if statistics.sizeLimit > 0 {
                print("size limit:  \(ByteCount(statistics.sizeLimit)), trimmed to \(ByteCount(statistics.lowWaterMark))")
            } else {
                print("size limit:  none")
            }
            print("expiration:  \(statistics.expiration) by default")
            for node in nodes {
                if let error = node.error {
                    print("redis:       \(node.node): \(error)")
                } else {
                    let limit = (node.maxMemory ?? 0) > 0 ? "max \(ByteCount(node.maxMemory ?? 0))" : "no maxmemory"
                    print("redis:       \(node.node): \(node.keys ?? 0) keys, \(ByteCount(node.usedMemory ?? 0)) used, "
                          + "\(limit), policy \(node.maxMemoryPolicy ?? "")")
                }
            }
        }

        /// `INFO` of every node given with `--redis` or `ALCEDO_REDIS`.
        private func redisNodes() async throws(AlcedoError) -> [RedisNodeOutput] {
            guard let storage = try redis.storage() else { return [] }
            defer { storage.shutdown() }
            let infos = await storage.serverInfo()
            return zip(infos, storage.configuration.nodes).map { RedisNodeOutput($0, node: $1.description) }
        }

        private struct StatsOutput: Encodable {
            let disk: DiskStorage.Statistics
            let redis: [RedisNodeOutput]
        }
    }

    struct Clean: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clean",
            abstract: "Remove expired entries, entries over --size-limit (least recently used first), invalid files and stale temporary files.")

        @OptionGroup var options: CacheFolderOptions

        func run() throws {
            let report: DiskStorage.CleanUpReport
            do {
                report = try options.storage().cleanUp()
            } catch {
                throw fail(error)
            }
            if options.json {
                try options.printJSON(CleanOutput(report))
            } else {
                print("removed \(report.expired.count) expired, \(report.sizeLimit.count) over the size limit, "
                      + "\(report.corrupt.count) invalid, \(report.temporaryFiles) temporary files")
            }
        }

        private struct CleanOutput: Encodable {
            let expired: [String]
            let sizeLimit: [String]
            let corrupt: [String]
            let temporaryFiles: Int

            init(_ report: DiskStorage.CleanUpReport) {
                expired = report.expired
                sizeLimit = report.sizeLimit
                corrupt = report.corrupt
                temporaryFiles = report.temporaryFiles
            }
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clear",
            abstract: "Remove every entry of a cache folder (other files are left alone).")

        @OptionGroup var options: CacheFolderOptions

        func run() throws {
            let storage = options.storage()
            do {
                try storage.removeAll()
            } catch {
                throw fail(error)
            }
            if options.json {
                try options.printJSON(["cleared": storage.directoryURL.path])
            } else {
                print("cleared \(storage.directoryURL.path)")
            }
        }
    }

    struct Path: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "path",
            abstract: "The path of a key's file in a cache folder.")

        @Argument(help: "The cache key (for a downloaded image, its URL).")
        var key: String

        @Option(name: .customLong("processor"), help: ArgumentHelp(
            "The identifier of the processor of a processed variant.", valueName: "identifier"))
        var processorIdentifier = ""

        @OptionGroup var options: CacheFolderOptions

        func run() throws {
            let storage = options.storage()
            let computedKey = ImageCache.cacheKey(forKey: key, processorIdentifier: processorIdentifier)
            let url = storage.cacheFileURL(forKey: computedKey)
            guard options.json else {
                print(url.path)
                return
            }
            let metadata = try? storage.metadata(forKey: computedKey)
            try options.printJSON(PathOutput(
                key: computedKey, hash: storage.hash(forKey: computedKey), path: url.path, cached: metadata != nil,
                size: metadata?.dataSize, lastAccess: metadata?.lastAccessDate.timeIntervalSince1970,
                expiration: metadata.map { $0.expirationDate == .distantFuture ? nil : $0.expirationDate.timeIntervalSince1970 } ?? nil,
                etag: metadata?.httpCacheInfo?.etag))
        }

        private struct PathOutput: Encodable {
            let key: String
            let hash: String
            let path: String
            let cached: Bool
            let size: Int?
            let lastAccess: Double?
            let expiration: Double?
            let etag: String?
        }
    }
}

/// A byte count in readable units: `1.5 MB (1500000 bytes)`.
struct ByteCount: CustomStringConvertible {
    let bytes: Int
    init(_ bytes: Int) { self.bytes = bytes }

    var description: String {
        let units = ["kB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = -1
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        guard unit >= 0 else { return "\(bytes) bytes" }
        return String(cFormat: "%.1f ", value) + units[unit] + " (\(bytes) bytes)"
    }
}

import Alcedo
import AlcedoServer
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `alcedo cache result-store list|purge`: the entries of a result store (or, with
/// `--kind sources`, a source store), all of them, those under a name prefix, or those of one
/// source URL.
struct CacheStoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "result-store",
        abstract: "List or purge the entries of the result store (or the source store) by prefix or source URL.",
        subcommands: [List.self, Purge.self]
    )

    /// The options `list` and `purge` share.
    struct Options: ParsableArguments {
        @OptionGroup var stores: StoreOptions
        @OptionGroup(title: "Object storage") var s3: S3Options

        @Option(help: ArgumentHelp("Which store: results (default) or sources.", valueName: "kind"))
        var kind: String = "results"

        @Option(help: ArgumentHelp("Only entries whose name starts with this (names look like results/SOURCEHASH/KEYHASH).",
                                   valueName: "prefix"))
        var prefix: String?

        @Option(help: ArgumentHelp("Only the entries of this source URL, as written in image URLs.", valueName: "url"))
        var source: String?

        @Flag(name: .customLong("json"), help: "Print JSON instead of text.")
        var json = false

        /// The tier of the chosen store and the name prefix asked for.
        func tier() throws -> (ObjectStoreTier, String) {
            let env = ServeEnvironment(ProcessInfo.processInfo.environment)
            guard let kind = ObjectStoreTier.Kind(rawValue: kind) else {
                throw ValidationError("--kind is results or sources, not \(kind)")
            }
            let location = kind == .sources ? try stores.sourceLocation(env) ?? stores.resultLocation(env) : try stores.resultLocation(env)
            guard let location else {
                throw ValidationError("name the store with --\(kind == .results ? "result" : "source")-storage or $ALCEDO_\(kind == .results ? "RESULT" : "SOURCE")_STORAGE")
            }
            guard prefix == nil || source == nil else { throw ValidationError("--prefix and --source do not go together") }
            let tier = ObjectStoreTier(store: try stores.store(at: location, s3: s3, env: env), kind: kind)
            let namePrefix = source.map { ObjectStoreTier.namePrefix(kind, forSource: $0) } ?? prefix ?? kind.rawValue + "/"
            return (tier, namePrefix)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List stored entries: name, size, date.")

        @OptionGroup var options: Options

        @Option(help: ArgumentHelp("At most this many entries (default: all).", valueName: "count"))
        var limit: Int?

        func run() async throws {
            let (tier, prefix) = try options.tier()
            defer { Task { await tier.store.shutdown() } }
            let entries: [ObjectStoreListing]
            do {
                entries = try await tier.store.list(prefix: prefix, limit: limit)
            } catch {
                Console.error("alcedo: \(error)")
                throw ExitCode.failure
            }
            if options.json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(entries), as: UTF8.self))
            } else {
                for entry in entries { print("\(entry.name)\t\(entry.size)\t\(entry.lastModified ?? "-")") }
                Console.error("\(entries.count) entries, \(entries.reduce(0) { $0 + $1.size }) bytes")
            }
        }
    }

    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "purge", abstract: "Delete stored entries (only files and objects the store wrote).")

        @OptionGroup var options: Options

        func run() async throws {
            let (tier, prefix) = try options.tier()
            defer { Task { await tier.store.shutdown() } }
            let deleted: Int
            do {
                deleted = try await tier.purge(prefix: prefix)
            } catch {
                Console.error("alcedo: \(error)")
                throw ExitCode.failure
            }
            if options.json {
                print("{\"deleted\":\(deleted)}")
            } else {
                print("deleted \(deleted) entries")
            }
        }
    }
}

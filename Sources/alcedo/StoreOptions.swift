import Alcedo
import AlcedoServer
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The permanent stores' options, shared by `serve` and `cache result-store`:
/// `--result-storage s3://BUCKET/PREFIX|local:///PATH` (`ALCEDO_RESULT_STORAGE`),
/// `--source-storage` (`ALCEDO_SOURCE_STORAGE`), the TTL, the read timeout and the write queue,
/// and an S3 endpoint and region of their own (`ALCEDO_RESULT_STORAGE_S3_ENDPOINT`,
/// `ALCEDO_RESULT_STORAGE_S3_REGION`); otherwise the S3 settings and credentials are the S3
/// source's (`--s3-endpoint`, `IMGPROXY_S3_ENDPOINT`, `AWS_ACCESS_KEY_ID`, …), whether or not
/// S3 sources are turned on.
struct StoreOptions: ParsableArguments {
    @Option(name: .customLong("result-storage"), help: ArgumentHelp(
        "Keep processed variants in s3://BUCKET/PREFIX or local:///PATH, read after Redis and before processing "
            + "(default: $ALCEDO_RESULT_STORAGE; none).", valueName: "url"))
    var resultStorage: String?

    @Option(name: .customLong("source-storage"), help: ArgumentHelp(
        "Keep downloaded originals in s3://BUCKET/PREFIX or local:///PATH, read before the origin "
            + "(default: $ALCEDO_SOURCE_STORAGE; none).", valueName: "url"))
    var sourceStorage: String?

    @Option(name: .customLong("result-storage-ttl"), help: ArgumentHelp(
        "Seconds a stored entry is served; older ones are misses (default: $ALCEDO_RESULT_STORAGE_TTL, else 2592000: 30 days).",
        valueName: "seconds"))
    var ttl: Int?

    @Option(name: .customLong("result-storage-timeout"), help: ArgumentHelp(
        "Milliseconds a store read may take before it is a miss (default: $ALCEDO_RESULT_STORAGE_TIMEOUT, else 1000; writes get 10 times as long).",
        valueName: "ms"))
    var timeout: Int?

    @Option(name: .customLong("result-storage-queue"), help: ArgumentHelp(
        "Store writes that may wait; more are dropped and counted (default: $ALCEDO_RESULT_STORAGE_QUEUE, else 256).",
        valueName: "count"))
    var queue: Int?

    @Option(name: .customLong("result-storage-s3-endpoint"), help: ArgumentHelp(
        "The stores' S3 endpoint, when not the S3 source's (default: $ALCEDO_RESULT_STORAGE_S3_ENDPOINT, else --s3-endpoint).",
        valueName: "url"))
    var endpoint: String?

    @Option(name: .customLong("result-storage-s3-region"), help: ArgumentHelp(
        "The stores' S3 region, when not the S3 source's (default: $ALCEDO_RESULT_STORAGE_S3_REGION, else --s3-region).",
        valueName: "region"))
    var region: String?

    /// The result store's location (flag, else `ALCEDO_RESULT_STORAGE`), or `nil`.
    func resultLocation(_ env: ServeEnvironment) throws -> ObjectStoreLocation? {
        try env.pick("RESULT_STORAGE", flag: resultStorage, env.string("RESULT_STORAGE")).map { try ObjectStoreLocation(parsing: $0) }
    }

    /// The source store's location (flag, else `ALCEDO_SOURCE_STORAGE`), or `nil`.
    func sourceLocation(_ env: ServeEnvironment) throws -> ObjectStoreLocation? {
        try env.pick("SOURCE_STORAGE", flag: sourceStorage, env.string("SOURCE_STORAGE")).map { try ObjectStoreLocation(parsing: $0) }
    }

    /// The tier settings the options give.
    func tierConfig(_ env: ServeEnvironment) throws -> ObjectStoreTier.Config {
        var config = ObjectStoreTier.Config()
        if let seconds = try env.pick("RESULT_STORAGE_TTL", flag: ttl, env.int("RESULT_STORAGE_TTL")) {
            guard seconds > 0 else { throw ServerConfigurationError.invalidValue("--result-storage-ttl", message: "must be positive") }
            config.ttl = .seconds(seconds)
        }
        if let ms = try env.pick("RESULT_STORAGE_TIMEOUT", flag: timeout, env.int("RESULT_STORAGE_TIMEOUT")) {
            guard ms > 0 else { throw ServerConfigurationError.invalidValue("--result-storage-timeout", message: "must be positive") }
            config.readTimeout = .milliseconds(ms)
            config.writeTimeout = .milliseconds(10 * ms)
        }
        if let count = try env.pick("RESULT_STORAGE_QUEUE", flag: queue, env.int("RESULT_STORAGE_QUEUE")) {
            guard count >= 0 else { throw ServerConfigurationError.invalidValue("--result-storage-queue", message: "must not be negative") }
            config.queueCapacity = count
        }
        return config
    }

    /// The store at `location`: a folder, or a bucket reached with the S3 source's settings and
    /// credentials, the endpoint and region replaced by the stores' own when given.
    func store(at location: ObjectStoreLocation, s3: S3Options, env: ServeEnvironment) throws -> any ObjectStore {
        switch location {
        case .folder(let url):
            return FolderObjectStore(root: url)
        case .s3(let bucket, let prefix):
            var configuration = try s3.configuration(env)
            if let text = env.pick("RESULT_STORAGE_S3_ENDPOINT", flag: endpoint, env.string("RESULT_STORAGE_S3_ENDPOINT")) {
                guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                      let host = url.host, !host.isEmpty else { throw S3ConfigurationError.invalidEndpoint(text) }
                configuration.endpoint = url
            }
            if let region = env.pick("RESULT_STORAGE_S3_REGION", flag: region, env.string("RESULT_STORAGE_S3_REGION")) {
                configuration.region = region
            }
            var http = HTTPImageLoader.Configuration(connectTimeout: .seconds(2))
            http.maximumConnectionsPerHost = 32
            let client = S3ObjectClient(configuration: configuration, credentials: configuration.credentials, httpConfiguration: http)
            return S3ObjectStore(bucket: bucket, prefix: prefix, client: client)
        }
    }

    /// The result and source tiers the options name (each `nil` when not named).
    func tiers(s3: S3Options, env: ServeEnvironment) throws -> (results: ObjectStoreTier?, sources: ObjectStoreTier?) {
        let config = try tierConfig(env)
        let results = try resultLocation(env).map { ObjectStoreTier(store: try store(at: $0, s3: s3, env: env), kind: .results, config: config) }
        let sources = try sourceLocation(env).map { ObjectStoreTier(store: try store(at: $0, s3: s3, env: env), kind: .sources, config: config) }
        return (results, sources)
    }
}

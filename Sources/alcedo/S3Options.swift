import Alcedo
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The object-storage source's options, shared by `serve`, `fetch` and `info`: `--s3`,
/// `--s3-endpoint`, `--s3-region`, `--s3-path-style`, `--s3-allowed-bucket`,
/// `--s3-denied-bucket` and the credential flags; each also read from the environment with
/// imgproxy's names (`ALCEDO_USE_S3` or `IMGPROXY_USE_S3`, `…_S3_ENDPOINT`,
/// `…_S3_ENDPOINT_USE_PATH_STYLE`, `…_S3_REGION`, `…_S3_ALLOWED_BUCKETS`, `…_S3_DENIED_BUCKETS`).
/// Credentials: the flags, else `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`,
/// else the shared credentials file (`~/.aws/credentials`, profile `AWS_PROFILE`). They are
/// never printed.
struct S3Options: ParsableArguments {
    @Flag(name: .customLong("s3"), help: "Read s3://bucket/key sources (also $ALCEDO_USE_S3 or $IMGPROXY_USE_S3=true).")
    var enabled = false

    @Option(name: .customLong("s3-endpoint"), help: ArgumentHelp(
        "The S3-compatible store's URL, such as http://127.0.0.1:9000 for MinIO (default: AWS for the region).", valueName: "url"))
    var endpoint: String?

    @Option(name: .customLong("s3-region"), help: ArgumentHelp(
        "The region requests are signed for (default: $AWS_REGION, else us-east-1; R2 takes auto).", valueName: "region"))
    var region: String?

    @Option(name: .customLong("s3-path-style"), help: ArgumentHelp(
        "Address buckets as ENDPOINT/bucket/key (true) or bucket.ENDPOINT/key (false) (default: true with --s3-endpoint, false on AWS).",
        valueName: "bool"))
    var pathStyle: Bool?

    @Option(name: .customLong("s3-allowed-bucket"), help: ArgumentHelp(
        "Only read from this bucket (repeatable; default: any bucket not denied).", valueName: "bucket"))
    var allowedBuckets: [String] = []

    @Option(name: .customLong("s3-denied-bucket"), help: ArgumentHelp(
        "Never read from this bucket: 403 before any request (repeatable).", valueName: "bucket"))
    var deniedBuckets: [String] = []

    @Option(name: .customLong("s3-access-key-id"), help: ArgumentHelp(
        "The access key ID (default: $AWS_ACCESS_KEY_ID, else the shared credentials file).", valueName: "id"))
    var accessKeyID: String?

    @Option(name: .customLong("s3-secret-access-key"), help: ArgumentHelp(
        "The secret access key (prefer $AWS_SECRET_ACCESS_KEY: a flag shows in the process list).", valueName: "secret"))
    var secretAccessKey: String?

    @Option(name: .customLong("s3-session-token"), help: ArgumentHelp(
        "The session token of temporary credentials (default: $AWS_SESSION_TOKEN).", valueName: "token"))
    var sessionToken: String?

    /// Whether S3 is turned on by the flag or the environment.
    func isEnabled(_ env: ServeEnvironment) throws -> Bool {
        try enabled || (env.bool("USE_S3") ?? false)
    }

    /// The configuration the options and the environment give, credentials resolved.
    /// - Throws: ``S3ConfigurationError`` for an endpoint that is not an http(s) URL or a
    ///   credentials file without the profile asked for; a validation error for half a key.
    func configuration(_ env: ServeEnvironment, processEnvironment: [String: String] = ProcessInfo.processInfo.environment) throws -> S3Configuration {
        var c = S3Configuration()
        if let region = region ?? env.string("S3_REGION") ?? processEnvironment["AWS_REGION"].flatMap({ $0.isEmpty ? nil : $0 }) {
            c.region = region
        }
        if let text = endpoint ?? env.string("S3_ENDPOINT") {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                  let host = url.host, !host.isEmpty else {
                throw S3ConfigurationError.invalidEndpoint(text)
            }
            c.endpoint = url
        }
        c.usePathStyle = try pathStyle ?? env.bool("S3_ENDPOINT_USE_PATH_STYLE")
        c.allowedBuckets = Set(allowedBuckets.isEmpty ? env.list("S3_ALLOWED_BUCKETS") : allowedBuckets)
        c.deniedBuckets = Set(deniedBuckets.isEmpty ? env.list("S3_DENIED_BUCKETS") : deniedBuckets)
        if accessKeyID != nil || secretAccessKey != nil {
            guard let id = accessKeyID, let secret = secretAccessKey, !id.isEmpty, !secret.isEmpty else {
                throw ValidationError("--s3-access-key-id and --s3-secret-access-key go together")
            }
            c.credentials = S3Credentials(accessKeyID: id, secretAccessKey: secret,
                                          sessionToken: sessionToken ?? processEnvironment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
        } else {
            c.credentials = try S3Credentials.resolve(environment: processEnvironment)
            if let token = sessionToken, c.credentials != nil { c.credentials?.sessionToken = token }
        }
        return c
    }

    /// A loader for `fetch` and `info`: always made (an `s3://` argument is the user's choice).
    func loader(_ env: ServeEnvironment) throws -> S3ImageDataLoader {
        let configuration = try configuration(env)
        return S3ImageDataLoader(configuration: configuration, resolvedCredentials: configuration.credentials)
    }
}

import Alcedo
import AlcedoTestSupport
import Foundation
import Testing
@testable import AlcedoRedis

/// A throwaway certificate authority and a server certificate it signs (for 127.0.0.1 and
/// localhost), plus a second authority that signed nothing, made with the `openssl` command
/// (`scripts/install-deps.sh` installs it) in a temporary folder.
struct TestCertificates {
    let folder: TempFolder
    var caFile: String { folder.url.appendingPathComponent("ca.pem").path }
    var otherCAFile: String { folder.url.appendingPathComponent("other-ca.pem").path }
    var serverCertificate: String { folder.url.appendingPathComponent("server.pem").path }
    var serverKey: String { folder.url.appendingPathComponent("server.key").path }

    /// The `redis-server` options of a TLS-only server with this certificate.
    var redisArguments: [String] {
        ["--tls-cert-file", serverCertificate, "--tls-key-file", serverKey, "--tls-ca-cert-file", caFile,
         "--tls-auth-clients", "no"]
    }

    static var opensslPath: String? {
        ["/usr/bin/openssl", "/usr/local/bin/openssl"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    init() throws {
        folder = try TempFolder()
        try """
            [req]
            distinguished_name = dn
            prompt = no
            [dn]
            CN = unused
            [ca]
            basicConstraints = critical, CA:TRUE
            keyUsage = critical, keyCertSign, cRLSign
            subjectKeyIdentifier = hash
            [server]
            basicConstraints = CA:FALSE
            keyUsage = critical, digitalSignature, keyEncipherment
            extendedKeyUsage = serverAuth
            subjectAltName = IP:127.0.0.1, DNS:localhost
            authorityKeyIdentifier = keyid

            """.write(to: folder.url.appendingPathComponent("openssl.cnf"), atomically: true, encoding: .utf8)
        for name in ["ca", "other-ca", "server"] {
            try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "\(name).key"])
        }
        for (name, subject) in [("ca", "/CN=Alcedo test CA"), ("other-ca", "/CN=Another test CA")] {
            try openssl(["req", "-new", "-x509", "-key", "\(name).key", "-out", "\(name).pem", "-days", "2",
                         "-config", "openssl.cnf", "-extensions", "ca", "-subj", subject])
        }
        try openssl(["req", "-new", "-key", "server.key", "-out", "server.csr", "-config", "openssl.cnf", "-subj", "/CN=127.0.0.1"])
        try openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                     "-out", "server.pem", "-days", "2", "-extfile", "openssl.cnf", "-extensions", "server"])
    }

    private func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.opensslPath ?? "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = folder.url
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try ProcessLaunch.run(process)
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestFailure("openssl \(arguments.joined(separator: " ")): \(message)") }
    }
}

@Suite("Redis over TLS", .enabled(if: RedisTestServer.isAvailable && TestCertificates.opensslPath != nil,
                                  "redis-server or openssl is not installed"))
struct RedisTLSTests {
    /// Timeouts far above a TLS handshake on a loaded machine: a refused certificate fails at
    /// once, so only a slow machine ever waits for them.
    func storage(_ url: String, caFile: String?, logs: CapturedLog = CapturedLog()) throws -> RedisSharedStorage {
        var configuration = try RedisConfiguration(urls: [url])
        configuration.getTimeout = .seconds(15)
        configuration.writeTimeout = .seconds(15)
        configuration.connectTimeout = .seconds(15)
        configuration.caFile = caFile
        configuration.logger = logs.logger
        return try RedisSharedStorage(configuration: configuration)
    }

    @Test func storesAndReadsThroughTheTierOverTLSWithAPrivateCA() async throws {
        let certificates = try TestCertificates()
        let server = try await RedisTestServer.start(tls: certificates.redisArguments)
        let url = "rediss://127.0.0.1:\(server.port)"
        let storage = try storage(url, caFile: certificates.caFile)
        defer { storage.shutdown() }
        try await storage.start()

        let folder = try TempFolder()
        let a = ImageCache(name: "tls-a", cacheDirectoryURL: folder.url, sharedTier: SharedCacheTier(storage: storage))
        let b = ImageCache(name: "tls-b", cacheDirectoryURL: folder.url, sharedTier: SharedCacheTier(storage: storage))
        let (image, png) = try testPNG(width: 40, height: 30, seed: 3)
        try await a.store(image, original: png, forKey: "https://origin/tls.png")
        let found = try await b.retrieveImage(forKey: "https://origin/tls.png")
        #expect(found.cacheType == .disk)
        #expect(found.image?.pixels == image.pixels)
        #expect(b.sharedTier?.statistics.hits == 1, "read from Redis, over its only (TLS) port")
        #expect(storage.nodeStatistics[0].failures == 0)
    }

    @Test func aServerCertificateFromAnotherCAIsATypedTLSErrorAndAClearLogLine() async throws {
        let certificates = try TestCertificates()
        let server = try await RedisTestServer.start(tls: certificates.redisArguments)
        let url = "rediss://127.0.0.1:\(server.port)"
        let logs = CapturedLog()
        let wrong = try storage(url, caFile: certificates.otherCAFile, logs: logs)
        defer { wrong.shutdown() }
        await #expect {
            try await wrong.start()
        } throws: { error in
            guard case .cacheError(.cannotLoadDataFromDisk(_, .sharedStorageError(.tlsFailed(let node, let description)))) = error as? AlcedoError else {
                return false
            }
            return node == url && description.contains("CERTIFICATE_VERIFY_FAILED")
        }
        #expect(logs.all.contains { $0.hasPrefix("error:") && $0.contains("TLS handshake failed") && $0.contains("--redis-ca-file") },
                "\(logs.all)")
        // As a tier it is a miss, never an error for the caller.
        #expect(await SharedCacheTier(storage: wrong, config: .init(coalescesWork: false, logger: logs.logger)).entry(forKey: "k") == nil)

        // The system's trust roots do not know the private CA either.
        let system = try storage(url, caFile: nil)
        defer { system.shutdown() }
        await #expect {
            try await system.start()
        } throws: { error in
            if case .cacheError(.cannotLoadDataFromDisk(_, .sharedStorageError(.tlsFailed))) = error as? AlcedoError { return true }
            return false
        }

        // A CA file that cannot be read is refused when the storage is made.
        #expect {
            try storage(url, caFile: certificates.folder.url.appendingPathComponent("missing.pem").path)
        } throws: { error in
            guard case .cacheError(.cannotLoadDataFromDisk(_, .sharedStorageError(.invalidConfiguration(let message)))) = error as? AlcedoError else { return false }
            return message.contains("CA file") && message.contains("missing.pem")
        }
    }

    @Test func theCommandLineTrustsTheCAFileFromTheFlagOrTheEnvironment() async throws {
        let certificates = try TestCertificates()
        let server = try await RedisTestServer.start(tls: certificates.redisArguments)
        let url = "rediss://127.0.0.1:\(server.port)"
        let storage = try storage(url, caFile: certificates.caFile)
        defer { storage.shutdown() }
        #expect(try await storage.store(entry("one"), forKey: "one"))
        let folder = try TempFolder()

        let flag = try AlcedoExecutable.run(["cache", "stats", "--cache-dir", folder.url.path, "--redis", url,
                                             "--redis-ca-file", certificates.caFile])
        #expect(flag.status == 0, "\(flag.stderr)")
        #expect(flag.stdout.contains("redis:       \(url): 1 keys"), "\(flag.stdout)")

        let environment = try AlcedoExecutable.run(["cache", "stats", "--cache-dir", folder.url.path, "--redis", url],
                                                   environment: ["ALCEDO_REDIS_CA_FILE": certificates.caFile])
        #expect(environment.stdout.contains("redis:       \(url): 1 keys"), "\(environment.stdout)")

        let other = try AlcedoExecutable.run(["cache", "stats", "--cache-dir", folder.url.path, "--redis", url,
                                              "--redis-ca-file", certificates.otherCAFile])
        #expect(other.stdout.contains("TLS handshake with \(url) failed"), "\(other.stdout) \(other.stderr)")
    }
}

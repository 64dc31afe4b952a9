import Alcedo
import AlcedoTestSupport
@testable import AlcedoServer
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `s3://` and `local://` sources through `alcedo serve`'s routes: moto's S3 server on
/// loopback with authentication on, and a rooted folder with escape attempts.
@Suite("Serving S3 and local sources")
struct SourcesServingTests {
    static func png(_ width: Int, _ height: Int) -> Data {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for index in stride(from: 0, to: pixels.count, by: 4) { pixels[index] = UInt8(index / 4 % 241) }
        return try! ImageCodecRegistry.shared.encode(AlcedoImage(width: width, height: height, pixels: pixels), as: .png)
    }

    static let objects: [MotoS3Server.Object] = [
        .init(bucket: "photos", key: "cat.png", data: png(40, 30), contentType: "image/png"),
        .init(bucket: "photos", key: "dir/a b é.png", data: png(12, 10), contentType: "image/png"),
        .init(bucket: "photos", key: "dir/c+d (1).png", data: png(12, 10), contentType: "image/png"),
        .init(bucket: "photos", key: "fresh.png", data: png(64, 48), contentType: "image/png"),
        .init(bucket: "private", key: "cat.png", data: png(40, 30), contentType: "image/png"),
    ]

    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    @Test func s3SourcesPlainAndBase64WithErrors304AndCoalescing() async throws {
        let moto = try await MotoS3Server.start(buckets: ["photos", "private"], objects: Self.objects)
        defer { moto.stop() }
        let log = CapturedLog()
        let harness = try await ServerHarness.start { c in
            // The address check stays on: it must not apply to the configured S3 endpoint.
            c.allowPrivateNetworks = false
            c.s3 = S3Configuration(endpoint: moto.endpoint, deniedBuckets: ["private"],
                                   credentials: S3Credentials(accessKeyID: moto.accessKeyID, secretAccessKey: moto.secretAccessKey))
            c.logger = log.logger
        }
        do {
            let plain = try await harness.request("/insecure/rs:fit:20:20/plain/s3://photos/cat.png@png")
            #expect(plain.status == 200, "\(plain.text)")
            #expect(try plain.image().width == 20)
            let etag = try #require(plain.header("ETag"))
            let again = try await harness.request("/insecure/rs:fit:20:20/plain/s3://photos/cat.png@png", headers: [("If-None-Match", etag)])
            #expect(again.status == 304)

            // A key with a space and a non-ASCII letter: percent-encoded in the source URL,
            // which base64 carries as it is (a plain path encodes it once more).
            let base64 = try await harness.request("/insecure/rs:fit:6:6/" + Self.base64URL("s3://photos/dir/a%20b%20%C3%A9.png") + ".png")
            #expect(base64.status == 200, "\(base64.text)")
            let plainSpaced = try await harness.request("/insecure/rs:fit:6:6/plain/s3://photos/dir/a%2520b%2520%25C3%25A9.png@png")
            #expect(plainSpaced.status == 200, "\(plainSpaced.text)")
            // As imgproxy reads a plain source: decoded once, then the key as it stands (a
            // space, a non-ASCII letter, `+` and parentheses).
            let plainOnce = try await harness.request("/insecure/rs:fit:6:6/plain/s3://photos/dir/a%20b%20%C3%A9.png@png")
            #expect(plainOnce.status == 200, "\(plainOnce.text)")
            let plus = try await harness.request("/insecure/rs:fit:6:6/plain/s3://photos/dir/c+d%20(1).png@png")
            #expect(plus.status == 200, "\(plus.text)")

            let missing = try await harness.request("/insecure/plain/s3://photos/missing.png@png")
            #expect(missing.status == 404)
            let denied = try await harness.request("/insecure/plain/s3://private/cat.png@png")
            #expect(denied.status == 403)
            #expect(moto.count("GET", "/private/cat.png") == 0)
            // Everything else still passes the address check.
            let loopback = try await harness.request("/insecure/plain/" + moto.endpoint.absoluteString + "/photos/cat.png@png")
            #expect(loopback.status == 403)

            let info = try await harness.request("/info/insecure/plain/s3://photos/cat.png")
            #expect(info.status == 200, "\(info.text)")
            let object = try #require(try JSONSerialization.jsonObject(with: info.body) as? [String: Any])
            #expect(object["width"] as? Int == 40)

            // 50 requests for one new variant: one GET reaches the store.
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<50 {
                    group.addTask { try await harness.request("/insecure/rs:fill:16:16/plain/s3://photos/fresh.png@webp").status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 50))
            #expect(moto.count("GET", "/photos/fresh.png") == 1)
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()

        // A wrong secret: the client sees 403 only; the log names the cause.
        let wrongLog = CapturedLog()
        let wrong = try await ServerHarness.start { c in
            c.s3 = S3Configuration(endpoint: moto.endpoint,
                                   credentials: S3Credentials(accessKeyID: moto.accessKeyID, secretAccessKey: "not-the-secret"))
            c.logger = wrongLog.logger
        }
        let refused = try await wrong.request("/insecure/plain/s3://photos/cat.png@png")
        await wrong.stop()
        #expect(refused.status == 403)
        #expect(!refused.text.contains("SignatureDoesNotMatch"))
        #expect(!(refused.header("X-Alcedo-Error") ?? "").contains("SignatureDoesNotMatch"))
        #expect(wrongLog.messages.contains { $0.contains("SignatureDoesNotMatch") && $0.contains("s3://photos/cat.png") })
        #expect(!wrongLog.messages.contains { $0.contains("not-the-secret") })
        _ = log
    }

    @Test func localSourcesInsideTheRootOnly() async throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-serve-local-\(UUID().uuidString)")
        let root = base.appendingPathComponent("root")
        defer { try? FileManager.default.removeItem(at: base) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("dir"), withIntermediateDirectories: true)
        try Self.png(30, 20).write(to: root.appendingPathComponent("a.png"))
        try Self.png(30, 20).write(to: base.appendingPathComponent("secret.png"))
        #expect(mkfifo(root.appendingPathComponent("pipe.png").path, 0o644) == 0)
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("out.png").path, withDestinationPath: "../secret.png")
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("zero.png").path, withDestinationPath: "/dev/zero")

        let harness = try await ServerHarness.start { $0.localRoot = root }
        do {
            let ok = try await harness.request("/insecure/rs:fit:10:10/plain/local:///a.png@png")
            #expect(ok.status == 200, "\(ok.text)")
            let etag = try #require(ok.header("ETag"))
            #expect(try await harness.request("/insecure/rs:fit:10:10/plain/local:///a.png@png", headers: [("If-None-Match", etag)]).status == 304)
            let viaBase64 = try await harness.request("/insecure/" + Self.base64URL("local:///dir/../a.png") + ".png")
            #expect(viaBase64.status == 403)
            for (path, expected) in [("local:///../secret.png", 403), ("local:///%252e%252e/secret.png", 403),
                                     ("local:///dir%252F..%252F..%252Fsecret.png", 403), ("local:///out.png", 403),
                                     ("local:///zero.png", 403), ("local:///pipe.png", 404), ("local:///dir", 404),
                                     ("local:///missing.png", 404), ("local:///" + base.path + "/secret.png", 404)] {
                let reply = try await harness.request("/insecure/plain/" + path + "@png")
                #expect(reply.status == expected, "\(path): \(reply.status) \(reply.text)")
            }
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()

        // Without a root, local: is refused.
        let rootless = try await ServerHarness.start()
        let refused = try await rootless.request("/insecure/plain/local:///a.png@png")
        await rootless.stop()
        #expect(refused.status == 403)
    }

    /// `alcedo serve --s3 …` with the credentials in the environment (imgproxy's variable names
    /// for the switches), and `alcedo fetch s3://…` and `alcedo info s3://…` with the same settings.
    @Test func commandLineReadsS3() async throws {
        let moto = try await MotoS3Server.start(buckets: ["photos"], objects: Self.objects.filter { $0.bucket == "photos" })
        defer { moto.stop() }
        let environment = ["AWS_ACCESS_KEY_ID": moto.accessKeyID, "AWS_SECRET_ACCESS_KEY": moto.secretAccessKey,
                           "ALCEDO_USE_S3": "true", "ALCEDO_S3_ENDPOINT": moto.endpoint.absoluteString]
        let server = try await ServeProcess.start(["--s3-denied-bucket", "private"], environment: environment)
        defer { server.stop() }
        let harness = try await ServerHarness.start()
        let served = try await harness.request(server.baseURL + "/insecure/rs:fit:8:8/plain/s3://photos/cat.png@png")
        let denied = try await harness.request(server.baseURL + "/insecure/plain/s3://private/cat.png@png")
        await harness.stop()
        #expect(served.status == 200)
        #expect(denied.status == 403)

        let out = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-fetch-s3-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let fetch = try Self.run(["fetch", "s3://photos/dir/a%20b%20%C3%A9.png", "--out", out.path, "--memory-only", "--json",
                                  "--s3-endpoint", moto.endpoint.absoluteString], environment: environment)
        #expect(fetch.status == 0, "\(fetch.stderr)")
        #expect(fetch.stdout.contains("\"width\":12"), "\(fetch.stdout)")
        let info = try Self.run(["info", "--json", "s3://photos/cat.png", "--s3-endpoint", moto.endpoint.absoluteString],
                                environment: ["AWS_ACCESS_KEY_ID": moto.accessKeyID, "AWS_SECRET_ACCESS_KEY": moto.secretAccessKey])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("\"width\":40"), "\(info.stdout)")
        let wrong = try Self.run(["info", "s3://photos/cat.png", "--s3-endpoint", moto.endpoint.absoluteString],
                                 environment: ["AWS_ACCESS_KEY_ID": moto.accessKeyID, "AWS_SECRET_ACCESS_KEY": "wrong"])
        #expect(wrong.status != 0)
        #expect(wrong.stderr.contains("SignatureDoesNotMatch"), "\(wrong.stderr)")
        #expect(!wrong.stderr.contains(moto.secretAccessKey))
    }

    static func run(_ arguments: [String], environment: [String: String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = ServeCommandTests.executable
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"] { merged[name] = nil }
        merged["HOME"] = FileManager.default.temporaryDirectory.path
        process.environment = merged.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try ProcessLaunch.run(process)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }
}

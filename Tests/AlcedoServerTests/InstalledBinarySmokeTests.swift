import AlcedoTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The binary as users install it: copied alone into an empty folder, linked as `make install`
/// links it, and driven through every command, every source kind and every output format. A
/// crash that only the shipped linkage shows (code that needs ICU or full Foundation) fails here.
@Suite("the installed alcedo, from an empty folder")
struct InstalledBinarySmokeTests {
    @Test("the binary under test is linked as make install links it (no shared Swift runtime, no ICU, no CoreFoundation)")
    func linkedAsShipped() throws {
        let problem = try AlcedoBinary.linkageProblem()
        #expect(problem == nil, """
            \(AlcedoBinary.url.path) \(problem ?? ""): the process-level tests must run the binary users install. \
            `make test` names the release build in \(AlcedoBinary.environmentVariable); with `swift test` alone, \
            set \(AlcedoBinary.environmentVariable) to a release `alcedo` (`make release`).
            """)
    }

    @Test("--version, demo, info, convert, then serve: every source kind and output format, /health, /metrics, SIGTERM exits 0")
    func everyCommandAndSource() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-installed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let bin = root.appendingPathComponent("bin")
        let work = root.appendingPathComponent("work")
        let images = root.appendingPathComponent("images")
        for folder in [bin, work, images] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        let alcedo = bin.appendingPathComponent("alcedo")
        try FileManager.default.copyItem(at: AlcedoBinary.url, to: alcedo)

        let version = try await Self.run(alcedo, ["--version"], in: work)
        #expect(version.status == 0 && version.stdout.hasPrefix("alcedo "), "\(version)")
        let demo = try await Self.run(alcedo, ["demo", "--out", work.appendingPathComponent("demo").path], in: work)
        #expect(demo.status == 0, "\(demo.stderr)")

        let jpeg = TestImages.jpeg(width: 64, height: 48)
        let input = images.appendingPathComponent("a.jpg")
        try jpeg.write(to: input)
        let info = try await Self.run(alcedo, ["info", "--json", input.path], in: work)
        #expect(info.status == 0 && info.stdout.contains("\"width\":64"), "\(info)")
        for ext in ["png", "webp", "gif", "avif", "tiff", "bmp", "jxl", "heic"] {
            let out = work.appendingPathComponent("out.\(ext)")
            let convert = try await Self.run(alcedo, ["convert", input.path, out.path, "--downsample", "32x24"], in: work)
            #expect(convert.status == 0, "convert to \(ext): \(convert.stderr)")
            #expect(((try? Data(contentsOf: out))?.count ?? 0) > 0, "convert to \(ext) wrote nothing")
        }

        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
        origin.route("/mark.png", .ok(TestImages.png(width: 8, height: 8), contentType: "image/png"))
        origin.route("/fallback.png", .ok(TestImages.png(width: 4, height: 4), contentType: "image/png"))
        let moto = try await MotoS3Server.start(buckets: ["photos"], objects: [
            .init(bucket: "photos", key: "a.jpg", data: jpeg, contentType: "image/jpeg"),
        ])
        defer { moto.stop() }
        let server = try await ServeProcess.start(
            ["--local-root", images.path, "--watermark-url", origin.url("/mark.png").absoluteString,
             "--fallback-image-url", origin.url("/fallback.png").absoluteString, "--fallback-image-http-code", "0"],
            environment: ["AWS_ACCESS_KEY_ID": moto.accessKeyID, "AWS_SECRET_ACCESS_KEY": moto.secretAccessKey,
                          "IMGPROXY_USE_S3": "true", "IMGPROXY_S3_ENDPOINT": moto.endpoint.absoluteString],
            executable: alcedo)
        defer { server.stop() }
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }

        let http = origin.url("/a.jpg").absoluteString
        for source in [http, "s3://photos/a.jpg", "local:///a.jpg"] {
            let reply = try await harness.request(server.baseURL + "/insecure/rs:fit:32:32/plain/\(source)@png")
            #expect(reply.status == 200 && reply.header("Content-Type") == "image/png", "\(source): \(reply.status) \(reply.text)")
        }
        for format in ["jpg", "png", "webp", "gif", "avif", "heic", "jxl", "tiff", "bmp", "ico"] {
            let reply = try await harness.request(server.baseURL + "/insecure/rs:fit:32:32/wm:0.5/plain/\(http)@\(format)")
            #expect(reply.status == 200, "@\(format): \(reply.status) \(reply.text)")
        }
        let fallback = try await harness.request(server.baseURL + "/insecure/plain/" + origin.url("/missing.jpg").absoluteString)
        // The fallback image, with the error's status (--fallback-image-http-code 0).
        #expect(fallback.status == 404 && fallback.header("Content-Type") == "image/png", "fallback: \(fallback.status)")
        let badPort = try await harness.request(server.baseURL + "/insecure/rs:fit:300:200/plain/http://8.8.8.8:99999/a.jpg")
        #expect((400..<500).contains(badPort.status), "port 99999: \(badPort.status)")
        let health = try await harness.request(server.baseURL + "/health")
        #expect(health.status == 200)
        let metrics = try await harness.request(server.baseURL + "/metrics")
        #expect(metrics.status == 200 && metrics.text.contains("# TYPE"), "\(metrics.text.prefix(200))")

        #expect(server.process.isRunning, "the server died")
        kill(server.process.processIdentifier, SIGTERM)
        server.process.waitUntilExit()
        #expect(server.process.terminationReason == .exit && server.process.terminationStatus == 0,
                "SIGTERM: \(server.process.terminationReason) \(server.process.terminationStatus)")
    }

    /// Runs `executable arguments…` in `folder` to its end.
    static func run(_ executable: URL, _ arguments: [String], in folder: URL) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await AlcedoBinary.runDetached(arguments, executable: executable, in: folder)
    }
}

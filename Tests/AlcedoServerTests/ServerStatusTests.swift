import Alcedo
@testable import AlcedoServer
import Foundation
import Testing

/// The error → status table, case by case, with the reason in `X-Alcedo-Error`.
@Suite("Server: statuses")
struct ServerStatusTests {
    @Test func badOptionsAre400WithTheOptionNamed() async throws {
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        let unknown = try await harness.request("/insecure/zoomz:3/plain/http://127.0.0.1:9/x.jpg")
        #expect(unknown.status == 400)
        #expect(unknown.text.contains("\"zoomz\""))
        #expect(unknown.header("X-Alcedo-Error")?.contains("zoomz") == true)
        let bad = try await harness.request("/insecure/rs:fit:abc/plain/http://127.0.0.1:9/x.jpg")
        #expect(bad.status == 400 && bad.text.contains("\"rs\""))
        #expect(bad.text.split(separator: "\n").count == 1)
        let format = try await harness.request("/insecure/plain/http://127.0.0.1:9/x.jpg@psd")
        #expect(format.status == 400)
    }

    @Test func signaturesAre403() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/s.jpg", .ok(TestImages.jpeg(width: 64, height: 64), contentType: "image/jpeg"))
        let old = try SigningKey(hexKey: "0011", hexSalt: "2233")
        let current = try SigningKey(hexKey: "736563726574", hexSalt: "68656C6C6F")
        let harness = try await ServerHarness.start { $0.keys = [current, old] }
        defer { Task { await harness.stop() } }
        var options = ProcessingOptions()
        options.width = 32
        let source = origin.url("/s.jpg").absoluteString

        let signed = ImgproxyURLBuilder(baseURL: harness.baseURL, key: current).url(for: source, options: options)
        #expect(try await harness.request(signed).status == 200)
        let rotated = ImgproxyURLBuilder(baseURL: harness.baseURL, key: old).url(for: source, options: options)
        #expect(try await harness.request(rotated).status == 200, "every configured key is accepted")
        let wrong = ImgproxyURLBuilder(baseURL: harness.baseURL, key: try SigningKey(hexKey: "ff", hexSalt: "ee")).url(for: source, options: options)
        let refused = try await harness.request(wrong)
        #expect(refused.status == 403 && refused.header("X-Alcedo-Error") == "invalid signature")
        #expect(try await harness.request(harness.path(origin.url("/s.jpg"), "w:32")).status == 403, "insecure with a key")
        #expect(try await harness.request("/_/w:32/plain/" + source).status == 403)
        #expect(try await harness.request("/AAAA/w:32/plain/" + source).status == 403)

        // Without keys any signature segment is accepted, as imgproxy does (its tests use
        // /unsafe/); one holding a ":" is an option, not a signature: 403.
        let open = try await ServerHarness.start()
        defer { Task { await open.stop() } }
        #expect(try await open.request("/insecure/w:32/plain/" + source).status == 200)
        #expect(try await open.request("/_/w:32/plain/" + source).status == 200)
        #expect(try await open.request(signed.replacingOccurrences(of: harness.baseURL, with: open.baseURL)).status == 200)
        #expect(try await open.request("/unsafe/w:32/plain/" + source).status == 200)
        #expect(try await open.request("/w:32/plain/" + source).status == 403)
    }

    @Test func sourceFailuresMapToTheirStatuses() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/text", .ok(Data("hello, not an image".utf8), contentType: "image/jpeg"))
        origin.route("/broken.jpg", .ok(Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 0x4A, 0x46, 0x49, 0x46, 0, 1]), contentType: "image/jpeg"))
        let huge = TestImages.png(width: 1200, height: 1000)
        let byteLimit = huge.count + 1000
        origin.route("/huge.png", .ok(huge, contentType: "image/png"))
        origin.route("/big-body.jpg", .ok(Data(repeating: 0xFF, count: byteLimit + 1000), contentType: "image/jpeg"))
        origin.route("/fail", .status(500))
        let harness = try await ServerHarness.start {
            $0.maxSourceResolution = 1          // 1 MP
            $0.maxSourceBytes = byteLimit
        }
        defer { Task { await harness.stop() } }
        func status(_ path: String) async throws -> ServerHarness.Reply {
            try await harness.request(harness.path(origin.url(path), "w:10"))
        }
        #expect(try await status("/missing").status == 404)
        let notImage = try await status("/text")
        #expect(notImage.status == 422)
        #expect(notImage.header("X-Alcedo-Error")?.contains("not an image") == true)
        #expect(try await status("/broken.jpg").status == 422)
        let tooManyPixels = try await status("/huge.png")
        #expect(tooManyPixels.status == 422)
        #expect(tooManyPixels.text.contains("1000000"), "the pixel limit is named: \(tooManyPixels.text)")
        let tooBig = try await status("/big-body.jpg")
        #expect(tooBig.status == 422 && tooBig.text.contains(String(byteLimit)))
        #expect(try await status("/fail").status == 502)
        // Connection refused: port 9 (discard) is closed on loopback.
        #expect(try await harness.request("/insecure/w:10/plain/http://127.0.0.1:9/x.jpg").status == 502)
        // A result over the side limit (a thin source: the enlarged result fits the memory budget).
        origin.route("/ok.jpg", .ok(TestImages.jpeg(width: 100, height: 10), contentType: "image/jpeg"))
        let large = try await harness.request(harness.path(origin.url("/ok.jpg"), "rs:fit:9000:9000:1"))
        #expect(large.status == 422 && large.text.contains("8192"))
        // Still serving.
        #expect(try await harness.request("/health").status == 200)
    }

    @Test func aSourceTimeoutIs504() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/stalled.jpg", .ok(TestImages.jpeg(width: 10, height: 10), contentType: "image/jpeg"))
        origin.hold("/stalled.jpg")
        defer { origin.release("/stalled.jpg") }
        let harness = try await ServerHarness.start { $0.downloadTimeout = .seconds(1) }
        defer { Task { await harness.stop() } }
        let reply = try await harness.request(harness.path(origin.url("/stalled.jpg"), "w:5"))
        #expect(reply.status == 504)
        #expect(reply.header("X-Alcedo-Error")?.contains("within 1 s") == true)
    }

    @Test func theResolutionLimitCountsEveryFrame() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        // Two frames of 0.3 MP: each under a 0.5 MP limit, together over it.
        origin.route("/two.gif", .ok(TestImages.animatedGIF(width: 600, height: 500), contentType: "image/gif"))
        origin.route("/one.jpg", .ok(TestImages.jpeg(width: 600, height: 500), contentType: "image/jpeg"))
        let harness = try await ServerHarness.start { $0.maxSourceResolution = 0.5 }
        defer { Task { await harness.stop() } }
        let animated = try await harness.request(harness.path(origin.url("/two.gif"), "w:60"))
        #expect(animated.status == 422)
        #expect(animated.text.contains("source limit: 0.5 MP summed over all frames"), "the limit is named: \(animated.text)")
        #expect(try await harness.request(harness.path(origin.url("/one.jpg"), "w:60")).status == 200)
    }

    @Test func aFullQueueIs429WithRetryAfter() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        for name in ["a", "b", "c"] {
            origin.route("/\(name).jpg", .ok(TestImages.jpeg(width: 32, height: 32), contentType: "image/jpeg"))
        }
        origin.hold("/a.jpg")
        origin.hold("/b.jpg")
        let harness = try await ServerHarness.start {
            $0.concurrency = 1
            $0.queueLength = 1
        }
        defer { Task { await harness.stop() } }
        // A request loading its source holds no processing slot, but counts against the slots
        // and the queue together: two loading fill one slot and a queue of one.
        async let first = harness.request(harness.path(origin.url("/a.jpg"), "w:8"))
        try await eventually { origin.requestCount("/a.jpg") == 1 }
        async let second = harness.request(harness.path(origin.url("/b.jpg"), "w:8"))
        try await eventually { origin.requestCount("/b.jpg") == 1 }
        let third = try await harness.request(harness.path(origin.url("/c.jpg"), "w:8"))
        #expect(third.status == 429)
        #expect(third.header("Retry-After") == "1")
        origin.release("/a.jpg")
        origin.release("/b.jpg")
        #expect(try await first.status == 200)
        #expect(try await second.status == 200)
        #expect(try await harness.request(harness.path(origin.url("/c.jpg"), "w:8")).status == 200)
    }
}

/// Waits until `condition` holds, checking every 10 ms, failing after 300 s (a bound for a
/// busy machine running every suite at once, not a timing claim).
func eventually(_ condition: @Sendable () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(300)
    // Checked once more after the deadline (a stalled machine must not fail a condition met meanwhile).
    while true {
        if try await condition() { return }
        if ContinuousClock.now >= deadline { break }
        try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("condition not met within 300 s")
}

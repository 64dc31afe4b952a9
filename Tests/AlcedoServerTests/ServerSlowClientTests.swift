import Alcedo
import AsyncHTTPClient
import Foundation
import Testing

/// Clients that read a large response a byte a second, against `alcedo serve` run as a
/// process (its `/metrics` then shows the server's own resident size).
@Suite("Server: slow readers and the write timeout")
struct ServerSlowClientTests {
    /// The value of the metric line `name` (without labels) in a `/metrics` text.
    static func metric(_ name: String, in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1))
        }
        return nil
    }

    @Test func slowReadersAreCutByTheWriteTimeoutHoldingNoSlotWithinTheBudget() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        // Random pixels do not compress: a PNG result of about 5.8 MB.
        origin.route("/noise.png", .ok(TestImages.noisePNG(width: 1200, height: 1200), contentType: "image/png"))
        origin.route("/fast.jpg", .ok(TestImages.jpeg(width: 64, height: 48), contentType: "image/jpeg"))
        let server = try await ServeProcess.start(["--max-memory", "192", "--write-response-timeout", "2", "--concurrency", "1"])
        defer { server.stop() }
        let client = OneShotClient()
        let bigPath = "/insecure/plain/" + origin.url("/noise.png").absoluteString + "@png"
        // The result is made and kept in memory (HEAD: no body to read, so a busy test machine
        // cannot make this client itself a slow reader).
        var head = HTTPClientRequest(url: server.baseURL + bigPath)
        head.method = .HEAD
        let made = try await ServerHarness.sharedClient.execute(head, timeout: .seconds(300))
        #expect(made.status.code == 200)
        #expect((made.headers.first(name: "content-length").flatMap { Int($0) } ?? 0) > 4 << 20)
        let port = try #require(server.baseURL.split(separator: ":").last.flatMap { Int($0) })

        let readers = 3
        let stop = Locked(false)
        let progress = Locked(0)
        let outcomes = Task {
            await withTaskGroup(of: SlowReader.Outcome.self) { group in
                for _ in 0..<readers {
                    group.addTask { await SlowReader.read(port: port, path: bigPath, stop: stop, progress: progress) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        defer { stop.withLock { $0 = true } }
        // Every reader has its answer started…
        try await eventually { progress.value >= readers }
        // …and holds no processing slot: with one slot, another request is served meanwhile.
        #expect(try await client.get(server.baseURL + "/insecure/w:20/plain/" + origin.url("/fast.jpg").absoluteString).status == 200)
        let during = String(decoding: try await client.get(server.baseURL + "/metrics").body, as: UTF8.self)
        #expect(Self.metric("alcedo_requests_in_flight", in: during) == 0, "\(during)")
        #expect(Self.metric("alcedo_memory_budget_reserved_bytes", in: during) == 0)
        let rss = try #require(Self.metric("alcedo_memory_resident_bytes", in: during))
        #expect(rss <= Double(192 << 20), "resident \(rss) bytes, over the 192 MiB budget")

        // The write timeout (2 s) closes the slow connections.
        let metricsURL = server.baseURL + "/metrics"
        try await eventually {
            let text = String(decoding: try await client.get(metricsURL).body, as: UTF8.self)
            return (Self.metric("alcedo_write_timeouts_total", in: text) ?? 0) >= Double(readers)
        }
        stop.withLock { $0 = true }
        for outcome in await outcomes.value {
            #expect(outcome.closed, "the server ended the connection")
            #expect(!outcome.complete, "the response was cut short: \(outcome.received) of \(outcome.announced ?? -1) bytes")
        }
        // The server goes on serving.
        #expect(try await client.get(server.baseURL + "/insecure/w:24/plain/" + origin.url("/fast.jpg").absoluteString).status == 200)
    }

    @Test func theWriteTimeoutIsAFlagAndImgproxysVariable() async throws {
        func row(_ out: String) -> [Substring] {
            let line = out.split(separator: "\n").first { $0.split(separator: " ").first == "WRITE_RESPONSE_TIMEOUT" }
            return line?.split(separator: " ", omittingEmptySubsequences: true) ?? []
        }
        let defaults = try await offPool { try ChildServe.runToEnd(["serve", "--print-config"], environment: [:]) }
        #expect(row(defaults.stdout) == ["WRITE_RESPONSE_TIMEOUT", "10", "s", "default"], "\(defaults.stdout)")
        let imgproxy = try await offPool {
            try ChildServe.runToEnd(["serve", "--print-config"], environment: ["IMGPROXY_WRITE_RESPONSE_TIMEOUT": "3"])
        }
        #expect(row(imgproxy.stdout) == ["WRITE_RESPONSE_TIMEOUT", "3", "s", "IMGPROXY_WRITE_RESPONSE_TIMEOUT"])
        #expect(!imgproxy.stdout.contains("not supported"))
        let flag = try await offPool {
            try ChildServe.runToEnd(["serve", "--print-config", "--write-response-timeout", "0"],
                                    environment: ["IMGPROXY_WRITE_RESPONSE_TIMEOUT": "3"])
        }
        #expect(row(flag.stdout) == ["WRITE_RESPONSE_TIMEOUT", "0", "(no", "limit)", "--write-response-timeout"])
        let negative = try await offPool {
            try ChildServe.runToEnd(["serve", "--print-config", "--write-response-timeout", "-1"], environment: [:])
        }
        #expect(negative.status != 0 && negative.stderr.contains("--write-response-timeout"))
    }
}

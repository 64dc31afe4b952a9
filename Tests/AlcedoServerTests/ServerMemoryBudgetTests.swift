import Alcedo
@testable import AlcedoServer
import AlcedoTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

@Suite("Server: the memory budget")
struct ServerMemoryBudgetTests {
    @Test func aRequestThatCouldNeverFitIs422NamingTheLimit() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/big.jpg", .ok(TestImages.jpeg(width: 3000, height: 2000), contentType: "image/jpeg"))
        let harness = try await ServerHarness.start {
            $0.maxMemory = 96 << 20
            $0.resultCacheBytes = 0
        }
        defer { Task { await harness.stop() } }
        // At full size (no resize) the 6 MP decode, its copy and its encoding cannot fit 48 MiB.
        let full = try await harness.request(harness.path(origin.url("/big.jpg"), "q:80"))
        #expect(full.status == 422)
        #expect(full.text.contains("--max-memory 96 MiB"), "\(full.text)")
        #expect(full.text.contains("memory budget"), "\(full.text)")
        // A thumbnail of the same source fits (DCT scaling): the process keeps serving.
        #expect(try await harness.request(harness.path(origin.url("/big.jpg"), "w:300")).status == 200)
        let metrics = harness.service.metrics.text()
        #expect(metrics.contains("alcedo_memory_budget_refused_total 1"), "\(metrics)")
    }

    /// A fit asked larger than its source does not enlarge it (imgproxy's `rs:fit` without
    /// `enlarge`), and the budget reserves for what is really made: twelve 480x360 frames asked
    /// at 1300 px as WebP (about 30 MB) are served within a budget that refuses the same request
    /// with `enlarge:1` (twelve 1300x975 frames, about 150 MB).
    /// A fill with enlargement scales a 20000 x 1 source to 2,000,000 x 100 (800 MB) for a
    /// 100 x 100 crop. Only the crop is made (a fuzzed GIF whose screen said 50000 x 1 once took
    /// 2.2 GB past a 256 MiB budget this way), so it is served within the budget.
    @Test func aFillWhoseScaledImageCouldNeverFitMakesOnlyItsCrop() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/line.png", .ok(try ImageCodecRegistry.shared.encode(TestImages.halves(width: 20_000, height: 1), as: .png),
                                      contentType: "image/png"))
        let harness = try await ServerHarness.start {
            $0.maxMemory = 128 << 20
            $0.resultCacheBytes = 0
        }
        defer { Task { await harness.stop() } }
        let filled = try await harness.request(harness.path(origin.url("/line.png"), "rs:fill:100:100:1:1"))
        #expect(filled.status == 200, "\(filled.text)")
        #expect(try filled.image().pixelSize == PixelSize(width: 100, height: 100))
        let fitted = try await harness.request(harness.path(origin.url("/line.png"), "rs:fit:100:100"))
        #expect(fitted.status == 200)
        #expect(try fitted.image().pixelSize == PixelSize(width: 100, height: 1))
    }

    @Test func aFitThatDoesNotEnlargeIsReservedAtTheSizeItMakes() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        // Frames that differ (the WebP encoder merges equal ones): the top rows' green changes.
        let frames = (0..<12).map { index -> AlcedoImage.Frame in
            var pixels = TestImages.halves(width: 480, height: 360).pixels
            for offset in stride(from: 1, to: 480 * 4 * 60, by: 4) { pixels[offset] = UInt8(index * 20) }
            return AlcedoImage.Frame(pixels: pixels, duration: 0.08)
        }
        let animation = AlcedoImage(width: 480, height: 360, frames: frames)
        origin.route("/anim.webp", .ok(try ImageCodecRegistry.shared.encode(animation, as: .webp), contentType: "image/webp"))
        let harness = try await ServerHarness.start {
            $0.maxMemory = 128 << 20
            $0.resultCacheBytes = 0
        }
        defer { Task { await harness.stop() } }
        let fit = try await harness.request(harness.path(origin.url("/anim.webp"), "rs:fit:1300:1300", ext: "webp"))
        #expect(fit.status == 200, "\(fit.text)")
        let served = try ImageCodecRegistry.shared.decode(fit.body, options: DecodingOptions())
        #expect(served.pixelSize == PixelSize(width: 480, height: 360) && served.frames.count == 12)
        let enlarged = try await harness.request(harness.path(origin.url("/anim.webp"), "rs:fit:1300:1300:1", ext: "webp"))
        #expect(enlarged.status == 422, "\(enlarged.text)")
        #expect(enlarged.text.contains("1300x975") || enlarged.text.contains("memory budget"), "\(enlarged.text)")
        let snapshot = harness.service.memoryBudget.snapshot
        #expect(snapshot.reserved == 0 && snapshot.refusedTotal == 1)
    }

    @Test func aRequestWaitsForMemoryAndIsCountedThenServed() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 640, height: 480), contentType: "image/jpeg"))
        let harness = try await ServerHarness.start { $0.maxMemory = 160 << 20 }
        defer { Task { await harness.stop() } }
        let budget = harness.service.memoryBudget
        // The result cache full, and something else holding nearly all that requests may get.
        budget.setHeld(64 << 20, by: "result")
        let held = try await budget.reserve(budget.largestReservation - (256 << 10))
        async let reply = harness.request(harness.path(origin.url("/a.jpg"), "w:100"))
        try await eventually { budget.snapshot.waitingForMemory == 1 }
        let waiting = harness.service.metrics.text()
        #expect(waiting.contains("alcedo_memory_budget_waiting 1"), "\(waiting)")
        #expect(waiting.contains("alcedo_requests_queued 1.0") || waiting.contains("alcedo_requests_queued 1"), "\(waiting)")
        held.release()
        #expect(try await reply.status == 200)
        let after = budget.snapshot
        #expect(after.reserved == 0 && after.running == 0 && after.waitedForMemoryTotal == 1)
    }

    @Test func sourceBodiesCountWhileTheyArriveAndALargeOneMakesTheNextWait() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        // A 20 MiB body that sends 64 KiB, then the rest once the test opens the gate: its
        // Content-Length is reserved at once. (Zeros after a PNG signature: it never decodes.)
        let gate = PieceGate()
        defer { gate.openAll() }
        origin.route("/stalled.png", TestHTTPServer.Response.ok(Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            + Data(repeating: 0, count: (20 << 20) - 8), contentType: "image/png").paced(at: [64 << 10], gate: gate))
        // Random pixels: a PNG of about 4.8 MB, which does not fit beside it.
        origin.route("/next.png", .ok(TestImages.noisePNG(width: 1100, height: 1100), contentType: "image/png"))
        let harness = try await ServerHarness.start {
            // 72 MiB less the process's 48: 24 MiB for requests and bodies.
            $0.maxMemory = 72 << 20
            $0.resultCacheBytes = 0
            $0.downloadTimeout = .seconds(120)
        }
        defer { Task { await harness.stop() } }
        let budget = harness.service.memoryBudget
        async let first = harness.request(harness.path(origin.url("/stalled.png"), "w:50"))
        // Counted while it arrives, holding no processing slot.
        try await eventually { budget.snapshot.reserved >= 20 << 20 }
        #expect(budget.snapshot.running == 0)
        async let second = harness.request(harness.path(origin.url("/next.png"), "w:50"))
        // The second body waits for memory once its head is in.
        try await eventually { budget.snapshot.waitingForMemory == 1 && origin.requestCount("/next.png") == 1 }
        let waiting = harness.service.metrics.text()
        #expect(waiting.contains("alcedo_memory_budget_waiting 1"), "\(waiting)")
        // The first body arrives whole (and does not decode); the second one then goes on.
        gate.openAll()
        #expect(try await first.status == 422)
        #expect(try await second.status == 200)
        let after = budget.snapshot
        #expect(after.reserved == 0 && after.waitedForMemoryTotal >= 1)
    }

    @Test func theMetricsShowResidentSizeBudgetAndCacheBytes() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/m.jpg", .ok(TestImages.jpeg(width: 200, height: 150), contentType: "image/jpeg"))
        let harness = try await ServerHarness.start { $0.maxMemory = 200 << 20 }
        defer { Task { await harness.stop() } }
        #expect(try await harness.request(harness.path(origin.url("/m.jpg"), "w:50")).status == 200)
        let text = String(decoding: try await harness.request("/metrics").body, as: UTF8.self)
        for name in ["alcedo_memory_resident_bytes ", "alcedo_memory_budget_bytes 209715200", "alcedo_memory_budget_reserved_bytes 0",
                     "alcedo_memory_budget_free_bytes ", "alcedo_memory_budget_held_bytes{holder=\"process\"} 50331648",
                     "alcedo_memory_budget_held_bytes{holder=\"result\"} ", "alcedo_cache_bytes{cache=\"result\"} ",
                     "alcedo_cache_bytes{cache=\"disk\"} "] {
            #expect(text.contains(name), "\(name) missing")
        }
        // The result cache's entry is counted against the budget at the size of its buffer.
        let held = harness.service.memoryBudget.snapshot.held["result"] ?? 0
        #expect(held > 0 && held == harness.service.results.bytes)
    }
}

@Suite("Server: faults under load")
struct ServerFaultTests {
    /// A request that is still loading its source holds no processing slot: with one slot, a
    /// second request is served while the first waits for its origin.
    func expectServedMeanwhile(_ harness: ServerHarness, _ origin: TestHTTPServer) async throws {
        let fast = try await harness.request(harness.path(origin.url("/fast.jpg"), "w:20"))
        #expect(fast.status == 200)
    }

    @Test func slowResetAndSilentOriginsEndWithinTheDeadlineHoldingNoSlot() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        let body = TestImages.jpeg(width: 64, height: 64)
        origin.route("/fast.jpg", .ok(body, contentType: "image/jpeg"))
        var trickle = TestHTTPServer.Response.ok(body, contentType: "image/jpeg")
        trickle.chunkSize = 1
        trickle.chunkInterval = .seconds(1)
        origin.route("/trickle.jpg", trickle)
        var cut = TestHTTPServer.Response.ok(body, contentType: "image/jpeg")
        cut.closeAfter = body.count / 2
        origin.route("/cut.jpg", cut)
        origin.route("/silent.jpg", .ok(body, contentType: "image/jpeg"))
        origin.hold("/silent.jpg")
        defer { origin.release("/silent.jpg") }
        let harness = try await ServerHarness.start {
            $0.concurrency = 1
            $0.downloadTimeout = .seconds(2)
        }
        defer { Task { await harness.stop() } }
        let clock = ContinuousClock()
        let start = clock.now
        async let trickled = harness.request(harness.path(origin.url("/trickle.jpg"), "w:20"))
        async let silent = harness.request(harness.path(origin.url("/silent.jpg"), "w:20"))
        try await eventually { origin.requestCount("/trickle.jpg") == 1 && origin.requestCount("/silent.jpg") == 1 }
        try await expectServedMeanwhile(harness, origin)
        let cutReply = try await harness.request(harness.path(origin.url("/cut.jpg"), "w:20"))
        #expect(cutReply.status == 502, "\(cutReply.text)")
        #expect(try await trickled.status == 504)
        #expect(try await silent.status == 504)
        // Bounded by the 2 s deadline (with room for a loaded machine), not by the origins: the
        // trickling one alone would take a second a byte, and the silent one never answers.
        #expect(body.count > 300)
        #expect(clock.now - start < .seconds(300))
        let snapshot = harness.service.memoryBudget.snapshot
        #expect(snapshot.running == 0 && snapshot.reserved == 0)
    }

    @Test func aThousandIdleKeepAliveConnectionsHoldNoSlot() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/fast.jpg", .ok(TestImages.jpeg(width: 64, height: 64), contentType: "image/jpeg"))
        let harness = try await ServerHarness.start { $0.concurrency = 1 }
        defer { Task { await harness.stop() } }
        let port = UInt16(harness.baseURL.split(separator: ":").last.flatMap { Int($0) } ?? 0)
        // Connected from a thread of their own: the server accepts on the pool's threads.
        let opened = await offPool { () -> (sockets: [Int32], failure: String?) in
            var sockets: [Int32] = []
            for _ in 0..<1000 {
                let fd = LoopbackPort.connect(Int(port))
                guard fd >= 0 else { return (sockets, "connect() failed: \(errno)") }
                sockets.append(fd)
            }
            return (sockets, nil)
        }
        let sockets = opened.sockets
        defer { for fd in sockets { close(fd) } }
        if let failure = opened.failure { Issue.record("\(failure)") }
        #expect(sockets.count == 1000)
        try await expectServedMeanwhile(harness, origin)
        let snapshot = harness.service.memoryBudget.snapshot
        #expect(snapshot.running == 0 && snapshot.waiting == 0)
    }
}

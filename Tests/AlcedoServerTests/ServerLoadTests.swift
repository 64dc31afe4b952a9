import Alcedo
@testable import AlcedoServer
import AlcedoTestSupport
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Server: coalescing, load, disconnects")
struct ServerLoadTests {
    @Test func concurrentRequestsForOneNewVariantMakeOneDownloadAndOneProduction() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/one.jpg", .ok(TestImages.jpeg(width: 320, height: 240), contentType: "image/jpeg"))
        origin.hold("/one.jpg")
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        let path = harness.path(origin.url("/one.jpg"), "rs:fill:64:64", ext: "webp")
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<100 { group.addTask { try await harness.request(path).status } }
            try await eventually { origin.requestCount("/one.jpg") == 1 }
            origin.release("/one.jpg")
            for try await status in group { #expect(status == 200) }
        }
        #expect(origin.requestCount("/one.jpg") == 1)
        #expect(harness.service.metrics.producedCount == 1)
    }

    /// 2,000 requests from 64 connections over 50 sources x 5 option sets: no error, each
    /// source downloaded once, each variant processed once.
    @Test func loadOf2000RequestsOver50SourcesAnd5OptionSets() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        for index in 0..<50 {
            origin.route("/src\(index).jpg", .ok(TestImages.jpeg(width: 160 + index, height: 120), contentType: "image/jpeg"))
        }
        let optionSets = ["rs:fit:64:64", "rs:fill:48:48", "w:40/q:70", "rs:fill:32:48/g:ea", "h:30/bl:1"]
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        var paths: [String] = []
        for round in 0..<8 {
            for source in 0..<50 {
                for index in optionSets.indices {
                    // A different order each round, so variants of one source meet in flight.
                    let s = (source * 7 + round * 13) % 50
                    paths.append(harness.path(origin.url("/src\(s).jpg"), optionSets[(index + round) % 5], ext: "jpg"))
                }
            }
        }
        #expect(paths.count == 2000)
        let next = Locked(0)
        let failures = Locked<[String]>([])
        let clock = ContinuousClock()
        let start = clock.now
        let frozenPaths = paths
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<64 {
                group.addTask {
                    while true {
                        let index = next.withLock { value in
                            defer { value += 1 }
                            return value
                        }
                        guard index < frozenPaths.count else { return }
                        let reply = try await harness.request(frozenPaths[index])
                        if reply.status != 200 { failures.withLock { $0.append("\(reply.status) \(reply.text)") } }
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = clock.now - start
        #expect(failures.value.isEmpty, "\(failures.value.prefix(5))")
        for index in 0..<50 { #expect(origin.requestCount("/src\(index).jpg") == 1, "source \(index)") }
        // Each variant processed once; a result kept for coalescing expires after a minute, which a
        // loaded machine can pass mid-run, and a later request then takes the cached variant.
        #expect(harness.service.metrics.processingRunCount == 250)
        #expect(harness.service.metrics.producedCount >= 250)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("load: 2000 requests in \(String(format: "%.2f", seconds)) s, \(Int(2000 / seconds)) requests/s (debug build)")
    }

    @Test func aClientThatDisconnectsMidResponseLeavesTheServerServing() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        // A large result, so the response is still being written when the client goes.
        origin.route("/big.png", .ok(TestImages.noisePNG(width: 1000, height: 1000), contentType: "image/png"))
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        let path = harness.path(origin.url("/big.png"), ext: "png")
        let warm = try await harness.request(path)
        #expect(warm.status == 200 && warm.body.count > 100_000)
        let port = Int(harness.baseURL.split(separator: ":").last!)!
        for _ in 0..<5 {
            let received = try await offPool { try RawClient.getAndHangUp(port: port, path: path, readBytes: 4096) }
            #expect(received.hasPrefix("HTTP/1.1 200"))
        }
        // Hang up before the head, while it is being produced.
        let fresh = harness.path(origin.url("/big.png"), "w:900", ext: "png")
        _ = try await offPool { try RawClient.getAndHangUp(port: port, path: fresh, readBytes: 0) }
        #expect(try await harness.request("/health").status == 200)
        let again = try await harness.request(path)
        #expect(again.status == 200 && again.body == warm.body)
        #expect(try await harness.request(fresh).status == 200)
    }
}

/// A blocking socket client that sends one request, reads a little and closes.
enum RawClient {
    static func getAndHangUp(port: Int, path: String, readBytes: Int) throws -> String {
        let fd = LoopbackPort.connect(port)
        guard fd >= 0 else { throw POSIXError(.ECONNREFUSED) }
        defer { close(fd) }
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var buffer = [UInt8](repeating: 0, count: max(readBytes, 1))
        var total = 0
        while total < readBytes {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + total, readBytes - total, 0) }
            if count <= 0 { break }
            total += count
        }
        return String(decoding: buffer[0..<total], as: UTF8.self)
    }
}

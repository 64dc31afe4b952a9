@testable import Alcedo
import AlcedoTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// SIGTERM while `alcedo serve` (a real process) is busy: what was accepted is answered in
/// full, nothing new is taken, the cache folder holds only whole entries, and it exits 0.
@Suite("Server: SIGTERM under load")
struct ServerShutdownUnderLoadTests {
    @Test func inFlightRequestsFinishNothingHalfWrittenIsLeftAndItExitsZero() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        // Six requests at once, each with a source URL of its own (a query the origin ignores),
        // so that each one's arrival shows at the origin: within the shared HTTP client's
        // connections per host (8) and the server's downloads per host (6).
        let sources = 3
        for index in 0..<sources {
            origin.route("/s\(index).jpg", .ok(TestImages.jpeg(width: 800 + 16 * index, height: 600), contentType: "image/jpeg"))
            origin.hold("/s\(index).jpg")
        }
        defer { for index in 0..<sources { origin.release("/s\(index).jpg") } }
        let server = try await ServeProcess.start(["--graceful-stop-timeout", "60", "--concurrency", "2"])
        defer { server.stop() }
        let exited = Locked(false)
        server.process.terminationHandler = { _ in exited.withLock { $0 = true } }
        let port = try #require(server.baseURL.split(separator: ":").last.flatMap { Int($0) })
        let client = OneShotClient()
        // Two variants of each source, all waiting for their sources.
        let paths = (0..<sources).flatMap { index in
            [120, 200].map { "/insecure/w:\($0)/plain/" + origin.url("/s\(index).jpg").absoluteString + "%3Fw\($0)@jpg" }
        }
        let base = server.baseURL
        let replies = Task {
            try await withThrowingTaskGroup(of: (String, Answer).self) { group in
                for path in paths {
                    group.addTask {
                        let reply = try await client.get(base + path)
                        return (path, Answer(status: reply.status, contentLength: reply.headers["content-length"], body: reply.body))
                    }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
        }
        try await eventually { (0..<sources).allSatisfy { origin.requestCount("/s\($0).jpg") >= 2 } }
        kill(server.process.processIdentifier, SIGTERM)
        // The listener closes: a new connection is refused (or, if it raced the close, never answered).
        try await eventually { await !offPool { Self.acceptsNewRequests(port: port) } }
        #expect(server.process.isRunning, "still draining the requests in flight")
        for index in 0..<sources { origin.release("/s\(index).jpg") }

        let answered = try await replies.value
        #expect(answered.count == paths.count)
        for (path, reply) in answered {
            #expect(reply.status == 200, "\(path): \(reply.status) \(String(decoding: reply.body.prefix(300), as: UTF8.self))")
            guard reply.status == 200 else { continue }
            #expect(reply.contentLength == String(reply.body.count), "\(path): a full body")
            let image = try ImageCodecRegistry.shared.decode(reply.body)
            #expect(image.pixelSize.width == (path.contains("w:120") ? 120 : 200))
        }
        // Within the graceful stop timeout (60 s), with status 0.
        try await eventually { exited.value }
        #expect(server.process.terminationReason == .exit)
        #expect(server.process.terminationStatus == 0)

        // Nothing half-written: no temporary file anywhere in the cache folder, and every entry
        // reads back whole.
        let files = FileManager.default.enumerator(at: server.cache, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL } ?? []
        #expect(!files.isEmpty, "the results and sources were cached")
        #expect(!files.contains { $0.lastPathComponent.hasPrefix(DiskStorage.EntryStore.temporaryPrefix) },
                "\(files.map(\.lastPathComponent))")
        let disk = DiskStorage.EntryStore(config: DiskStorage.EntryStore.Config(name: "alcedo-serve", directory: server.cache))
        let report = try disk.cleanUp()
        #expect(report.corrupt.isEmpty && report.temporaryFiles == 0, "\(report)")
        let statistics = try disk.statistics()
        #expect(statistics.entryCount >= paths.count, "\(statistics)")
    }

    struct Answer: Sendable {
        let status: Int
        let contentLength: String?
        let body: Data
    }

    /// Whether a fresh connection to 127.0.0.1:`port` gets an answer to `GET /health` (waits at
    /// most 5 s for it).
    static func acceptsNewRequests(port: Int) -> Bool {
        let fd = LoopbackPort.connect(port, receiveTimeout: 5)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let request = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return count > 0 && String(decoding: buffer[0..<count], as: UTF8.self).hasPrefix("HTTP/1.1 200")
    }
}

import AlcedoTestSupport
@testable import AlcedoServer
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `alcedo serve --processes N`: workers share the port, and a worker that dies costs only
/// its own requests while a new one takes its place.
@Suite("alcedo serve --processes")
struct ServeWorkerProcessesTests {
    /// Client connections asking for new variants while a worker is killed (few: the other
    /// suites run beside this one on two cores).
    static let clients = 3

    /// The pids of `parent`'s child processes, from /proc.
    static func children(of parent: Int32) -> Set<Int32> {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        var found: Set<Int32> = []
        for entry in entries where entry.allSatisfy(\.isNumber) {
            guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 2, Int32(fields[1]) == parent, let pid = Int32(entry) { found.insert(pid) }
        }
        return found
    }

    @Test("two workers share one port; kill -9 of one under load costs at most its open requests; a new worker replaces it; SIGTERM exits 0")
    func workerKilledUnderLoad() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 400, height: 300), contentType: "image/jpeg"))
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-workers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("stderr.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)

        let process = Process()
        process.executableURL = AlcedoBinary.url
        process.arguments = ["serve", "--port", "0", "--cache-dir", dir.appendingPathComponent("cache").path,
                             "--allow-private-networks", "--processes", "2", "--concurrency", "2", "--max-memory", "512"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = try FileHandle(forWritingTo: log)
        try ProcessLaunch.run(process)
        defer { if process.isRunning { process.interrupt(); kill(process.processIdentifier, SIGKILL) } }
        let line = try #require(try await ServeCommandTests.readLine(out.fileHandleForReading))
        let base = try #require(line.wholeMatch(of: /listening on (http:\/\/.+)/)?.1).description
        let workers = Self.children(of: process.processIdentifier)
        #expect(workers.count == 2, "workers: \(workers)")

        let harness = try await ServerHarness.start()
        let source = origin.url("/a.jpg").absoluteString
        final class Counters: Sendable {
            let failures = Mutex(0), successes = Mutex(0), stop = Mutex(false)
        }
        let counters = Counters()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<Self.clients {
                group.addTask {
                    var n = 0
                    while !counters.stop.withLock({ $0 }) {
                        n += 1
                        // A new variant each time, so every request is processed.
                        let path = "/insecure/rs:fit:\(100 + client * 50 + n % 40):0/plain/\(source)@png"
                        if let reply = try? await harness.request(base + path), reply.status == 200 {
                            counters.successes.withLock { $0 += 1 }
                        } else {
                            counters.failures.withLock { $0 += 1 }
                        }
                    }
                }
            }
            try await Task.sleep(for: .seconds(1))
            let victim = try #require(workers.first)
            kill(victim, SIGKILL)
            let before = counters.successes.withLock { $0 }
            try await Task.sleep(for: .seconds(2))
            #expect(counters.successes.withLock { $0 } > before, "nothing was served after the kill")
            counters.stop.withLock { $0 = true }
            try await group.waitForAll()
        }
        // Any worker answers a scrape with every worker's series, each family declared once.
        var scrape = ""
        for _ in 0..<20 {
            scrape = String(decoding: try await harness.request(base + "/metrics").body, as: UTF8.self)
            if scrape.contains("alcedo_worker_scrape_failures 0") { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(scrape.contains("alcedo_worker_scrape_failures 0"), "\(scrape.suffix(400))")
        #expect(scrape.contains("worker=\"0\"") && scrape.contains("worker=\"1\""))
        let declarations = scrape.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }
        #expect(Set(declarations).count == declarations.count, "a family declared twice")
        await harness.stop()
        // At most the requests open on the killed worker: one per client connection.
        #expect(counters.failures.withLock { $0 } <= Self.clients, "failures \(counters.failures.withLock { $0 }), successes \(counters.successes.withLock { $0 })")
        let replaced = Self.children(of: process.processIdentifier)
        #expect(replaced.count == 2 && replaced != workers, "before \(workers), after \(replaced)")
        let text = try String(contentsOf: log, encoding: .utf8)
        #expect(text.contains("was killed by signal 9 (SIGKILL)"), "\(text)")

        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(process.terminationStatus)")
        for pid in replaced { #expect(kill(pid, 0) != 0, "worker \(pid) outlived the supervisor") }
    }

    @Test("a --max-memory too small for each worker's share is refused before any worker starts")
    func shareTooSmall() throws {
        let (status, stderr) = try ServeCommandTests.runToEnd(["serve", "--port", "0", "--processes", "8", "--max-memory", "256"])
        #expect(status != 0)
        #expect(stderr.contains("--processes"), "\(stderr)")
    }

    @Test("expositions merge into one: each sample labelled with its worker, a family's samples under one HELP and TYPE")
    func expositionsMerge() {
        let first = """
        # HELP requests_total Requests.
        # TYPE requests_total counter
        requests_total{status="200"} 3
        requests_total 1
        # HELP latency Latency.
        # TYPE latency histogram
        latency_bucket{le="0.1"} 2
        latency_bucket{le="+Inf"} 3
        latency_sum 0.2
        latency_count 3
        """
        let second = """
        # HELP requests_total Requests.
        # TYPE requests_total counter
        requests_total{status="200"} 5
        # HELP latency Latency.
        # TYPE latency histogram
        latency_count{} 7
        untyped_thing 9
        """
        let merged = PrometheusText.merge([("worker", "0", first), ("worker", "1", second)])
        #expect(merged == """
        # HELP requests_total Requests.
        # TYPE requests_total counter
        requests_total{worker="0",status="200"} 3
        requests_total{worker="0"} 1
        requests_total{worker="1",status="200"} 5
        # HELP latency Latency.
        # TYPE latency histogram
        latency_bucket{worker="0",le="0.1"} 2
        latency_bucket{worker="0",le="+Inf"} 3
        latency_sum{worker="0"} 0.2
        latency_count{worker="0"} 3
        latency_count{worker="1"} 7
        untyped_thing{worker="1"} 9

        """)
    }
}

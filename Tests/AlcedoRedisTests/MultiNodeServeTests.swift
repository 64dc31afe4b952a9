import AlcedoTestSupport
import Alcedo
import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// An origin: `python3 -m http.server` on a loopback port over a folder, with its request log.
final class OriginServer: Sendable {
    let port: Int
    let folder: TempFolder
    private let process: Mutex<Process?>
    private let log: URL

    init(files: [String: Data]) async throws {
        folder = try TempFolder()
        let root = folder.url.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        for (name, data) in files { try data.write(to: root.appendingPathComponent(name)) }
        port = try RedisTestServer.freePort()
        log = folder.url.appendingPathComponent("requests.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", "-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", root.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: log)
        try ProcessLaunch.run(process)
        self.process = Mutex(process)
        // Until it listens (at most 120 s: Python starts slowly beside the whole suite). A
        // `for … where` loop here would go on connecting after the first success, filling the
        // server's small accept backlog until connect() blocks.
        let deadline = ContinuousClock.now + .seconds(300)
        while !RedisTestServer.accepts(port: port), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    func url(_ name: String) -> String { "http://127.0.0.1:\(port)/\(name)" }

    /// How many `GET /name` requests reached the origin.
    func requests(_ name: String) -> Int {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.components(separatedBy: "\"GET /\(name) ").count - 1
    }

    deinit {
        process.withLock { process in
            if let process, process.isRunning {
                // SIGKILL: the test runner's children may inherit SIGTERM blocked, and Python's
                // server then never ends.
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
    }
}

/// One `alcedo serve` process with its own disk cache.
final class ServeNode: Sendable {
    let address: String
    let folder: TempFolder
    private let process: Mutex<Process?>

    init(redis: String) async throws {
        guard let executable = AlcedoExecutable.url else { throw TestFailure("alcedo is not built next to the tests") }
        folder = try TempFolder()
        let process = Process()
        process.executableURL = executable
        // Redis deadlines far above what a loaded machine stalls: the test counts origin requests,
        // and a GET past its deadline would count as a miss and fetch the source again.
        process.arguments = ["serve", "--port", "0", "--cache-dir", folder.url.path, "--trusted-source-host", "127.0.0.1",
                             "--redis", redis, "--redis-timeout", "10000", "--redis-lock-wait", "60000", "--concurrency", "4"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try ProcessLaunch.run(process)
        self.process = Mutex(process)
        // The first line says where it listens.
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { throw TestFailure("alcedo serve ended before listening") }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self).split(separator: "\n")[0]
        guard text.hasPrefix("listening on ") else { throw TestFailure("unexpected first line: \(text)") }
        address = String(text.dropFirst("listening on ".count))
    }

    /// The URL of a 40x30 PNG thumbnail of `source`.
    func thumbnailURL(of source: String) -> String {
        let encoded = source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? source
        return "\(address)/insecure/rs:fit:40:30/plain/\(encoded)@png"
    }

    /// The value of the metric line `name` (no labels) in `/metrics`.
    func metric(_ name: String) async throws -> Int {
        let response = try await multiNodeClient.execute(HTTPClientRequest(url: address + "/metrics"), timeout: .seconds(300))
        let body = String(buffer: try await response.body.collect(upTo: 1 << 20))
        for line in body.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Int(Double(line.split(separator: " ")[1]) ?? -1)
        }
        return 0
    }

    deinit {
        process.withLock { process in
            if let process, process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
        }
    }
}

@Suite("Several alcedo serve nodes sharing Redis",
       .enabled(if: RedisTestServer.isAvailable && AlcedoExecutable.url != nil, "needs redis-server and the alcedo executable"))
struct MultiNodeServeTests {
    @Test func threeNodesDownloadEachSourceOnceAndProcessEachVariantOnceAndAFourthStartsWarm() async throws {
        let redis = try await RedisTestServer.start()
        var files: [String: Data] = [:]
        for index in 0..<20 { files["s\(index).png"] = try testPNG(width: 96, height: 72, seed: index).1 }
        let origin = try await OriginServer(files: files)
        var nodes: [ServeNode] = []
        for _ in 0..<3 { nodes.append(try await ServeNode(redis: redis.url)) }

        // 300 requests, variant i % 20 on node i % 3, many at once.
        let urls = (0..<300).map { nodes[$0 % 3].thumbnailURL(of: origin.url("s\($0 % 20).png")) }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for url in urls {
                group.addTask {
                    let response = try await multiNodeClient.execute(HTTPClientRequest(url: url), timeout: .seconds(300))
                    _ = try await response.body.collect(upTo: 1 << 20)
                    return Int(response.status.code)
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.allSatisfy { $0 == 200 }, "\(Dictionary(grouping: statuses) { $0 }.mapValues(\.count))")
        for index in 0..<20 {
            #expect(origin.requests("s\(index).png") == 1, "the origin saw s\(index).png \(origin.requests("s\(index).png")) times")
        }
        var processed = 0
        for node in nodes { processed += try await node.metric("alcedo_processing_runs_total") }
        #expect(processed == 20, "the nodes together processed each variant once")

        // A fourth node starts with an empty disk: everything comes from Redis.
        let late = try await ServeNode(redis: redis.url)
        for index in 0..<20 {
            let response = try await multiNodeClient.execute(
                HTTPClientRequest(url: late.thumbnailURL(of: origin.url("s\(index).png"))), timeout: .seconds(300))
            _ = try await response.body.collect(upTo: 1 << 20)
            #expect(response.status.code == 200)
        }
        for index in 0..<20 { #expect(origin.requests("s\(index).png") == 1, "no origin request from the fourth node") }
        #expect(try await late.metric("alcedo_processing_runs_total") == 0)
        #expect(try await late.metric("alcedo_shared_cache_hits_total") == 20)
    }
}

/// The nodes' client: no read timeout (HTTPClient.shared gives up reading after 90 s, which a
/// loaded runner can reach), never shut down (a client released without a shutdown traps in
/// AsyncHTTPClient's debug build when a test throws before shutting it down).
let multiNodeClient: HTTPClient = {
    var configuration = HTTPClient.Configuration()
    configuration.timeout.connect = .seconds(300)
    configuration.decompression = .disabled
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
}()

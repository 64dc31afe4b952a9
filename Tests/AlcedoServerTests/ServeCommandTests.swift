import AlcedoTestSupport
import AsyncHTTPClient
import Foundation
import Synchronization
import Testing

/// `alcedo serve` run as a child process, as a user runs it.
@Suite("alcedo serve")
struct ServeCommandTests {
    /// The `alcedo` under test (``AlcedoBinary/url``: the build folder's, linked as shipped).
    static var executable: URL { AlcedoBinary.url }

    @Test func printsOneLineDrainsOnSIGTERMAndExitsZero() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/slow.jpg", .ok(TestImages.jpeg(width: 64, height: 48), contentType: "image/jpeg"))
        origin.hold("/slow.jpg")
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-serve-cmd-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: cache) }

        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["serve", "--port", "0", "--cache-dir", cache.path]
        // Environment variables set what no flag sets; flags win (ALCEDO_PORT loses to --port 0).
        process.environment = ProcessInfo.processInfo.environment.merging([
            "ALCEDO_PORT": "1", "ALCEDO_TTL": "77", "ALCEDO_ALLOW_PRIVATE_NETWORKS": "1",
        ]) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let exited = Locked(false)
        process.terminationHandler = { _ in exited.withLock { $0 = true } }
        try ProcessLaunch.run(process)
        defer { if process.isRunning { process.terminate() } }

        let line = try await Self.readLine(out.fileHandleForReading)
        let firstLine = try #require(line, "no line on stdout")
        let match = try #require(firstLine.wholeMatch(of: /listening on (http:\/\/127\.0\.0\.1:(\d+))/))
        let base = String(match.1)
        #expect(Int(match.2)! > 1)

        let client = OneShotClient()
        let path = "/insecure/w:32/plain/" + origin.url("/slow.jpg").absoluteString + "@jpg"
        async let inFlight = client.get(base + path)
        try await eventually { origin.requestCount("/slow.jpg") == 1 }
        kill(process.processIdentifier, SIGTERM)
        try await Task.sleep(for: .milliseconds(200))
        #expect(process.isRunning, "still draining the request in flight")
        origin.release("/slow.jpg")
        let reply = try await inFlight
        #expect(reply.status == 200)
        #expect(reply.headers["cache-control"] == "public, max-age=77")

        try await eventually { exited.value }
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        let rest = out.fileHandleForReading.readDataToEndOfFile()
        #expect(rest.isEmpty, "exactly one line on stdout, then: \(String(decoding: rest, as: UTF8.self))")
    }

    @Test func badSettingsAreReportedNotRun() throws {
        let (status, text) = try Self.runToEnd(["serve", "--port", "0", "--key", "zz", "--salt", "00"])
        #expect(status != 0)
        #expect(text.contains("not hex"))
    }

    /// Runs `alcedo` with `arguments` to its end; returns its exit status and standard error.
    static func runToEnd(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let err = Pipe()
        process.standardError = err
        process.standardOutput = Pipe()
        try ProcessLaunch.run(process)
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    /// Reads stdout up to the first newline (bounded to 300 s: a bound for a child that never
    /// says it listens, long enough for a stalled machine).
    static func readLine(_ handle: FileHandle) async throws -> String? {
        try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    Thread.detachNewThread {
                        var bytes = Data()
                        while true {
                            var byte: UInt8 = 0
                            let count = read(handle.fileDescriptor, &byte, 1)
                            if count <= 0 { continuation.resume(returning: bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)); return }
                            if byte == UInt8(ascii: "\n") { continuation.resume(returning: String(decoding: bytes, as: UTF8.self)); return }
                            bytes.append(byte)
                        }
                    }
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(300))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}

/// A minimal HTTP GET over AsyncHTTPClient for the child-process test.
struct OneShotClient {
    struct Reply { let status: Int; let headers: [String: String]; let body: Data }

    func get(_ url: String, headers: [String: String] = [:]) async throws -> Reply {
        var request = HTTPClientRequest(url: url)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await ServerHarness.sharedClient.execute(request, timeout: .seconds(300))
        var body = Data()
        for try await chunk in response.body { body.append(contentsOf: chunk.readableBytesView) }
        var headers: [String: String] = [:]
        for (name, value) in response.headers { headers[name.lowercased()] = value }
        return Reply(status: Int(response.status.code), headers: headers, body: body)
    }
}

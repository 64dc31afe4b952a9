import AlcedoTestSupport
import Foundation
import Testing

/// `alcedo serve` run as a child process, as a user runs it: on a free port, with a temporary
/// cache folder and loopback sources allowed, its standard error discarded.
///
/// Sendable by hand: every property is a constant, and `Process`'s `isRunning`, `terminate()`
/// and `waitUntilExit()`, all that ``stop()`` calls, may be called from any thread.
final class ServeProcess: @unchecked Sendable {
    let process: Process
    /// `http://127.0.0.1:PORT`, from the line the server printed.
    let baseURL: String
    /// The cache folder (`--cache-dir`).
    let cache: URL

    private init(process: Process, baseURL: String, cache: URL) {
        self.process = process
        self.baseURL = baseURL
        self.cache = cache
    }

    /// Starts `alcedo serve` with `arguments` after the test defaults, and `environment` added
    /// to this process's; returns once it has printed its `listening on` line.
    /// Standard error goes to `standardError` when one is given (created when missing).
    static func start(_ arguments: [String], environment: [String: String] = [:],
                      executable: URL = ServeCommandTests.executable, standardError: URL? = nil) async throws -> ServeProcess {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-serve-process-\(UUID().uuidString)")
        let process = Process()
        process.executableURL = executable
        process.arguments = ["serve", "--port", "0", "--cache-dir", cache.path, "--allow-private-networks"] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        process.standardOutput = out
        if let standardError {
            if !FileManager.default.fileExists(atPath: standardError.path) {
                _ = FileManager.default.createFile(atPath: standardError.path, contents: nil)
            }
            process.standardError = try FileHandle(forWritingTo: standardError)
        } else {
            process.standardError = FileHandle.nullDevice
        }
        try ProcessLaunch.run(process)
        let server = ServeProcess(process: process, baseURL: "", cache: cache)
        guard let line = try await ServeCommandTests.readLine(out.fileHandleForReading),
              let match = line.wholeMatch(of: /listening on (http:\/\/.+)/) else {
            server.stop()
            throw ServeProcessError.noListeningLine
        }
        return ServeProcess(process: process, baseURL: String(match.1), cache: cache)
    }

    /// Ends the process and removes its cache folder.
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: cache)
    }

    enum ServeProcessError: Error { case noListeningLine }
}

extension ServeProcess {
    /// Runs `body` with `alcedo serve` started with `arguments` and `environment`, and an origin
    /// serving a 64x48 JPEG; `body` gets the server and the path of that JPEG through it with
    /// `options` (`/insecure/OPTIONS/plain/SOURCE`). Both are stopped afterwards.
    static func withJPEGOrigin<T>(_ arguments: [String], environment: [String: String] = [:], options: String,
                                  _ body: (ServeProcess, String) async throws -> T) async throws -> T {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 64, height: 48), contentType: "image/jpeg"))
        let server = try await start(arguments, environment: environment)
        defer { server.stop() }
        return try await body(server, "/insecure/\(options)/plain/" + origin.url("/a.jpg").absoluteString)
    }
}

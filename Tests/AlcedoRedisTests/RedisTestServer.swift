import AlcedoTestSupport
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A `redis-server` of the test's own on a free loopback port, with a temporary folder, no
/// persistence, stopped when the test lets go of it. Tests skip when `redis-server` is not
/// installed (`scripts/install-deps.sh` installs it).
final class RedisTestServer: Sendable {
    let port: Int
    let directory: URL
    let extraArguments: [String]
    /// The `--tls-*` options when the server listens with TLS only (its plain port off).
    let tlsArguments: [String]?
    private let process = Mutex<Process?>(nil)

    static var executable: String? {
        for folder in ["/usr/bin", "/usr/local/bin", "/usr/sbin"] where FileManager.default.isExecutableFile(atPath: folder + "/redis-server") {
            return folder + "/redis-server"
        }
        return nil
    }

    static var isAvailable: Bool { executable != nil }

    private init(port: Int, directory: URL, extraArguments: [String], tlsArguments: [String]?) {
        self.port = port
        self.directory = directory
        self.extraArguments = extraArguments
        self.tlsArguments = tlsArguments
    }

    /// Starts a server; `arguments` are extra `redis-server` options such as `--requirepass x`.
    /// With `tls` (`--tls-cert-file …` and the like), ``port`` is its TLS port and it has no
    /// plain one.
    static func start(_ arguments: [String] = [], tls: [String]? = nil) async throws -> RedisTestServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let server = RedisTestServer(port: try freePort(), directory: directory, extraArguments: arguments, tlsArguments: tls)
        try await server.launch()
        return server
    }

    var url: String { "redis://127.0.0.1:\(port)" }

    /// Starts (or restarts, after a kill) the process on the same port and folder, and waits
    /// until it accepts connections.
    func launch() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.executable ?? "/usr/bin/redis-server")
        let ports = tlsArguments.map { ["--port", "0", "--tls-port", String(port)] + $0 } ?? ["--port", String(port)]
        process.arguments = ports + ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", directory.path, "--daemonize", "no", "--loglevel", "warning"] + extraArguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ProcessLaunch.run(process)
        self.process.withLock { $0 = process }
        let deadline = ContinuousClock.now + .seconds(60)
        // Checked once more after the deadline: a process that was not scheduled for a while
        // (a stalled machine) must not fail a server that started meanwhile.
        while true {
            if Self.accepts(port: port) { return }
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestFailure("redis-server did not start on port \(port)")
    }

    /// Sends `signal` to the server process (SIGKILL, SIGSTOP, SIGCONT).
    func signal(_ signal: Int32) {
        guard let pid = process.withLock({ $0?.processIdentifier }) else { return }
        kill(pid, signal)
    }

    /// Kills the process (SIGKILL) and waits for it to go.
    func kill9() {
        let running = process.withLock { process -> Process? in
            defer { process = nil }
            return process
        }
        guard let running else { return }
        kill(running.processIdentifier, SIGCONT)
        kill(running.processIdentifier, SIGKILL)
        running.waitUntilExit()
    }

    deinit {
        kill9()
        try? FileManager.default.removeItem(at: directory)
    }

    static func freePort() throws -> Int { try LoopbackPort.free() }

    static func accepts(port: Int) -> Bool { LoopbackPort.accepts(port) }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// thumbor 7.8 (from PyPI, in the test virtual environment `scripts/install-s3-test-tools.sh`
/// makes, as moto is) on a free loopback port, for the differential tests of the thumbor
/// dialect: an HTTP loader, no storage, no result storage, unsafe URLs allowed and a security key.
public final class ThumborPeer: Sendable {
    /// `http://127.0.0.1:PORT`.
    public let baseURL: String
    /// The `SECURITY_KEY` it signs with.
    public let securityKey: String
    private let process: Mutex<Process?>
    private let folder: URL

    /// The virtual environment's `thumbor` command.
    public static var executable: URL {
        MotoS3Server.python.deletingLastPathComponent().appendingPathComponent("thumbor")
    }

    private init(baseURL: String, securityKey: String, process: Process, folder: URL) {
        self.baseURL = baseURL
        self.securityKey = securityKey
        self.process = Mutex(process)
        self.folder = folder
    }

    /// Starts thumbor with `settings` added to its configuration (`NAME = value` lines) and
    /// returns once `/healthcheck` answers.
    public static func start(securityKey: String = "MY_SECURE_KEY", settings: [String] = []) async throws -> ThumborPeer {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw MotoS3ServerError("no thumbor at \(executable.path): run scripts/install-s3-test-tools.sh (make test does)")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-thumbor-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let configuration = ([
            "SECURITY_KEY = '\(securityKey)'",
            "ALLOW_UNSAFE_URL = True",
            "LOADER = 'thumbor.loaders.http_loader'",
            "STORAGE = 'thumbor.storages.no_storage'",
            "RESULT_STORAGE = None",
            "HTTP_LOADER_CONNECT_TIMEOUT = 3",
            "HTTP_LOADER_REQUEST_TIMEOUT = 10",
        ] + settings).joined(separator: "\n") + "\n"
        let configFile = folder.appendingPathComponent("thumbor.conf")
        try Data(configuration.utf8).write(to: configFile)
        let port = try LoopbackPort.free()
        let logFile = folder.appendingPathComponent("thumbor.log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["-p", String(port), "-i", "127.0.0.1", "-c", configFile.path, "-l", "error"]
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONUNBUFFERED"] = "1"
        process.environment = environment
        let log = try FileHandle(forWritingTo: logFile)
        process.standardOutput = log
        process.standardError = log
        try ProcessLaunch.run(process)
        try await PeerProcess.waitForPort(port, of: process, name: "thumbor", log: logFile)
        return ThumborPeer(baseURL: "http://127.0.0.1:\(port)", securityKey: securityKey, process: process, folder: folder)
    }

    /// Stops thumbor and removes its folder.
    public func stop() {
        // thumbor keeps nothing worth a graceful stop here (no storage): it is killed, as moto is.
        PeerProcess.stop(process, folder: folder)
    }

    deinit { stop() }
}

import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// moto's standalone S3 server (`moto[server]` from PyPI) on a free loopback port, for the
/// object-storage tests, with authentication on: every request after the set-up must be
/// signed with a key it knows, so a wrong secret really fails.
///
/// The interpreter is the virtual environment `scripts/install-s3-test-tools.sh` makes
/// (`make test` runs it through `scripts/install-deps.sh`): `Tests/.venv-s3`, or
/// `$ALCEDO_S3_VENV`. The server's request log (one line per request, as werkzeug writes it)
/// is kept in a file, so tests can count the requests that reached the store.
public final class MotoS3Server: Sendable {
    /// An object to upload at start.
    public struct Object: Sendable {
        public var bucket: String
        public var key: String
        public var data: Data
        public var contentType: String?
        public var cacheControl: String?

        public init(bucket: String, key: String, data: Data, contentType: String? = nil, cacheControl: String? = nil) {
            self.bucket = bucket
            self.key = key
            self.data = data
            self.contentType = contentType
            self.cacheControl = cacheControl
        }
    }

    /// `http://127.0.0.1:PORT`.
    public let endpoint: URL
    public let port: Int
    /// The IAM user's long-term key.
    public let accessKeyID: String
    public let secretAccessKey: String
    /// Temporary credentials of an assumed role (read-only), with their session token.
    public let sessionAccessKeyID: String
    public let sessionSecretAccessKey: String
    public let sessionToken: String
    private let process: Mutex<Process?>
    private let folder: URL
    private let logFile: URL

    /// The repository's root, found from this file's place in it.
    public static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The virtual environment's python.
    public static var python: URL {
        let environment = ProcessInfo.processInfo.environment["ALCEDO_S3_VENV"].flatMap { $0.isEmpty ? nil : $0 }
        let venv = environment.map { URL(fileURLWithPath: $0) } ?? repositoryRoot.appendingPathComponent("Tests/.venv-s3")
        return venv.appendingPathComponent("bin/python")
    }

    static var fixtureScript: URL { repositoryRoot.appendingPathComponent("scripts/s3-test-fixture.py") }

    private init(endpoint: URL, port: Int, credentials: [String: String], process: Process, folder: URL, logFile: URL) {
        self.endpoint = endpoint
        self.port = port
        accessKeyID = credentials["accessKeyID"] ?? ""
        secretAccessKey = credentials["secretAccessKey"] ?? ""
        sessionAccessKeyID = credentials["sessionAccessKeyID"] ?? ""
        sessionSecretAccessKey = credentials["sessionSecretAccessKey"] ?? ""
        sessionToken = credentials["sessionToken"] ?? ""
        self.process = Mutex(process)
        self.folder = folder
        self.logFile = logFile
    }

    /// Starts a server, makes `buckets` and uploads `objects` (authenticated), and returns once
    /// authentication is on.
    public static func start(buckets: [String], objects: [Object]) async throws -> MotoS3Server {
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw MotoS3ServerError("no python at \(python.path): run scripts/install-s3-test-tools.sh (make test does)")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-moto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let port = try freePort()
        let logFile = folder.appendingPathComponent("requests.log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let process = Process()
        process.executableURL = python
        process.arguments = ["-m", "moto.server", "-H", "127.0.0.1", "-p", String(port)]
        var environment = ProcessInfo.processInfo.environment
        // The IAM set-up's five calls go through unauthenticated; every later request is checked.
        environment["INITIAL_NO_AUTH_ACTION_COUNT"] = "5"
        environment["PYTHONUNBUFFERED"] = "1"
        for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"] { environment[name] = nil }
        process.environment = environment
        let log = try FileHandle(forWritingTo: logFile)
        process.standardOutput = log
        process.standardError = log
        try ProcessLaunch.run(process)
        let endpoint = URL(string: "http://127.0.0.1:\(port)")!
        try await PeerProcess.waitForPort(port, of: process, name: "moto", log: logFile)
        // The manifest of buckets and objects for the set-up script.
        var items: [[String: String]] = []
        for (index, object) in objects.enumerated() {
            let file = folder.appendingPathComponent("object-\(index)")
            try object.data.write(to: file)
            var item = ["bucket": object.bucket, "key": object.key, "file": file.path]
            if let type = object.contentType { item["contentType"] = type }
            if let cacheControl = object.cacheControl { item["cacheControl"] = cacheControl }
            items.append(item)
        }
        let manifest = folder.appendingPathComponent("manifest.json")
        try JSONSerialization.data(withJSONObject: ["buckets": buckets, "objects": items]).write(to: manifest)
        // Python and boto3 take a second or more to start: on a thread of its own, not one of
        // the cooperative pool's (one per core), which every other test needs meanwhile.
        let script = fixtureScript.path
        let setupEnvironment = environment
        let output = try await onOwnThread {
            try run(python, [script, "setup", endpoint.absoluteString, manifest.path], environment: setupEnvironment)
        }
        guard let credentials = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: String] else {
            kill(process.processIdentifier, SIGKILL)
            throw MotoS3ServerError("the set-up printed no credentials: \(output)")
        }
        return MotoS3Server(endpoint: endpoint, port: port, credentials: credentials, process: process, folder: folder, logFile: logFile)
    }

    /// The request lines of the log, such as `GET /photos/a.jpg HTTP/1.1" 200`.
    public var requestLines: [String] {
        let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        // werkzeug colours error lines: its escape sequences are dropped.
        let plain = text.replacing(/\x{1B}\[[0-9;]*m/, with: "")
        return plain.split(separator: "\n").compactMap { line in
            guard line.contains("HTTP/1."), let start = line.firstIndex(of: "\"") else { return nil }
            return String(line[line.index(after: start)...])
        }
    }

    /// How many requests `METHOD PATH` (path as sent, query included) reached the server.
    public func count(_ method: String, _ path: String) -> Int {
        requestLines.filter { $0.hasPrefix("\(method) \(path) ") }.count
    }

    /// The statuses the server answered `METHOD PATH` with, in order.
    public func statuses(_ method: String, _ path: String) -> [Int] {
        requestLines.filter { $0.hasPrefix("\(method) \(path) ") }.compactMap { line in
            line.split(separator: "\"").last?.split(separator: " ").first.flatMap { Int($0) }
        }
    }

    /// Stops the server and removes its folder.
    public func stop() {
        // moto's server does not end on SIGTERM; its state is in memory, so it is killed.
        PeerProcess.stop(process, folder: folder)
    }

    deinit { stop() }

    /// Runs the fixture script's `sign` command: botocore's canonical request, string to sign
    /// and signature for each case.
    public static func botocoreSignatures(_ cases: [[String: Any]]) throws -> [[String: String]] {
        let input = try JSONSerialization.data(withJSONObject: cases)
        let output = try run(python, [fixtureScript.path, "sign"], input: input)
        guard let results = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: String]] else {
            throw MotoS3ServerError("botocore printed no signatures: \(output)")
        }
        return results
    }

    /// Runs `body` on a new thread and waits for it without holding a thread of the pool.
    static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Runs a program to its end and returns its standard output.
    static func run(_ program: URL, _ arguments: [String], input: Data? = nil, environment: [String: String]? = nil) throws -> String {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let stdin = Pipe()
        process.standardInput = stdin
        try ProcessLaunch.run(process)
        if let input { stdin.fileHandleForWriting.write(input) }
        try? stdin.fileHandleForWriting.close()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw MotoS3ServerError("\(program.lastPathComponent) \(arguments.joined(separator: " ")) failed: "
                                    + String(decoding: errors.suffix(3000), as: UTF8.self))
        }
        return String(decoding: output, as: UTF8.self)
    }

    public static func freePort() throws -> Int { try LoopbackPort.free() }

    static func accepts(port: Int) -> Bool { LoopbackPort.accepts(port) }
}

/// Why the moto server could not be used.
public struct MotoS3ServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

import Foundation

/// The `alcedo` executable every process-level test runs: one place that finds it.
///
/// `make test` names the release `alcedo` in `ALCEDO_TEST_BINARY`: the binary `make install`
/// installs (static Swift runtime, no full Foundation or ICU), so the tests run what users
/// run. Another binary can be named the same way, such as an installed one:
/// `ALCEDO_TEST_BINARY=/usr/local/bin/alcedo swift test --skip-build`. Without it, the
/// debug `alcedo` next to the tests is run, and the linkage test fails.
public enum AlcedoBinary {
    /// The environment variable naming the binary under test.
    public static let environmentVariable = "ALCEDO_TEST_BINARY"

    /// The binary under test: `ALCEDO_TEST_BINARY` when set, else the `alcedo` in the build
    /// folder of the running tests (found next to the test bundle, walking up from it).
    public static let url: URL = {
        if let named = ProcessInfo.processInfo.environment[environmentVariable], !named.isEmpty {
            return URL(fileURLWithPath: named)
        }
        var starts: [URL] = []
        if let running = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            starts.append(URL(fileURLWithPath: running).deletingLastPathComponent())
        }
        starts.append(URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent())
        for start in starts {
            var folder = start
            while folder.path != "/" {
                let candidate = folder.appendingPathComponent("alcedo")
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                   FileManager.default.isExecutableFile(atPath: candidate.path) {
                    return candidate
                }
                folder = folder.deletingLastPathComponent()
            }
        }
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return packageRoot.appendingPathComponent(".build/debug/alcedo")
    }()

    /// `true` when the binary exists and can be run.
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: url.path) }

    /// What is wrong with the binary's linkage for a shipped `alcedo`, or `nil` when nothing is:
    /// it must not load the Swift runtime or Foundation as shared libraries (the installed
    /// binary links them in), and must hold neither ICU's data table nor CoreFoundation (the
    /// installed binary has neither: code that needs them behaves differently there).
    public static func linkageProblem(of binary: URL = url) throws -> String? {
        let bytes = try Data(contentsOf: binary, options: .alwaysMapped)
        var problems: [String] = []
        for library in ["libswiftCore.so", "libFoundation.so", "libFoundationEssentials.so", "lib_FoundationICU.so"] {
            // A DT_NEEDED entry is the library's name followed by a NUL in the dynamic string table.
            if bytes.range(of: Data(library.utf8) + Data([0])) != nil { problems.append("needs the shared \(library)") }
        }
        // ICU's data table names its items "icudt<version>l/…"; CoreFoundation's symbols and
        // messages name CFString functions.
        if bytes.range(of: Data("icudt".utf8)) != nil { problems.append("holds ICU's data table") }
        if bytes.range(of: Data("CFStringCreateWithCString".utf8)) != nil { problems.append("holds CoreFoundation") }
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }

    /// Runs `executable` (default: the binary under test) with `arguments` to its end, in
    /// `folder` when one is given, with `environment` added to this process's and no input.
    public static func run(_ arguments: [String], executable: URL = url, in folder: URL? = nil,
                           environment: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let folder { process.currentDirectoryURL = folder }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try ProcessLaunch.run(process)
        // Standard error is read on its own thread, so a child that fills it cannot block.
        let errors = ErrorCollector(err.fileHandleForReading)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: errors.wait(), as: UTF8.self))
    }

    /// ``run(_:executable:in:environment:)`` on a thread of its own, so that an async test
    /// waits for the child without holding a thread of the cooperative pool (two on a
    /// two-core machine: a blocked one stalls every other test).
    public static func runDetached(_ arguments: [String], executable: URL = url, in folder: URL? = nil,
                                   environment: [String: String] = [:]) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try run(arguments, executable: executable, in: folder, environment: environment) })
            }.start()
        }
    }

    /// Reads a pipe to its end on a thread of its own.
    private final class ErrorCollector: @unchecked Sendable {
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)

        init(_ handle: FileHandle) {
            Thread { [self] in
                data = handle.readDataToEndOfFile()
                done.signal()
            }.start()
        }

        func wait() -> Data {
            done.wait()
            return data
        }
    }
}

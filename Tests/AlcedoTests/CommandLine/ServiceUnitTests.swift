import AlcedoTestSupport
import Foundation
import Testing
@testable import Alcedo

/// contrib/systemd: the service unit and its environment file.
@Suite("systemd service unit")
struct ServiceUnitTests {
    static let folder = SelfContainedBinaryTests.packageRoot.appendingPathComponent("contrib/systemd")

    /// Runs a command and returns its status and its standard output and error together.
    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try ProcessLaunch.run(process)
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    /// The unit with its ExecStart pointing at this build's binary (the installed path does
    /// not exist on a build machine), written to `dir`.
    static func unitForThisBuild(in dir: TemporaryDirectory) throws -> URL {
        let text = try String(contentsOf: folder.appendingPathComponent("alcedo.service"), encoding: .utf8)
            .replacingOccurrences(of: "/usr/local/bin/alcedo", with: AlcedoProcess.executable.path)
        let url = dir.url.appendingPathComponent("alcedo.service")
        try Data(text.utf8).write(to: url)
        return url
    }

    @Test("systemd-analyze verify accepts the unit with no warning")
    func verifies() throws {
        let dir = try TemporaryDirectory()
        let unit = try Self.unitForThisBuild(in: dir)
        // The man page named by Documentation= is installed by make install, not on a build machine.
        let result = try Self.run("/usr/bin/systemd-analyze", ["verify", "--man=no", unit.path])
        #expect(result.status == 0, "\(result.output)")
        #expect(!result.output.contains("alcedo.service"), "\(result.output)")
    }

    @Test("systemd-analyze security rates the unit's exposure OK (at most 2.0 of 10)")
    func hardened() throws {
        let dir = try TemporaryDirectory()
        let unit = try Self.unitForThisBuild(in: dir)
        let result = try Self.run("/usr/bin/systemd-analyze", ["security", "--offline=yes", "--no-pager", unit.path])
        let line = try #require(result.output.split(separator: "\n").first { $0.contains("Overall exposure level") }, "\(result.output)")
        let words = line.split(separator: " ")
        let level = try #require(words.compactMap { Double($0) }.first, "\(line)")
        #expect(level <= 2.0, "\(line)")
        let text = try String(contentsOf: Self.folder.appendingPathComponent("alcedo.service"), encoding: .utf8)
        for setting in ["DynamicUser=yes", "ProtectSystem=strict", "PrivateTmp=yes", "NoNewPrivileges=yes",
                        "CacheDirectory=alcedo", "StateDirectory=alcedo", "Restart=on-failure", "MemoryMax=",
                        "EnvironmentFile=-/etc/alcedo/alcedo.env", "--cache-dir ${CACHE_DIRECTORY}"] {
            #expect(text.contains(setting), "\(setting) missing")
        }
    }

    @Test("every ALCEDO_ variable the environment file names is a flag of alcedo serve")
    func environmentFileNamesRealSettings() async throws {
        let text = try String(contentsOf: Self.folder.appendingPathComponent("alcedo.env"), encoding: .utf8)
        let help = try await AlcedoProcess.runDetached(["serve", "--help"], timeout: .seconds(30))
        #expect(help.status == 0)
        var names: [String] = []
        for line in text.split(separator: "\n") {
            let setting = line.hasPrefix("#") ? line.dropFirst() : line[...]
            guard setting.hasPrefix("ALCEDO_"), let equals = setting.firstIndex(of: "=") else { continue }
            names.append(String(setting[setting.index(setting.startIndex, offsetBy: 7)..<equals]))
        }
        #expect(names.count >= 6, "\(names)")
        for name in names {
            let flag = "--" + name.lowercased().replacingOccurrences(of: "_", with: "-")
            #expect(help.stdout.contains(flag), "ALCEDO_\(name): no \(flag) in alcedo serve --help")
        }
    }

    /// `true` when this machine runs a systemd user manager that `systemd-run --user` can reach
    /// (not in a container without systemd as its init, as on CI).
    static let userManagerRunning: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-run"),
              let result = try? run("/usr/bin/systemctl", ["--user", "is-system-running"]) else { return false }
        return ["running", "degraded"].contains(result.output.trimmingCharacters(in: .whitespacesAndNewlines))
    }()

    @Test("started with systemd-run --user, it answers /health (only where a systemd user manager runs)",
          .enabled(if: userManagerRunning, "no systemd user manager on this machine"))
    func startsUnderSystemd() async throws {
        let dir = try TemporaryDirectory()
        let unitName = "alcedo-test-\(getpid())"
        let port = 20000 + Int(getpid() % 20000)
        let start = try Self.run("/usr/bin/systemd-run", [
            "--user", "--unit", unitName, "-p", "MemoryMax=512M", "-p", "NoNewPrivileges=yes", "-p", "PrivateTmp=yes",
            AlcedoProcess.executable.path, "serve", "--port", String(port), "--cache-dir", dir.url.appendingPathComponent("cache").path,
        ])
        #expect(start.status == 0, "\(start.output)")
        defer { _ = try? Self.run("/usr/bin/systemctl", ["--user", "stop", unitName]) }
        var healthy = false
        let deadline = ContinuousClock.now + .seconds(300)
        while !healthy, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            let curl = try Self.run("/usr/bin/curl", ["-fsS", "http://127.0.0.1:\(port)/health"])
            healthy = curl.status == 0
        }
        #expect(healthy)
    }
}

import AlcedoTestSupport
import Foundation
import Testing
@testable import Alcedo

/// `make install` and `make uninstall` (scripts/install.sh) into a temporary prefix, with the
/// binary of this build.
@Suite("make install and uninstall")
struct InstallTests {
    static let script = SelfContainedBinaryTests.packageRoot.appendingPathComponent("scripts/install.sh")

    /// Runs scripts/install.sh with `arguments`; the man page tool is the one `make test` builds
    /// next to `alcedo`.
    static func install(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try ServiceUnitTests.run("/bin/bash", [script.path] + arguments)
    }

    static func files(under root: URL) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: root.path)
        var paths: [String] = []
        while let path = enumerator?.nextObject() as? String { paths.append(path) }
        return paths.sorted()
    }

    @Test("install writes the stripped binary, completions for bash, zsh and fish and a man page; the installed binary runs the demo; uninstall leaves the prefix as it was")
    func installAndUninstall() async throws {
        let dir = try TemporaryDirectory()
        let prefix = dir.url.appendingPathComponent("prefix")
        // A prefix already in use: its own files and folders must survive uninstall.
        try FileManager.default.createDirectory(at: prefix.appendingPathComponent("share/man/man1"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: prefix.appendingPathComponent("bin"), withIntermediateDirectories: true)
        try Data("#!/bin/sh\n".utf8).write(to: prefix.appendingPathComponent("bin/other"))
        let before = Self.files(under: prefix)

        let binary = AlcedoProcess.executable
        let manualTool = binary.deletingLastPathComponent().appendingPathComponent("generate-manual")
        try #require(FileManager.default.isExecutableFile(atPath: manualTool.path),
                     "generate-manual is not built next to alcedo (make test builds it)")
        let installed = try Self.install(["install", "--prefix", prefix.path, "--bin", binary.path, "--manual-tool", manualTool.path])
        #expect(installed.status == 0, "\(installed.output)")

        let expected = ["bin/alcedo", "share/man/man1/alcedo.1", "share/bash-completion/completions/alcedo",
                        "share/zsh/site-functions/_alcedo", "share/fish/vendor_completions.d/alcedo.fish"]
        for file in expected {
            let attributes = try? FileManager.default.attributesOfItem(atPath: prefix.appendingPathComponent(file).path)
            #expect(((attributes?[.size] as? Int) ?? 0) > 0, "\(file) missing or empty")
        }
        let man = try String(contentsOf: prefix.appendingPathComponent("share/man/man1/alcedo.1"), encoding: .utf8)
        #expect(man.contains(".Dt ALCEDO 1") && man.contains("serve"), "\(man.prefix(300))")
        let bash = try String(contentsOf: prefix.appendingPathComponent("share/bash-completion/completions/alcedo"), encoding: .utf8)
        #expect(bash.contains("complete") && bash.contains("serve"))
        // Stripped: smaller than the build's binary, and without a symbol table.
        let installedSize = try FileManager.default.attributesOfItem(atPath: prefix.appendingPathComponent("bin/alcedo").path)[.size] as? Int ?? 0
        let builtSize = try FileManager.default.attributesOfItem(atPath: binary.path)[.size] as? Int ?? 0
        #expect(installedSize < builtSize, "\(installedSize) vs \(builtSize)")

        // The installed binary works from its own folder, far from the build.
        let run = try await AlcedoProcess.runDetached(
            ["demo", "--out", dir.url.appendingPathComponent("out").path],
            environment: ["XDG_CACHE_HOME": dir.url.appendingPathComponent("xdg").path, "ALCEDO_SAMPLES": ""],
            timeout: .seconds(120), executable: prefix.appendingPathComponent("bin/alcedo"))
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")

        let removed = try Self.install(["uninstall", "--prefix", prefix.path])
        #expect(removed.status == 0, "\(removed.output)")
        #expect(Self.files(under: prefix) == before, "left behind: \(Set(Self.files(under: prefix)).subtracting(before))")
    }
}

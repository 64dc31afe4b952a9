import Foundation
import Testing
@testable import Alcedo
#if canImport(Glibc)
import Glibc
#endif

/// `alcedo fetch` and `prefetch` against hostile names, huge `data:` URLs, unusable cache
/// folders and large batches, run as a process.
@Suite("alcedo fetch hardening, run as a process", .serialized)
struct FetchHardeningCommandTests {
    static let jpeg = FetchCommandTests.jpeg

    /// As ``FetchCommandTests/run(_:in:input:timeout:)``, waiting on a thread of its own.
    static func run(_ arguments: [String], in dir: TemporaryDirectory) async throws -> AlcedoProcess.Result {
        try await AlcedoProcess.runDetached(arguments, environment: ["XDG_CACHE_HOME": dir.url.appendingPathComponent("xdg").path])
    }

    @Test("no written file name starts with -, whatever the URL's last component")
    func outputNamesNeverStartWithADash() async throws {
        let dir = try TemporaryDirectory()
        let out = dir.url.appendingPathComponent("out")
        let sources = ["-rf.jpg", "--help.jpg", "-.jpg", "_-x.jpg", "-_-n.jpg"].map { dir.url.appendingPathComponent($0) }
        for source in sources { try FileManager.default.copyItem(at: Self.jpeg, to: source) }
        let result = try await Self.run(["fetch", "--out", out.path, "--json", "--"] + sources.map(\.path), in: dir)
        #expect(result.status == 0, "\(result.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: out.path)
        #expect(names.count == sources.count)
        for name in names { #expect(!name.hasPrefix("-") && !name.hasPrefix("."), "\(name)") }
        #expect(names.contains { $0.hasPrefix("rf-") } && names.contains { $0.hasPrefix("help-") })
    }

    @Test("a data: URL over the body limit fails before decoding, and the report shows a truncated URL")
    func hugeDataURLIsRefused() async throws {
        let dir = try TemporaryDirectory()
        // 44 MiB of base64: 33 MiB of bytes, over the 32 MiB body limit.
        // Written as bytes, without a 44 MiB String and its copies in the test process.
        let prefix = "data:image/png;base64,"
        let dataURLLength = prefix.utf8.count + 4 * (11 << 20)
        var line = Data(prefix.utf8)
        line.append(Data(repeating: UInt8(ascii: "A"), count: 4 * (11 << 20)))
        line.append(UInt8(ascii: "\n"))
        let list = dir.url.appendingPathComponent("list.txt")
        try line.write(to: list)
        let result = try await Self.run(["prefetch", "--from", list.path, "--json",
                                                "--cache-dir", dir.url.appendingPathComponent("cache").path], in: dir)
        #expect(result.status == 1)
        let objects = try InfoAndConvertCommandTests.jsonLines(result.stdout)
        try #require(objects.count == 1)
        let error = try #require(objects[0]["error"] as? String)
        #expect(error.contains("over the limit of \(32 << 20) bytes"), "\(error)")
        let shown = try #require(objects[0]["url"] as? String)
        #expect(shown.utf8.count < 400 && shown.hasPrefix("data:image/png;base64,AAAA"), "\(shown.prefix(300))")
        #expect(shown.hasSuffix("(\(dataURLLength) bytes)"))
        #expect(result.stdout.utf8.count < 2_000, "the report echoes the whole URL")
    }

    @Test("a data: URL under the limit still works, with its report URL shortened when long")
    func longDataURLUnderTheLimitWorks() async throws {
        let dir = try TemporaryDirectory()
        let dataURL = "data:image/jpeg;base64," + (try Data(contentsOf: Self.jpeg)).base64EncodedString()
        let result = try await Self.run(["fetch", dataURL, "--out", dir.url.path, "--json"], in: dir)
        #expect(result.status == 0, "\(result.stderr)")
        let objects = try FetchCommandTests.reports(result.stdout)
        try #require(objects.count == 1)
        #expect(objects[0]["error"] is NSNull)
        #expect((objects[0]["url"] as? String)?.hasSuffix("(\(dataURL.utf8.count) bytes)") == true)
    }

    @Test("--cache-dir on a regular file or a dangling symbolic link: one warning on stderr, results still written, exit 0",
          arguments: ["file", "dangling"])
    func unusableCacheFolderWarnsOnce(kind: String) async throws {
        let dir = try TemporaryDirectory()
        let cachePath = dir.url.appendingPathComponent("cache-\(kind)")
        if kind == "file" {
            try Data("a file".utf8).write(to: cachePath)
        } else {
            try FileManager.default.createSymbolicLink(atPath: cachePath.path, withDestinationPath: dir.url.appendingPathComponent("nowhere/at/all").path)
        }
        let copies = (0..<3).map { dir.url.appendingPathComponent("copy\($0).jpg") }
        for copy in copies { try FileManager.default.copyItem(at: Self.jpeg, to: copy) }
        let result = try await Self.run(["fetch", "--cache-dir", cachePath.path, "--out", dir.url.appendingPathComponent("out").path,
                                                "--json"] + copies.map(\.path), in: dir)
        #expect(result.status == 0, "\(result.stderr)")
        let objects = try FetchCommandTests.reports(result.stdout)
        #expect(objects.count == 3 && objects.allSatisfy { $0["error"] is NSNull })
        let warnings = result.stderr.split(separator: "\n").filter { $0.contains("warning") }
        #expect(warnings.count == 1, "\(result.stderr)")
        #expect(warnings.first?.contains(cachePath.path) == true)
        #expect(warnings.first?.contains("without the disk cache") == true)
        // Nothing was made in place of the file or through the link.
        if kind == "file" { #expect(try Data(contentsOf: cachePath) == Data("a file".utf8)) }
        #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("nowhere").path))
    }

    @Test("--memory-limit bounds the memory cache: a result larger than the limit is not kept, a repeated URL comes from disk")
    func memoryLimitBoundsTheMemoryCache() async throws {
        let dir = try TemporaryDirectory()
        // 1024x1024 decoded is 4 MiB: over a 1 MiB limit, under the default.
        let big = dir.url.appendingPathComponent("big.png")
        let image = AlcedoImage(width: 1024, height: 1024, pixels: [UInt8](repeating: 200, count: 1024 * 1024 * 4))
        try ImageCodecRegistry.shared.encode(image, as: .png).write(to: big)
        let cache = dir.url.appendingPathComponent("cache").path
        let limited = try await Self.run(["fetch", big.path, big.path, "--memory-limit", "1", "--concurrency", "1",
                                                 "--cache-dir", cache, "--out", dir.url.appendingPathComponent("a").path, "--json"], in: dir)
        #expect(limited.status == 0, "\(limited.stderr)")
        #expect(try FetchCommandTests.reports(limited.stdout).map { $0["cacheType"] as? String } == ["none", "disk"])
        let unlimited = try await Self.run(["fetch", big.path, big.path, "--concurrency", "1",
                                                   "--cache-dir", cache, "--out", dir.url.appendingPathComponent("b").path, "--json"], in: dir)
        #expect(unlimited.status == 0, "\(unlimited.stderr)")
        #expect(try FetchCommandTests.reports(unlimited.stdout).map { $0["cacheType"] as? String } == ["disk", "memory"])
        let invalid = try await Self.run(["fetch", big.path, "--memory-limit", "0"], in: dir)
        #expect(invalid.status != 0 && invalid.stderr.contains("--memory-limit"))
    }
}

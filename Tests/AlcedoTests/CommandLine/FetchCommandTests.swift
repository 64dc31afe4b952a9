import Foundation
import Testing
@testable import Alcedo

/// `alcedo fetch` on local files and `data:` URLs, run as a process.
@Suite("alcedo fetch, run as a process")
struct FetchCommandTests {
    static let jsonKeys: Set<String> = ["url", "cacheType", "width", "height", "bytes", "ms", "file", "error"]

    /// The JSON lines of `text`, each checked to have exactly the documented keys.
    static func reports(_ text: String) throws -> [[String: Any]] {
        let objects = try InfoAndConvertCommandTests.jsonLines(text)
        for object in objects { #expect(Set(object.keys) == jsonKeys, "\(object)") }
        return objects
    }

    static let jpeg = Fixtures.url("libjpeg-turbo/testorig.jpg")  // 227x149

    /// Runs `alcedo` with its default cache folder inside `dir`, never the user's.
    static func run(_ arguments: [String], in dir: TemporaryDirectory, input: Data? = nil,
                    timeout: Duration? = nil) async throws -> AlcedoProcess.Result {
        try await AlcedoProcess.runDetached(arguments, environment: ["XDG_CACHE_HOME": dir.url.appendingPathComponent("xdg").path],
                              input: input, timeout: timeout)
    }

    @Test("--json: one object per URL in the order given, file, file: and data: URLs, files written as reported; a repeated file is a memory hit")
    func jsonLinesForLocalSources() async throws {
        let dir = try TemporaryDirectory()
        let out = dir.url.appendingPathComponent("out")
        let dataURL = "data:image/jpeg;base64," + (try Data(contentsOf: Self.jpeg)).base64EncodedString()
        let result = try await Self.run(["fetch", Self.jpeg.path, Self.jpeg.absoluteString, dataURL,
                                   "--out", out.path, "--json", "--concurrency", "1"], in: dir)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.crashed)
        let objects = try Self.reports(result.stdout)
        try #require(objects.count == 3)
        // A long URL (the data: URL here) is shown shortened: its start and its length.
        let shortened: String = String(dataURL.prefix(200)) + "… (\(dataURL.utf8.count) bytes)"
        let urls: [String?] = objects.map { $0["url"] as? String }
        #expect(urls == [Self.jpeg.path, Self.jpeg.absoluteString, shortened])
        // A path and its file: URL share a cache key.
        #expect(objects.map { $0["cacheType"] as? String } == ["none", "memory", "none"])
        for object in objects {
            #expect(object["error"] is NSNull)
            #expect(object["width"] as? Int == 227)
            #expect(object["height"] as? Int == 149)
            #expect((object["ms"] as? Double).map { $0 >= 0 } == true)
            let file = try #require(object["file"] as? String)
            #expect(URL(fileURLWithPath: file).deletingLastPathComponent().standardizedFileURL.path == out.standardizedFileURL.path)
            let written = try Data(contentsOf: URL(fileURLWithPath: file))
            #expect(object["bytes"] as? Int == written.count)
            #expect(try ImageCodecRegistry.shared.decode(written).pixelSize == PixelSize(width: 227, height: 149))
        }
        let files = Set(objects.compactMap { $0["file"] as? String }.map { URL(fileURLWithPath: $0).lastPathComponent })
        #expect(files.count == 3, "distinct URLs get distinct files: \(files)")
        #expect(files.contains { $0.hasPrefix("testorig-") && $0.hasSuffix(".jpg") })
        #expect(files.contains { $0.hasPrefix("data-") && $0.hasSuffix(".jpg") })
    }

    @Test("failures: exit 1, the error in the URL's line with nulls, the good URL still written")
    func failuresInJSON() async throws {
        let dir = try TemporaryDirectory()
        let notImage = dir.url.appendingPathComponent("notes.jpg")
        try Data("just some text, not an image".utf8).write(to: notImage)
        let corrupt = dir.url.appendingPathComponent("cut.jpg")
        try Data(contentsOf: Self.jpeg).prefix(2000).write(to: corrupt)
        let arguments = [notImage.path, corrupt.path, dir.url.appendingPathComponent("missing.jpg").path,
                         "ftp://example.com/a.jpg", "http://", "data:image/png;base64,@@@@", Self.jpeg.path]
        let result = try await Self.run(["fetch"] + arguments + ["--out", dir.url.appendingPathComponent("out").path, "--json"], in: dir)
        #expect(result.status == 1)
        #expect(!result.crashed)
        let objects = try Self.reports(result.stdout)
        try #require(objects.count == arguments.count)
        let expected = ["not an image", "truncated", "no file at", "unsupported scheme", "no host", "base64"]
        for (object, phrase) in zip(objects, expected) {
            let error = try #require(object["error"] as? String, "\(object)")
            #expect(error.contains(phrase), "\(error)")
            for key in ["cacheType", "width", "height", "bytes", "file"] { #expect(object[key] is NSNull, "\(key): \(object)") }
        }
        #expect(objects.last?["error"] is NSNull)
        #expect(objects.last?["width"] as? Int == 227)
    }

    @Test("an output folder that cannot be written: every URL fails with the system's reason, nothing crashes")
    func unwritableOutputFolder() async throws {
        let dir = try TemporaryDirectory()
        let file = dir.url.appendingPathComponent("plain-file")
        try Data("x".utf8).write(to: file)
        // A folder below a regular file can be neither made nor written, even by root.
        let result = try await Self.run(["fetch", Self.jpeg.path, "--out", file.appendingPathComponent("out").path, "--json"], in: dir)
        #expect(result.status == 1)
        #expect(!result.crashed)
        let objects = try Self.reports(result.stdout)
        try #require(objects.count == 1)
        let error = try #require(objects[0]["error"] as? String)
        #expect(error.contains("Not a directory"), "\(error)")
        #expect(objects[0]["file"] is NSNull)
    }

    @Test("processors: downsample, resize exact, fit and fill, round corner and blur give the documented sizes")
    func processorSizes() async throws {
        let dir = try TemporaryDirectory()
        let cases: [([String], PixelSize)] = [
            (["--downsample", "100x100"], PixelSize(width: 100, height: 66)),
            (["--resize", "100x50"], PixelSize(width: 100, height: 50)),
            (["--resize", "100x100:fit"], PixelSize(width: 100, height: 66)),
            (["--resize", "100x100:fill"], PixelSize(width: 152, height: 100)),
            (["--blur", "2", "--round-corner", "8", "--downsample", "60x60"], PixelSize(width: 60, height: 39)),
        ]
        for (options, size) in cases {
            let result = try await Self.run(["fetch", Self.jpeg.path, "--out", dir.url.path, "--json", "--format", "png"] + options, in: dir)
            #expect(result.status == 0, "\(options): \(result.stderr)")
            let object = try #require(try Self.reports(result.stdout).first)
            #expect(object["width"] as? Int == size.width, "\(options)")
            #expect(object["height"] as? Int == size.height, "\(options)")
            let file = try #require(object["file"] as? String)
            #expect(file.hasSuffix(".png"))
        }
    }

    @Test("without --format a JPEG keeps its format, unless round corners made it transparent: then PNG")
    func defaultFormat() async throws {
        let dir = try TemporaryDirectory()
        let result = try await Self.run(["fetch", Self.jpeg.path, "--out", dir.url.appendingPathComponent("plain").path, "--json"], in: dir)
        #expect((try Self.reports(result.stdout).first?["file"] as? String)?.hasSuffix(".jpg") == true)
        let rounded = try await Self.run(["fetch", Self.jpeg.path, "--round-corner", "20", "--out", dir.url.appendingPathComponent("round").path, "--json"], in: dir)
        let file = try #require(try Self.reports(rounded.stdout).first?["file"] as? String)
        #expect(file.hasSuffix(".png"))
        let image = try ImageCodecRegistry.shared.decode(Data(contentsOf: URL(fileURLWithPath: file)))
        #expect(image.pixel(x: 0, y: 0).alpha == 0, "the corner is transparent")
    }

    @Test("text output: one line per URL on stdout, failures on stderr, no progress bar when not a terminal")
    func textOutput() async throws {
        let dir = try TemporaryDirectory()
        let result = try await Self.run(["fetch", Self.jpeg.path, dir.url.appendingPathComponent("none.jpg").path,
                                   "--out", dir.url.path, "--format", "webp"], in: dir)
        #expect(result.status == 1)
        let lines = result.stdout.split(separator: "\n")
        try #require(lines.count == 1, "\(result.stdout)")
        #expect(lines[0].hasPrefix(Self.jpeg.path + ": none, 227x149, "))
        #expect(lines[0].hasSuffix(".webp"))
        #expect(!result.stderr.contains("\u{1B}"), "no terminal escapes when stderr is a pipe")
        #expect(result.stderr.contains("none.jpg"))
        #expect(result.stderr.contains("fetched 1 of 2, 1 failed"))
    }

    @Test("file names come from the URL, sanitised, and stay inside the output folder")
    func hostileNames() async throws {
        let dir = try TemporaryDirectory()
        let out = dir.url.appendingPathComponent("out")
        let inner = dir.url.appendingPathComponent("a b")
        try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
        let odd = inner.appendingPathComponent("..%2F..%2Fevil name.jpg")
        try FileManager.default.copyItem(at: Self.jpeg, to: odd)
        let result = try await Self.run(["fetch", odd.path, "--out", out.path, "--json"], in: dir)
        #expect(result.status == 0, "\(result.stderr)")
        let file = try #require(try Self.reports(result.stdout).first?["file"] as? String)
        let name = URL(fileURLWithPath: file).lastPathComponent
        #expect(name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }, "\(name)")
        #expect(!name.hasPrefix("."))
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path) == [name])
    }

    @Test("argument errors exit as ArgumentParser does, before anything is fetched",
          arguments: [["--quality", "0"], ["--concurrency", "0"], ["--format", "psd"], ["--resize", "10x10:crop"],
                      ["--downsample", "0x5"], ["--force-refresh", "--only-from-cache"], ["--memory-only", "--cache-dir", "/tmp"]])
    func argumentErrors(options: [String]) async throws {
        let dir = try TemporaryDirectory()
        let result = try await Self.run(["fetch", Self.jpeg.path, "--out", dir.url.path] + options, in: dir)
        #expect(result.status == 64, "\(options): \(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty)
    }
}

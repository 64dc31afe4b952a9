import AlcedoTestSupport
import Foundation
import Testing
@testable import Alcedo

/// The `alcedo` executable copied alone into an empty folder, as `make install` or a container
/// image puts it: it must need no file beside it.
@Suite("alcedo, copied alone into an empty folder")
struct SelfContainedBinaryTests {
    /// The package checkout holding this file.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A copy of the built executable in a fresh folder with nothing else in it.
    static func isolatedCopy(in dir: TemporaryDirectory) throws -> URL {
        let bin = dir.url.appendingPathComponent("bin", isDirectory: true)
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let copy = bin.appendingPathComponent("alcedo")
        try FileManager.default.copyItem(at: AlcedoProcess.executable, to: copy)
        return copy
    }

    @Test("the compiled-in samples are exactly the files of Sources/alcedo/Demo/Samples (run scripts/embed-samples.py after changing one)")
    func embeddedSamplesMatchTheFolder() throws {
        let samples = Self.packageRoot.appendingPathComponent("Sources/alcedo/Demo/Samples")
        let source = try String(contentsOf: Self.packageRoot.appendingPathComponent("Sources/alcedo/Demo/EmbeddedSamples.swift"),
                                encoding: .utf8)
        var embedded: [String: String] = [:]
        for line in source.split(separator: "\n") {
            let parts = line.split(separator: "\"")
            // ("name", "base64"),
            guard parts.count == 5, line.trimmingCharacters(in: .whitespaces).hasPrefix("(\"") else { continue }
            embedded[String(parts[1])] = String(parts[3])
        }
        let images = try FileManager.default.contentsOfDirectory(atPath: samples.path)
            .filter { ["jpg", "png", "gif", "webp"].contains(($0 as NSString).pathExtension) }
        #expect(images.count >= 5, "\(images)")
        #expect(Set(embedded.keys) == Set(images), "embedded \(embedded.keys.sorted()) vs folder \(images.sorted())")
        for name in images {
            let bytes = try Data(contentsOf: samples.appendingPathComponent(name))
            #expect(embedded[name] == bytes.base64EncodedString(), "\(name) differs: run scripts/embed-samples.py")
        }
    }

    @Test("--version names the release and every codec library with its version")
    func versionListsLibraries() async throws {
        let dir = try TemporaryDirectory()
        let result = try await AlcedoProcess.runDetached(["--version"], timeout: .seconds(30), executable: Self.isolatedCopy(in: dir))
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("alcedo ") == true, "\(result.stdout)")
        for library in CodecLibrary.all {
            #expect(lines.contains { $0.contains("\(library.name) \(library.version)") }, "\(library.name) missing in\n\(result.stdout)")
            #expect(library.version.first?.isNumber == true, "\(library)")
        }
    }

    @Test("demo runs from the copy, with no samples folder or resource bundle anywhere near it")
    func demoRunsFromACopy() async throws {
        let dir = try TemporaryDirectory()
        let out = dir.url.appendingPathComponent("out")
        let result = try await AlcedoProcess.runDetached(
            ["demo", "--out", out.path], environment: ["XDG_CACHE_HOME": dir.url.appendingPathComponent("xdg").path, "ALCEDO_SAMPLES": ""],
            timeout: .seconds(120), executable: Self.isolatedCopy(in: dir))
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(!result.stderr.contains("cannot find"), "\(result.stderr)")
        let sheet = try ImageCodecRegistry.shared.decode(Data(contentsOf: out.appendingPathComponent("contact-sheet.png")))
        #expect(sheet.width > 0)
    }

    @Test("serve --samples starts from the copy and prints an example URL that answers with an image")
    func serveSamplesRunsFromACopy() async throws {
        let dir = try TemporaryDirectory()
        let process = Process()
        process.executableURL = try Self.isolatedCopy(in: dir)
        process.arguments = ["serve", "--samples", "--port", "0", "--cache-dir", dir.url.appendingPathComponent("cache").path]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try ProcessLaunch.run(process)
        defer { if process.isRunning { process.terminate() }; process.waitUntilExit() }
        let example = try await Self.exampleURL(from: err.fileHandleForReading, process: process)
        let url = try #require(URL(string: example))
        // The downloader fails on any status but 2xx, and on a body that is not an image.
        let data = try await ImageDownloader(name: "self-contained-test").downloadData(with: url).data
        let image = try ImageCodecRegistry.shared.decode(data)
        #expect(image.width == 300 && image.height == 200, "\(image.pixelSize)")
    }

    /// Reads the child's standard error until its `example: curl … 'URL'` line (at most 60 s).
    static func exampleURL(from handle: FileHandle, process: Process) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                var text = ""
                let deadline = Date().addingTimeInterval(60)
                while Date() < deadline {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    text += String(decoding: chunk, as: UTF8.self)
                    if let line = text.split(separator: "\n").first(where: { $0.contains("example: ") }),
                       let start = line.range(of: "'http"), let end = line.range(of: "'", options: .backwards), end.lowerBound > start.lowerBound {
                        continuation.resume(returning: String(line[line.index(after: start.lowerBound)..<end.lowerBound]))
                        return
                    }
                }
                continuation.resume(throwing: CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "no example line in: \(text)"]))
            }.start()
        }
    }
}

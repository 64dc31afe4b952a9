import Foundation
import Testing
@testable import Alcedo

/// `alcedo demo`, run as a process with a time bound, as CI runs it.
@Suite("alcedo demo, run as a process")
struct DemoCommandTests {
    @Test("the demo finishes within its bound, shows memory, disk and 304 runs, and writes a contact sheet that decodes")
    func demo() async throws {
        let dir = try TemporaryDirectory()
        let out = dir.url.appendingPathComponent("demo")
        let result = try await FetchCommandTests.run(["demo", "--out", out.path], in: dir, timeout: .seconds(120))
        #expect(!result.timedOut, "the demo ran past its bound")
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(!result.crashed)

        // Every run is in the tables: downloads, memory hits, disk hits, and 304s.
        for word in ["none", "memory", "disk", "disk, 304", "answered 304 Not Modified", "nothing left the machine"] {
            #expect(result.stdout.contains(word), "missing \"\(word)\" in\n\(result.stdout)")
        }
        #expect(!result.stdout.contains("failed"), "\(result.stdout)")

        // The contact sheet decodes, and holds one cell per result on a grid wider than one cell.
        let sheet = try ImageCodecRegistry.shared.decode(Data(contentsOf: out.appendingPathComponent("contact-sheet.png")))
        #expect(sheet.sourceFormat == .png)
        #expect(sheet.width > 480 && sheet.height > 180, "\(sheet.pixelSize)")

        // The page shows every result file written next to it.
        let page = try String(contentsOf: out.appendingPathComponent("contact-sheet.html"), encoding: .utf8)
        let files = try FileManager.default.contentsOfDirectory(atPath: out.path)
            .filter { !$0.hasPrefix("contact-sheet") && $0 != "demo-cache" }
        #expect(files.count == 7, "\(files)")
        for file in files {
            #expect(page.contains("src=\"\(file)\""), "\(file) is not on the page")
            #expect((try? ImageCodecRegistry.shared.decode(Data(contentsOf: out.appendingPathComponent(file)))) != nil, "\(file) does not decode")
        }
    }

    @Test("a demo port in use fails with one line, not a crash")
    func portInUse() async throws {
        let server = try await TestHTTPServer.start()
        defer { server.stop() }
        let dir = try TemporaryDirectory()
        let result = try await FetchCommandTests.run(["demo", "--port", String(server.port), "--out", dir.url.path], in: dir, timeout: .seconds(60))
        #expect(result.status == 1)
        #expect(!result.crashed)
        #expect(result.stderr.contains("cannot start the demo server"), "\(result.stderr)")
    }
}

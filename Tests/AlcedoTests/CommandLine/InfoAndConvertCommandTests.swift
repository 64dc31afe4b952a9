import Foundation
import Testing
@testable import Alcedo

@Suite("alcedo info and convert, run as a process")
struct InfoAndConvertCommandTests {
    static func jsonLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test("info --json prints one object per file with the documented keys")
    func infoJSON() async throws {
        let jpeg = Fixtures.url("libjpeg-turbo/testorig.jpg").path
        let webp = Fixtures.url("webp-generated/animated.webp").path
        let result = try await AlcedoProcess.runDetached(["info", jpeg, webp, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let objects = try Self.jsonLines(result.stdout)
        try #require(objects.count == 2)
        #expect(objects[0]["format"] as? String == "jpeg")
        #expect(objects[0]["width"] as? Int == 227)
        #expect(objects[0]["height"] as? Int == 149)
        #expect(objects[0]["frames"] as? Int == 1)
        #expect(objects[0]["loopCount"] as? Int == 0)
        #expect(objects[1]["format"] as? String == "webp")
        let frames = try #require(objects[1]["frames"] as? Int)
        #expect(frames > 1)
        #expect((objects[1]["durations"] as? [Double])?.count == frames)
    }

    @Test("info on bad input: exit 1, one stderr line per bad file, good files still reported")
    func infoBadInput() async throws {
        let dir = try TemporaryDirectory()
        let text = dir.url.appendingPathComponent("notes.jpg")
        try Data("not an image".utf8).write(to: text)
        let good = Fixtures.url("libjpeg-turbo/testorig.jpg").path
        let result = try await AlcedoProcess.runDetached(["info", text.path, good, dir.url.appendingPathComponent("missing.png").path, "--json"])
        #expect(result.status == 1)
        #expect(!result.crashed)
        let errors = result.stderr.split(separator: "\n")
        #expect(errors.count == 2)
        #expect(errors.first?.contains("notes.jpg") == true)
        #expect(errors.first?.contains("not an image") == true)
        #expect(errors.last?.contains("No such file") == true)
        #expect(try Self.jsonLines(result.stdout).count == 1)
    }

    @Test("info and convert refuse a HEIC grid whose ispe disagrees with its ImageGrid, with the same message")
    func heicGridMismatch() async throws {
        let dir = try TemporaryDirectory()
        let input = Fixtures.url("avif-heif-generated/grid-ispe-mismatch.heic").path
        let info = try await AlcedoProcess.runDetached(["info", input, "--json"])
        let convert = try await AlcedoProcess.runDetached(["convert", input, dir.url.appendingPathComponent("out.png").path])
        for result in [info, convert] {
            #expect(result.status == 1, "\(result.stdout)")
            #expect(!result.crashed)
            #expect(result.stderr.contains("ispe size 128x128 disagrees with its ImageGrid output 120x100"), "\(result.stderr)")
        }
        #expect(info.stdout.isEmpty)
    }

    @Test("convert --downsample fits inside the box, keeps the aspect ratio and never upscales")
    func convertDownsample() async throws {
        let dir = try TemporaryDirectory()
        let input = Fixtures.url("libjpeg-turbo/testorig.jpg").path  // 227x149
        let small = dir.url.appendingPathComponent("small.png").path
        var result = try await AlcedoProcess.runDetached(["convert", input, dir.url.appendingPathComponent("small.jpg").path, "--downsample", "100x100"])
        #expect(result.status == 0, "\(result.stderr)")
        var image = try ImageCodecRegistry.shared.decode(Data(contentsOf: dir.url.appendingPathComponent("small.jpg")))
        #expect(image.pixelSize == PixelSize(width: 100, height: 66))
        result = try await AlcedoProcess.runDetached(["convert", input, small, "--downsample", "1000x1000", "--format", "webp"])
        #expect(result.status == 0, "\(result.stderr)")
        image = try ImageCodecRegistry.shared.decode(Data(contentsOf: URL(fileURLWithPath: small)))
        #expect(image.sourceFormat == .webp)
        #expect(image.pixelSize == PixelSize(width: 227, height: 149))
    }

    @Test("convert to pam writes RGBA8 of the chosen frame, equal to the library's decode")
    func convertPAM() async throws {
        let dir = try TemporaryDirectory()
        let input = Fixtures.url("webp-generated/animated.webp")
        let output = dir.url.appendingPathComponent("frame.pam")
        let result = try await AlcedoProcess.runDetached(["convert", input.path, output.path, "--frame", "2"])
        #expect(result.status == 0, "\(result.stderr)")
        let pam = try Data(contentsOf: output)
        let decoded = try ImageCodecRegistry.shared.decode(Data(contentsOf: input))
        let header = "P7\nWIDTH \(decoded.width)\nHEIGHT \(decoded.height)\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n"
        #expect(pam.prefix(header.utf8.count) == Data(header.utf8))
        #expect([UInt8](pam.dropFirst(header.utf8.count)) == decoded.frames[2].pixels)
    }

    @Test("convert JPEG to pam (written strip by strip) equals the library's whole decode",
          arguments: ["libjpeg-turbo/testorig.jpg", "color-generated/cmyk-plain-profile.jpg", "color-generated/p3.jpg",
                      "color-generated/gray-18.jpg", "jpeg-generated/orientation-6.jpg"])
    func convertJPEGToPAM(_ name: String) async throws {
        let dir = try TemporaryDirectory()
        let input = Fixtures.url(name)
        let output = dir.url.appendingPathComponent("out.pam")
        let result = try await AlcedoProcess.runDetached(["convert", input.path, output.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Data(contentsOf: output) == PAMWriter.encode(ImageCodecRegistry.shared.decode(Data(contentsOf: input))))
        // Only the output itself is left in the folder: no temporary file.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["out.pam"])
    }

    @Test("convert TIFF to pam (read from the file and written strip by strip) equals the library's whole decode",
          arguments: ["lzw-strips-rgb8.tif", "tiled-rgb8.tif", "planar-rgb8.tif", "cmyk8.tif", "orientation6.tif", "rgba-associated.tif", "pages2.tif"])
    func convertTIFFToPAM(_ name: String) async throws {
        let dir = try TemporaryDirectory()
        let input = Fixtures.url("tiff-bmp-ico-generated/\(name)")
        let output = dir.url.appendingPathComponent("out.pam")
        let result = try await AlcedoProcess.runDetached(["convert", input.path, output.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Data(contentsOf: output) == PAMWriter.encode(ImageCodecRegistry.shared.decode(Data(contentsOf: input))))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["out.pam"])
    }

    @Test("convert of a TIFF with a broken strip to pam: exit 1, and neither the output nor a temporary file is left")
    func convertTruncatedTIFFToPAM() async throws {
        let dir = try TemporaryDirectory()
        var broken = try Data(contentsOf: Fixtures.url("tiff-bmp-ico-generated/lzw-strips-rgb8.tif"))
        let input = dir.url.appendingPathComponent("cut.tif")
        // The fourth of six strips (bytes 1502-1996) made garbage: three bands are written first.
        broken.replaceSubrange(1502..<1997, with: Data(repeating: 0xFF, count: 495))
        try broken.write(to: input)
        let result = try await AlcedoProcess.runDetached(["convert", input.path, dir.url.appendingPathComponent("out.pam").path])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("cut.tif"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["cut.tif"])
    }

    @Test("convert of a truncated JPEG to pam: exit 1, and neither the output nor a temporary file is left")
    func convertTruncatedJPEGToPAM() async throws {
        let dir = try TemporaryDirectory()
        let whole = try Data(contentsOf: Fixtures.url("libjpeg-turbo/testorig.jpg"))
        let input = dir.url.appendingPathComponent("cut.jpg")
        try whole.prefix(whole.count / 2).write(to: input)
        let result = try await AlcedoProcess.runDetached(["convert", input.path, dir.url.appendingPathComponent("out.pam").path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("cut.jpg"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["cut.jpg"])
    }

    @Test("convert failures: exit 1 and one line naming the file")
    func convertFailures() async throws {
        let dir = try TemporaryDirectory()
        let good = Fixtures.url("libjpeg-turbo/testorig.jpg").path
        let truncated = dir.url.appendingPathComponent("cut.jpg")
        try Data(contentsOf: URL(fileURLWithPath: good)).prefix(2000).write(to: truncated)
        let fifo = dir.url.appendingPathComponent("pipe.jpg")
        try #require(mkfifo(fifo.path, 0o600) == 0)
        let folder = dir.url.appendingPathComponent("folder.jpg")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        let cases: [([String], String)] = [
            (["convert", truncated.path, dir.url.appendingPathComponent("a.webp").path], "cut.jpg"),
            (["convert", good, dir.url.appendingPathComponent("no/such/folder/a.jpg").path], "a.jpg"),
            (["convert", good, dir.url.appendingPathComponent("a.xyz").path], "a.xyz"),
            (["convert", Fixtures.url("webp-generated/animated.webp").path, dir.url.appendingPathComponent("a.pam").path, "--frame", "99"], "animated.webp"),
            // A FIFO (no writer: opening it to read by path would block) and a folder are refused.
            (["convert", fifo.path, dir.url.appendingPathComponent("b.pam").path], "pipe.jpg"),
            (["convert", folder.path, dir.url.appendingPathComponent("c.pam").path], "folder.jpg"),
        ]
        for (arguments, name) in cases {
            let result = try await AlcedoProcess.runDetached(arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(!result.crashed)
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(result.stderr)")
            #expect(lines.first?.contains(name) == true, "\(result.stderr)")
        }
        // Nothing half-written is left behind.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
            .filter { !["cut.jpg", "pipe.jpg", "folder.jpg"].contains($0) }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }
}

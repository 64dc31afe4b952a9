@testable import Alcedo
@testable import AlcedoServer
import AlcedoTestSupport
import Foundation
import Testing

/// `strip_metadata`, `keep_copyright` and their server defaults on the real server, with
/// sources made by Pillow, heif-enc, avifenc and cjxl (`Fixtures/metadata/make.py`).
@Suite("imgproxy metadata: strip_metadata, keep_copyright")
struct ImgproxyMetadataTests {
    static func fixture(_ name: String) throws -> Data {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures/metadata"))
        return try Data(contentsOf: url)
    }

    static func contains(_ data: Data?, _ text: String) -> Bool {
        guard let data else { return false }
        return data.range(of: Data(text.utf8)) != nil
    }

    /// `PixelXDimension` and `PixelYDimension` of an EXIF block's sub-IFD.
    static func exifDimensions(_ exif: Data?) -> [Int] {
        guard let exif, let block = ExifBlock(exif),
              let pointer = block.ifd0Entries.first(where: { block.uint16(at: $0) == 0x8769 }),
              let ifd = block.uint32(at: pointer + 8) else { return [] }
        let entries = block.entries(ofIFDAt: Int(ifd))
        return [0xA002, 0xA003].compactMap { tag in
            entries.first { block.uint16(at: $0) == tag }.flatMap { block.uint16(at: $0 + 8) }.map(Int.init)
        }
    }

    static func withServer(_ configure: @escaping (inout ImageServerConfiguration) -> Void = { _ in },
                           _ body: (ServerHarness, TestHTTPServer) async throws -> Void) async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        for (name, type) in [("photo.jpg", "image/jpeg"), ("photo.png", "image/png"), ("photo.webp", "image/webp"),
                             ("photo.heic", "image/heic"), ("photo.avif", "image/avif"), ("photo.jxl", "image/jxl"),
                             ("photo.tif", "image/tiff")] {
            origin.route("/" + name, .ok(try fixture(name), contentType: type))
        }
        let harness = try await ServerHarness.start(configure)
        defer { Task { await harness.stop() } }
        try await body(harness, origin)
    }

    @Test("sm:0 keeps EXIF, XMP and IPTC in a JPEG, the orientation reset after auto-rotation")
    func keepsEverythingInJPEG() async throws {
        try await Self.withServer { server, origin in
            let reply = try await server.request(server.path(origin.url("/photo.jpg"), "sm:0", ext: "jpg"))
            #expect(reply.status == 200 && reply.format == .jpeg)
            let metadata = EmbeddedMetadata.read(from: reply.body)
            #expect(Self.contains(metadata.exif, "AlcedoCam") && Self.contains(metadata.exif, "Fixture Maker 1.0"))
            #expect(Self.contains(metadata.exif, "(c) Alcedo Fixtures"))
            #expect(Self.contains(metadata.xmp, "photoshop:City=\"Lisbon\"") && Self.contains(metadata.xmp, "dc:rights"))
            #expect(Self.contains(metadata.iptc, "Lisbon") && Self.contains(metadata.iptc, "Ada Photographer"))
            // Turned upright (32x48) and tagged 1: a reader applying the tag leaves it upright.
            let image = try reply.image()
            #expect(image.pixelSize == PixelSize(width: 32, height: 48))
            #expect(image.orientation == .up)
            #expect(image.pixel(x: 16, y: 8).isClose(to: RGBA(red: 255, green: 0, blue: 0)), "the red half on top")

            #expect(Self.exifDimensions(metadata.exif) == [32, 48], "PixelX/YDimension state the result's size")
            let small = try await server.request(server.path(origin.url("/photo.jpg"), "sm:0/w:20", ext: "jpg"))
            #expect(Self.exifDimensions(EmbeddedMetadata.read(from: small.body).exif) == [20, 30])

            // Without auto-rotation the pixels stay as stored and the tag stays 6.
            let stored = try await server.request(server.path(origin.url("/photo.jpg"), "sm:0/ar:0", ext: "jpg"))
            let rotated = try stored.image()
            #expect(rotated.orientation == .right && rotated.pixelSize == PixelSize(width: 32, height: 48))
            let raw = try ImageCodecRegistry.shared.decode(stored.body, options: DecodingOptions(appliesOrientation: false))
            #expect(raw.pixelSize == PixelSize(width: 48, height: 32))
        }
    }

    @Test("by default (strip, keep copyright) only the copyright notices stay, as imgproxy")
    func keepsCopyrightByDefault() async throws {
        try await Self.withServer { server, origin in
            let reply = try await server.request(server.path(origin.url("/photo.jpg"), "w:20", ext: "jpg"))
            #expect(reply.status == 200)
            let metadata = EmbeddedMetadata.read(from: reply.body)
            #expect(Self.contains(metadata.exif, "Ada Photographer") && Self.contains(metadata.exif, "(c) Alcedo Fixtures"))
            #expect(!Self.contains(metadata.exif, "AlcedoCam") && !Self.contains(metadata.exif, "Fixture Maker"))
            #expect(Self.contains(metadata.xmp, "(c) Alcedo Fixtures") && Self.contains(metadata.xmp, "Ada Photographer"))
            #expect(!Self.contains(metadata.xmp, "Lisbon") && !Self.contains(metadata.xmp, "CreatorTool"))
            #expect(Self.contains(metadata.iptc, "(c) Alcedo Fixtures") && Self.contains(metadata.iptc, "Ada Photographer"))
            #expect(!Self.contains(metadata.iptc, "Lisbon"))
            #expect(try reply.image().pixelSize == PixelSize(width: 20, height: 30))

            // kcr:0: nothing at all.
            let bare = try await server.request(server.path(origin.url("/photo.jpg"), "w:20/kcr:0", ext: "jpg"))
            #expect(EmbeddedMetadata.read(from: bare.body).isEmpty)
            #expect(bare.body.count < reply.body.count)
        }
        // IMGPROXY_KEEP_COPYRIGHT=false as the server's default; the URL's kcr:1 still wins.
        try await Self.withServer({ $0.defaultOptions.keepCopyright = false }) { server, origin in
            let bare = try await server.request(server.path(origin.url("/photo.jpg"), "w:20", ext: "jpg"))
            #expect(EmbeddedMetadata.read(from: bare.body).isEmpty)
            let kept = try await server.request(server.path(origin.url("/photo.jpg"), "w:20/kcr:1", ext: "jpg"))
            #expect(Self.contains(EmbeddedMetadata.read(from: kept.body).exif, "(c) Alcedo Fixtures"))
        }
    }

    @Test("PNG and WebP results keep EXIF and XMP from JPEG, PNG and WebP sources")
    func pngAndWebPResults() async throws {
        try await Self.withServer { server, origin in
            for source in ["photo.jpg", "photo.png", "photo.webp"] {
                for format in [ImageFormat.png, .webp, .jpeg] {
                    let reply = try await server.request(server.path(origin.url("/" + source), "sm:0/w:24",
                                                                     ext: format.preferredFileExtension))
                    #expect(reply.status == 200 && reply.format == format, "\(source) as \(format)")
                    let metadata = EmbeddedMetadata.read(from: reply.body)
                    #expect(Self.contains(metadata.exif, "AlcedoCam"), "\(source) as \(format)")
                    #expect(Self.contains(metadata.xmp, "Lisbon"), "\(source) as \(format)")
                    #expect(metadata.iptc == nil || format == .jpeg)
                    // Still a valid file, upright.
                    let image = try reply.image()
                    #expect(image.width == 24 && image.orientation == .up, "\(source) as \(format): \(image.pixelSize)")
                }
            }
        }
    }

    @Test("progressive JPEG, interlaced PNG and palette PNG results keep EXIF and XMP too (encoders called outside the registry)",
          arguments: ["progressive", "interlaced", "quantized"])
    func directEncoderResults(setting: String) async throws {
        try await Self.withServer({ Self.configureEncoder(setting, &$0) }) { server, origin in
            let format: ImageFormat = setting == "progressive" ? .jpeg : .png
            let reply = try await server.request(server.path(origin.url("/photo.jpg"), "sm:0/w:24", ext: format.preferredFileExtension))
            #expect(reply.status == 200 && reply.format == format)
            let metadata = EmbeddedMetadata.read(from: reply.body)
            #expect(Self.contains(metadata.exif, "AlcedoCam"), "\(setting)")
            #expect(Self.contains(metadata.xmp, "Lisbon"), "\(setting)")
        }
    }

    /// Turns on the encoder setting `setting` names.
    static func configureEncoder(_ setting: String, _ configuration: inout ImageServerConfiguration) {
        switch setting {
        case "progressive": configuration.progressiveJPEG = true
        case "interlaced": configuration.pngInterlaced = true
        default: configuration.pngQuantize = true
        }
    }

    @Test("AVIF results store EXIF and XMP as items")
    func avifResults() async throws {
        try await Self.withServer { server, origin in
            let reply = try await server.request(server.path(origin.url("/photo.jpg"), "sm:0/w:16", ext: "avif"))
            #expect(reply.status == 200 && reply.format == .avif)
            #expect(Self.contains(reply.body, "AlcedoCam") && Self.contains(reply.body, "photoshop:City=\"Lisbon\""))
            #expect(try reply.image().pixelSize == PixelSize(width: 16, height: 24))
            let copyright = try await server.request(server.path(origin.url("/photo.jpg"), "w:16", ext: "avif"))
            #expect(Self.contains(copyright.body, "(c) Alcedo Fixtures") && !Self.contains(copyright.body, "AlcedoCam"))
            let bare = try await server.request(server.path(origin.url("/photo.jpg"), "w:16/kcr:0", ext: "avif"))
            #expect(!Self.contains(bare.body, "Alcedo Fixtures"))
        }
    }

    /// What `tiffinfo` (libtiff's own tool) prints for the TIFF file `data`.
    static func tiffinfo(_ data: Data) async throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-metadata-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("result.tif"), output = folder.appendingPathComponent("tiffinfo.txt")
        try data.write(to: file)
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["tiffinfo", file.path]
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in done.resume() }
            do { try ProcessLaunch.run(process) } catch { done.resume(throwing: error) }
        }
        return try String(contentsOf: output, encoding: .utf8)
    }

    @Test("HEIC, AVIF and JPEG XL sources give their EXIF and XMP, TIFF sources their XMP and IPTC",
          arguments: ["photo.heic", "photo.avif", "photo.jxl", "photo.tif"])
    func readsNewSources(_ name: String) throws {
        let data = try Self.fixture(name)
        let metadata = EmbeddedMetadata.read(from: data)
        #expect(Self.contains(metadata.xmp, "photoshop:City=\"Lisbon\"") && Self.contains(metadata.xmp, "dc:rights"))
        if name == "photo.tif" {
            #expect(metadata.exif == nil, "a TIFF's EXIF is part of the file, not a block")
            let iptc = try #require(metadata.iptc)
            #expect(iptc.starts(with: [0x1C, 1, 90]) && iptc.count == 71, "the word padding is left out")
            #expect(Self.contains(iptc, "Lisbon") && Self.contains(iptc, "(c) Alcedo Fixtures"))
        } else {
            // The HEIF and JPEG XL offset field is gone: the block starts at the TIFF header.
            let exif = try #require(metadata.exif)
            #expect(exif.starts(with: [0x49, 0x49, 42, 0]) || exif.starts(with: [0x4D, 0x4D, 0, 42]))
            #expect(Self.contains(exif, "AlcedoCam") && Self.contains(exif, "(c) Alcedo Fixtures"))
            #expect(metadata.iptc == nil)
        }
        // The decoders read the same blocks while decoding, and only when asked.
        var options = DecodingOptions()
        options.readsMetadata = true
        let format = ImageFormat.sniff(data)
        let decoder = try #require(ImageCodecRegistry.shared.decoder(for: format))
        #expect(try decoder.decode(data, options: options).metadata == metadata, "\(format)")
        #expect(try decoder.decode(data, options: DecodingOptions()).metadata == nil, "\(format)")
        // Cut files never trap; they keep what was whole.
        for length in [16, data.count / 2, data.count - 1] {
            _ = EmbeddedMetadata.read(from: data.prefix(length))
        }
    }

    @Test("sm:0 and keep_copyright carry HEIC, AVIF, JPEG XL and TIFF sources' metadata into a JPEG")
    func newSourcesIntoJPEG() async throws {
        try await Self.withServer { server, origin in
            for source in ["photo.heic", "photo.avif", "photo.jxl", "photo.tif"] {
                let reply = try await server.request(server.path(origin.url("/" + source), "sm:0/w:24", ext: "jpg"))
                #expect(reply.status == 200 && reply.format == .jpeg, "\(source)")
                let kept = EmbeddedMetadata.read(from: reply.body)
                #expect(Self.contains(kept.xmp, "Lisbon"), "\(source)")
                #expect(Self.contains(kept.exif, "AlcedoCam") == (source != "photo.tif"), "\(source)")
                #expect(Self.contains(kept.iptc, "Lisbon") == (source == "photo.tif"), "\(source)")

                let copyright = EmbeddedMetadata.read(from: try await server.request(server.path(origin.url("/" + source), "w:24", ext: "jpg")).body)
                #expect(Self.contains(copyright.xmp, "(c) Alcedo Fixtures") && !Self.contains(copyright.xmp, "Lisbon"), "\(source)")
                #expect(Self.contains(copyright.exif, "(c) Alcedo Fixtures") == (source != "photo.tif"), "\(source)")
                #expect(!Self.contains(copyright.exif, "AlcedoCam") && !Self.contains(copyright.iptc, "Lisbon"), "\(source)")
                #expect(Self.contains(copyright.iptc, "(c) Alcedo Fixtures") == (source == "photo.tif"), "\(source)")
            }
        }
    }

    @Test("HEIC, JPEG XL and TIFF results carry the metadata; the EXIF orientation says upright")
    func newResults() async throws {
        try await Self.withServer { server, origin in
            for format in [ImageFormat.heic, .jxl, .tiff] {
                let reply = try await server.request(server.path(origin.url("/photo.jpg"), "sm:0/w:16", ext: format.preferredFileExtension))
                #expect(reply.status == 200 && reply.format == format, "\(format)")
                let kept = EmbeddedMetadata.read(from: reply.body)
                #expect(Self.contains(kept.xmp, "photoshop:City=\"Lisbon\""), "\(format)")
                if format == .tiff {
                    #expect(kept.exif == nil && Self.contains(kept.iptc, "Lisbon") && Self.contains(kept.iptc, "Ada Photographer"))
                    // libtiff's own reader finds both tags.
                    let info = try await Self.tiffinfo(reply.body)
                    #expect(info.contains("XMLPacket") && info.contains("photoshop:City=\"Lisbon\""), "\(info)")
                    #expect(info.contains("RichTIFFIPTC"), "\(info)")
                } else {
                    #expect(Self.contains(kept.exif, "AlcedoCam") && kept.iptc == nil, "\(format)")
                    // Turned upright by the server: the tag says 1, so no reader turns it again.
                    #expect(kept.exif.flatMap(ExifOrientationReader.orientation(in:)) == .up, "\(format)")
                    #expect(Self.exifDimensions(kept.exif) == [16, 24], "\(format)")
                }
                let image = try reply.image()
                #expect(image.pixelSize == PixelSize(width: 16, height: 24) && image.orientation == .up, "\(format): \(image.pixelSize)")

                let copyright = try await server.request(server.path(origin.url("/photo.jpg"), "w:16", ext: format.preferredFileExtension))
                let notices = EmbeddedMetadata.read(from: copyright.body)
                #expect(Self.contains(notices.xmp, "(c) Alcedo Fixtures") && !Self.contains(notices.xmp, "Lisbon"), "\(format)")
                #expect(Self.contains(notices.exif, "(c) Alcedo Fixtures") == (format != .tiff), "\(format)")
                #expect(!Self.contains(copyright.body, "AlcedoCam") && !Self.contains(copyright.body, "Lisbon"), "\(format)")

                let bare = try await server.request(server.path(origin.url("/photo.jpg"), "w:16/kcr:0", ext: format.preferredFileExtension))
                #expect(EmbeddedMetadata.read(from: bare.body).isEmpty && !Self.contains(bare.body, "Alcedo Fixtures"), "\(format)")
            }
        }
    }

    @Test("the metadata blocks: copyright filter, orientation reset, containers round trip")
    func blocks() throws {
        let source = EmbeddedMetadata.read(from: try Self.fixture("photo.jpg"))
        let copyright = source.copyrightOnly()
        let exif = try #require(copyright.exif)
        #expect(exif.starts(with: [0x49, 0x49, 42, 0]))
        #expect(Self.contains(exif, "Ada Photographer\0") && Self.contains(exif, "(c) Alcedo Fixtures\0"))
        // IPTC: record 1, By-line and Copyright Notice; not the record version nor the city.
        let iptc = try #require(copyright.iptc)
        #expect(iptc.starts(with: [0x1C, 1, 90]))
        #expect(!Self.contains(iptc, "Lisbon") && !Self.contains(iptc, "\u{1C}\u{02}\u{00}"))
        #expect(EmbeddedMetadata(exif: Data("MM\0*\0\0\0\u{08}\0\0".utf8)).copyrightOnly().isEmpty)
        // A packet without copyright properties keeps nothing.
        #expect(EmbeddedMetadata(xmp: Data("<x:xmpmeta><rdf:Description xmp:Rating=\"5\"/></x:xmpmeta>".utf8)).copyrightOnly().isEmpty)
        // Hostile blocks never trap.
        for junk in [Data(), Data([0x1C]), Data([0x1C, 2, 80, 0xFF, 0xFF]), Data("II*\0\u{FF}\u{FF}\u{FF}\u{7F}".utf8)] {
            _ = EmbeddedMetadata(exif: junk, xmp: junk, iptc: junk).copyrightOnly().orientationReset()
        }
        let image = AlcedoImage(width: 4, height: 3, pixels: [UInt8](repeating: 200, count: 48))
        for format in [ImageFormat.jpeg, .png, .webp] {
            var tagged = image
            tagged.metadata = source
            let plain = try ImageCodecRegistry.shared.encode(tagged, as: format)
            #expect(EmbeddedMetadata.read(from: plain).isEmpty, "not written unless asked: \(format)")
            let written = try ImageCodecRegistry.shared.encode(tagged, as: format, options: EncodingOptions(writesMetadata: true))
            let back = try ImageCodecRegistry.shared.decode(written, options: {
                var options = DecodingOptions(appliesOrientation: false)
                options.readsMetadata = true
                return options
            }())
            #expect(back.metadata?.exif == source.exif && back.metadata?.xmp == source.xmp, "\(format)")
            #expect(back.metadata?.iptc == (format == .jpeg ? source.iptc : nil), "\(format)")
        }
        // The encoders that write the blocks themselves: EXIF and XMP, or XMP and IPTC (TIFF).
        var larger = AlcedoImage(width: 16, height: 16, pixels: [UInt8](repeating: 200, count: 16 * 16 * 4))
        larger.metadata = source
        for format in [ImageFormat.heic, .avif, .jxl, .tiff] {
            let plain = try ImageCodecRegistry.shared.encode(larger, as: format)
            #expect(EmbeddedMetadata.read(from: plain).isEmpty, "not written unless asked: \(format)")
            let written = try ImageCodecRegistry.shared.encode(larger, as: format, options: EncodingOptions(writesMetadata: true))
            let back = EmbeddedMetadata.read(from: written)
            #expect(back.xmp == source.xmp, "\(format)")
            #expect(back.exif == (format == .tiff ? nil : source.exif), "\(format)")
            #expect(back.iptc == (format == .tiff ? source.iptc : nil), "\(format)")
        }
    }
}

import Foundation
import Testing

/// `alcedo serve --dialect thumbor`: the flags, thumbor's and imagor's variables and a
/// `thumbor.conf`, with `--print-config` naming where each value came from.
@Suite("alcedo serve --dialect thumbor")
struct ThumborServeTests {
    @Test("thumbor.conf is read for the supported keys, the others are named once; flags and variables win")
    func thumborConfig() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-thumbor-\(UUID().uuidString).conf")
        try Data("""
            SECURITY_KEY = 'from-file'
            QUALITY = 85
            MAX_AGE = 600
            MAX_PIXELS = 20e6
            PRESERVE_EXIF_INFO = True
            FILTERS = ['thumbor.filters.quality', 'thumbor.filters.brightness']
            LOADER = 'thumbor.loaders.file_loader'
            DETECTORS = ['thumbor.detectors.face_detector']
            import os
            """.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, out, err) = try ChildServe.runToEnd(
            ["serve", "--print-config", "--thumbor-config", file.path, "--quality", "70"],
            environment: ["ALCEDO_DIALECT": "thumbor", "IMAGOR_SECRET": "from-imagor"])
        #expect(status == 0, "\(err)")
        func row(_ name: String) -> [Substring] { ChildServe.configRow(name, in: out) }
        #expect(row("DIALECT") == ["DIALECT", "thumbor", "ALCEDO_DIALECT"])
        #expect(row("QUALITY") == ["QUALITY", "70", "--quality"])
        #expect(row("TTL") == ["TTL", "600", "thumbor.conf:MAX_AGE"])
        #expect(row("MAX_SRC_RESOLUTION") == ["MAX_SRC_RESOLUTION", "20", "MP", "thumbor.conf:MAX_PIXELS"])
        #expect(row("STRIP_METADATA") == ["STRIP_METADATA", "false", "thumbor.conf:PRESERVE_EXIF_INFO"])
        #expect(row("THUMBOR_SECURITY_KEY").last == "IMAGOR_SECRET")
        #expect(row("THUMBOR_FILTERS") == ["THUMBOR_FILTERS", "brightness,quality", "thumbor.conf:FILTERS"])
        #expect(row("AUTO_WEBP") == ["AUTO_WEBP", "false", "default"])
        #expect(out.contains("thumbor.conf keys not supported (ignored): DETECTORS, LOADER"))
    }

    @Test("thumbor.conf's AVIF_QUALITY, HTTP_LOADER_CONNECT_TIMEOUT, MAX_AGE_TEMP_IMAGE and AUTO_PNG_TO_JPG are read; MIN_WIDTH and MIN_HEIGHT are read without effect")
    func moreThumborKeys() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-thumbor-\(UUID().uuidString).conf")
        try Data("""
            WEBP_QUALITY = 70
            AVIF_QUALITY = 50
            HTTP_LOADER_CONNECT_TIMEOUT = 3
            MAX_AGE_TEMP_IMAGE = 30
            AUTO_PNG_TO_JPG = True
            MIN_WIDTH = 10
            MIN_HEIGHT = 1
            """.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, out, err) = try ChildServe.runToEnd(["serve", "--print-config", "--thumbor-config", file.path],
                                                         environment: ["ALCEDO_DIALECT": "thumbor"])
        #expect(status == 0, "\(err)")
        func row(_ name: String) -> [Substring] { ChildServe.configRow(name, in: out) }
        #expect(row("FORMAT_QUALITY") == ["FORMAT_QUALITY", "avif=50,webp=70", "thumbor.conf:AVIF_QUALITY,thumbor.conf:WEBP_QUALITY"])
        #expect(row("CONNECT_TIMEOUT") == ["CONNECT_TIMEOUT", "3", "s", "thumbor.conf:HTTP_LOADER_CONNECT_TIMEOUT"])
        #expect(row("FALLBACK_IMAGE_TTL") == ["FALLBACK_IMAGE_TTL", "30", "thumbor.conf:MAX_AGE_TEMP_IMAGE"])
        #expect(row("THUMBOR_AUTO_PNG_TO_JPG") == ["THUMBOR_AUTO_PNG_TO_JPG", "true", "thumbor.conf:AUTO_PNG_TO_JPG"])
        // thumbor 7.8 checks them only on uploads: no warning, no effect on GET.
        #expect(!out.contains("not supported"))
        #expect(out.contains("thumbor.conf keys read, no effect on GET (as in thumbor 7.8): MIN_HEIGHT, MIN_WIDTH"))
        // The flags win over the file.
        let (_, flagged, _) = try ChildServe.runToEnd(["serve", "--print-config", "--thumbor-config", file.path, "--connect-timeout", "2",
                                                       "--thumbor-auto-png-to-jpg", "false"], environment: ["ALCEDO_DIALECT": "thumbor"])
        #expect(ChildServe.configRow("CONNECT_TIMEOUT", in: flagged) == ["CONNECT_TIMEOUT", "2", "s", "--connect-timeout"])
        #expect(ChildServe.configRow("THUMBOR_AUTO_PNG_TO_JPG", in: flagged).dropFirst().first == "false")
    }

    @Test("a MIN_WIDTH that is not a whole number is named as unsupported")
    func badMinWidth() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-thumbor-\(UUID().uuidString).conf")
        try Data("MIN_WIDTH = 'wide'\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, out, err) = try ChildServe.runToEnd(["serve", "--print-config", "--thumbor-config", file.path],
                                                         environment: ["ALCEDO_DIALECT": "thumbor"])
        #expect(status == 0, "\(err)")
        #expect(out.contains("thumbor.conf keys not supported (ignored): MIN_WIDTH"))
    }

    @Test("an unknown dialect is refused before listening")
    func unknownDialect() throws {
        let (status, _, err) = try ChildServe.runToEnd(["serve", "--dialect", "imagor", "--print-config"], environment: [:])
        #expect(status != 0)
        #expect(err.contains("must be imgproxy or thumbor"))
    }
}

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

    @Test("an unknown dialect is refused before listening")
    func unknownDialect() throws {
        let (status, _, err) = try ChildServe.runToEnd(["serve", "--dialect", "imagor", "--print-config"], environment: [:])
        #expect(status != 0)
        #expect(err.contains("must be imgproxy or thumbor"))
    }
}

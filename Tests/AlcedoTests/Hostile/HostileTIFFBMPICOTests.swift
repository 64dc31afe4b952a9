import Foundation
import Testing
@testable import Alcedo

/// Hostile TIFF, BMP and ICO files: each ends in a typed error (or a bounded decode), before
/// any allocation its header would ask for.
@Suite("Hostile TIFF, BMP and ICO")
struct HostileTIFFBMPICOTests {
    /// The decoding error `body` throws, `nil` when it throws none (or another kind).
    private static func reason(_ body: () throws -> Void) -> DecodingErrorReason? {
        do {
            try body()
            return nil
        } catch {
            return (error as? AlcedoError)?.decodingReason
        }
    }

    // MARK: TIFF

    @Test func tiffDeclaringAHugeCanvasIsRefusedBeforeAllocation() throws {
        let data = TIFFBuilder.rgb(width: 200_000, height: 200_000, pixels: [UInt8](repeating: 7, count: 48))
        let reason = Self.reason { _ = try TIFFDecoder().decode(data) }
        guard case .tooManyPixels(.tiff, 200_000, 200_000, _) = reason else { Issue.record("\(String(describing: reason))"); return }
        // info reports the declared size without decoding.
        #expect(try TIFFDecoder().info(for: data).width == 200_000)
    }

    @Test func tiffWithAHugeTileIsRefusedByTheWorkingMemoryLimit() throws {
        var builder = TIFFBuilder()
        builder.long(256, 64); builder.long(257, 64)
        builder.short(258, 8, 8, 8); builder.short(259, 1); builder.short(262, 2); builder.short(277, 3)
        builder.long(322, 32768); builder.long(323, 32768)  // one 32768x32768 tile: 3 GiB decoded
        builder.long(324, 0); builder.long(325, 16)
        builder.data = [UInt8](repeating: 0, count: 16)
        let reason = Self.reason { _ = try TIFFDecoder().decode(builder.build()) }
        guard case .workingMemoryTooLarge(.tiff, _, _, _) = reason else { Issue.record("\(String(describing: reason))"); return }
    }

    @Test func tiffDeclaringMillionsOfTilesFailsFastAndCleanly() throws {
        // 40000x40000 in 16x16 tiles: 6.25 million tiles, a 25 MB tile table the file does not hold.
        var builder = TIFFBuilder()
        builder.long(256, 40_000); builder.long(257, 40_000)
        builder.short(258, 8); builder.short(259, 1); builder.short(262, 1); builder.short(277, 1)
        builder.long(322, 16); builder.long(323, 16)
        builder.long(324, 8); builder.long(325, 256)
        let data = builder.build()
        var options = DecodingOptions()
        options.limits.maxPixelCount = 2_000_000_000
        options.limits.maxTotalBytes = Int.max
        let reason = Self.reason { _ = try TIFFDecoder().decode(data, options: options) }
        #expect(reason != nil, "a tile table past the data must be an error")
        // libtiff refuses the tile table that does not match the declared tiling, whatever the limits.
        let defaultReason = Self.reason { _ = try TIFFDecoder().decode(data) }
        guard case .invalidHeader(.tiff, let message) = defaultReason else {
            Issue.record("expected invalidHeader, got \(String(describing: defaultReason))"); return
        }
        #expect(message.contains("TileOffsets"))
    }

    @Test func stripOffsetsPastTheDataAreAnErrorNotARead() throws {
        let pixels = [UInt8](repeating: 200, count: 4 * 4 * 3)
        let past = TIFFBuilder.rgb(width: 4, height: 4, pixels: pixels, stripOffset: 1_000_000)
        let reason = Self.reason { _ = try TIFFDecoder().decode(past) }
        guard case .corrupt(.tiff, let message) = reason else { Issue.record("\(String(describing: reason))"); return }
        #expect(message.contains("past the end"))

        // The file ends 28 bytes into the 48-byte strip. (A byte count larger than the file with
        // complete data is only a bogus count: libtiff recomputes it and the file decodes.)
        let cut = TIFFBuilder.rgb(width: 4, height: 4, pixels: Array(pixels.prefix(20)), stripByteCount: 48)
        let cutReason = Self.reason { _ = try TIFFDecoder().decode(cut) }
        guard case .truncated(.tiff, _) = cutReason else { Issue.record("expected truncated, got \(String(describing: cutReason))"); return }
        // Allowed truncation: the missing strip stays transparent.
        let partial = try TIFFDecoder().decode(cut, options: DecodingOptions(allowTruncated: true))
        #expect(partial.width == 4 && partial.pixels.allSatisfy { $0 == 0 })
        // The intact file decodes.
        let good = try TIFFDecoder().decode(TIFFBuilder.rgb(width: 4, height: 4, pixels: pixels))
        #expect(good.pixel(x: 3, y: 3) == RGBA(red: 200, green: 200, blue: 200))
    }

    @Test func unknownCompressionIsUnsupported() throws {
        let data = TIFFBuilder.rgb(width: 2, height: 2, pixels: [UInt8](repeating: 1, count: 12), compression: 12345)
        let reason = Self.reason { _ = try TIFFDecoder().decode(data) }
        #expect(reason != nil)
        if case .unsupportedFeature = reason {} else if case .invalidHeader = reason {} else {
            Issue.record("expected unsupportedFeature or invalidHeader, got \(String(describing: reason))")
        }
    }

    @Test func garbageAfterTheSignatureIsAnError() throws {
        for tail in [[UInt8](), [0xFF, 0xFF, 0xFF, 0xFF], [UInt8](repeating: 0xAB, count: 64)] {
            let data = Data([0x49, 0x49, 0x2A, 0x00] + tail)
            #expect(Self.reason { _ = try TIFFDecoder().decode(data) } != nil)
            #expect(Self.reason { _ = try TIFFDecoder().info(for: data) } != nil)
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: AlcedoProcess.executable.path), "needs the alcedo executable"))
    func libtiffMessagesNeverReachStandardError() async throws {
        let folder = try TemporaryDirectory()
        let file = folder.url.appendingPathComponent("broken.tif")
        var bytes = [UInt8](try ConformanceFixture.data("lzw-rgb8.tif"))
        // Scramble the compressed strips: libtiff reports LZW errors.
        for i in 400..<min(bytes.count, 1400) { bytes[i] = UInt8(truncatingIfNeeded: i &* 37) }
        try Data(bytes).write(to: file)
        let result = try await AlcedoProcess.runDetached(["convert", file.path, folder.url.appendingPathComponent("o.png").path])
        #expect(!result.crashed)
        // Whatever libtiff made of the data, only Alcedo's own line may reach stderr.
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == (result.status == 0 ? 0 : 1), "\(result.stderr)")
        #expect(lines.allSatisfy { $0.hasPrefix("alcedo:") }, "\(result.stderr)")
        // A file cut inside its strips fails with one line too.
        try Data(try ConformanceFixture.data("none-rgb8.tif").prefix(1500)).write(to: file)
        let cut = try await AlcedoProcess.runDetached(["convert", file.path, folder.url.appendingPathComponent("o.png").path])
        #expect(cut.status != 0 && cut.stderr.split(separator: "\n").count == 1, "\(cut.stderr)")
    }

    // MARK: BMP

    /// A BMP file header and BITMAPINFOHEADER for an 8-bit image with `colors` palette entries.
    static func bmp8(width: Int32, height: Int32, compression: UInt32, colors: Int, pixels: [UInt8], imageSize: UInt32? = nil) -> Data {
        var b: [UInt8] = Array("BM".utf8)
        func put32(_ v: UInt32) { for i in 0..<4 { b.append(UInt8((v >> (8 * UInt32(i))) & 0xFF)) } }
        func put16(_ v: UInt16) { b += [UInt8(v & 0xFF), UInt8(v >> 8)] }
        let offset = UInt32(14 + 40 + colors * 4)
        put32(offset + UInt32(pixels.count)); put32(0); put32(offset)
        put32(40); put32(UInt32(bitPattern: width)); put32(UInt32(bitPattern: height)); put16(1); put16(8)
        put32(compression); put32(imageSize ?? UInt32(pixels.count)); put32(2835); put32(2835); put32(UInt32(colors)); put32(0)
        for i in 0..<colors { b += [UInt8(i), UInt8(255 - i), UInt8(i / 2), 0] }
        return Data(b + pixels)
    }

    @Test func rleBombIsRefusedBeforeAllocation() throws {
        // 60000x60000 declared, a few bytes of RLE8: refused by the pixel limit, nothing expanded.
        let data = Self.bmp8(width: 60_000, height: 60_000, compression: 1, colors: 2, pixels: [255, 1, 0, 1])
        guard case .tooManyPixels(.bmp, 60_000, 60_000, _) = Self.reason({ _ = try BMPDecoder().decode(data) }) else {
            Issue.record("expected tooManyPixels"); return
        }
    }

    @Test func rleRunPastTheRowIsAnError() throws {
        // Width 8: a run of 20 pixels passes the padded 8-pixel row.
        let data = Self.bmp8(width: 8, height: 2, compression: 1, colors: 2, pixels: [20, 1, 0, 0, 0, 1])
        guard case .corrupt(.bmp, let message) = Self.reason({ _ = try BMPDecoder().decode(data) }) else {
            Issue.record("expected corrupt"); return
        }
        #expect(message.contains("past"))
    }

    @Test func paletteIndexOutOfRangeIsAnError() throws {
        // Two palette colours, index 5 used.
        let data = Self.bmp8(width: 4, height: 1, compression: 0, colors: 2, pixels: [0, 1, 5, 0])
        guard case .corrupt(.bmp, let message) = Self.reason({ _ = try BMPDecoder().decode(data) }) else {
            Issue.record("expected corrupt"); return
        }
        #expect(message.contains("palette index 5"))
    }

    @Test func lyingFileSizeWithShortPixelDataIsTruncated() throws {
        var bytes = [UInt8](Self.bmp8(width: 16, height: 16, compression: 0, colors: 2, pixels: [UInt8](repeating: 1, count: 256)))
        bytes.removeLast(100)  // the header still states the full size
        guard case .truncated(.bmp, _) = Self.reason({ _ = try BMPDecoder().decode(Data(bytes)) }) else {
            Issue.record("expected truncated"); return
        }
        let partial = try BMPDecoder().decode(Data(bytes), options: DecodingOptions(allowTruncated: true))
        #expect(partial.width == 16 && partial.pixel(x: 0, y: 0).alpha == 0 && partial.pixel(x: 0, y: 15).alpha == 255)
    }

    // MARK: ICO

    /// An icon directory with one entry whose directory bytes say 16x16 and whose PNG says otherwise.
    static func icon(entry: Data, statedSize: UInt8 = 16, offset: UInt32? = nil, byteCount: UInt32? = nil) -> Data {
        var b: [UInt8] = [0, 0, 1, 0, 1, 0, statedSize, statedSize, 0, 0, 1, 0, 32, 0]
        func put32(_ v: UInt32) { for i in 0..<4 { b.append(UInt8((v >> (8 * UInt32(i))) & 0xFF)) } }
        put32(byteCount ?? UInt32(entry.count)); put32(offset ?? 22)
        return Data(b) + entry
    }

    @Test func iconEntryLyingAboutItsSizeIsCheckedAtItsRealSize() throws {
        let big = AlcedoImage(width: 300, height: 200, pixels: [UInt8](repeating: 90, count: 300 * 200 * 4))
        let png = try PNGEncoder().encode(big)
        let data = Self.icon(entry: png)
        let info = try ICODecoder().info(for: data)
        #expect(info.width == 300 && info.height == 200 && info.entries.first?.width == 300)
        var options = DecodingOptions()
        options.limits.maxPixelCount = 10_000
        guard case .tooManyPixels(_, 300, 200, _) = Self.reason({ _ = try ICODecoder().decode(data, options: options) }) else {
            Issue.record("expected tooManyPixels at the real size"); return
        }
        #expect(try ICODecoder().decode(data).width == 300)
    }

    @Test func iconEntryPastTheEndIsNeverRead() throws {
        let png = try PNGEncoder().encode(AlcedoImage(width: 2, height: 2, pixels: [UInt8](repeating: 255, count: 16)))
        let data = Self.icon(entry: png, byteCount: 1_000_000)
        guard case .truncated(.ico, _) = Self.reason({ _ = try ICODecoder().decode(data) }) else {
            Issue.record("expected truncated"); return
        }
        let far = Self.icon(entry: png, offset: 4_000_000_000)
        #expect(Self.reason { _ = try ICODecoder().decode(far) } != nil)
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Alcedo

/// Every TIFF fixture against ImageMagick's decode: equal for 8-bit lossless files, within 1
/// after 16 or 32 to 8-bit (and floating-point) rounding, within a stated tolerance for JPEG and CMYK.
@Suite("TIFF conformance")
struct TIFFConformanceTests {
    /// File, tolerance. 16-bit files: ImageMagick's rounding differs from ours by 1. JPEG: the
    /// IDCT and upsampling libjpeg runs differ from ImageMagick's decode path by a few levels.
    /// CMYK: Alcedo's generic CMYK profile against ImageMagick's naive formula (lcms's table
    /// stays within 3). L*a*b*: against the picture it was made from, within ImageMagick's
    /// rounding of the forward conversion (ImageMagick's own decode is off by up to 26).
    static let cases: [(String, Int)] = [
        ("lzw-rgb8.tif", 0), ("lzw-rgb16.tif", 1), ("none-rgb8.tif", 0), ("deflate-rgb8.tif", 0),
        ("packbits-rgb8.tif", 0), ("jpeg-rgb8.tif", 4), ("jpeg-ycbcr.tif", 4), ("rgba-unassociated.tif", 0),
        ("rgba-associated.tif", 1), ("gray8.tif", 0), ("gray16.tif", 1), ("gray-alpha.tif", 0), ("palette4.tif", 1),
        ("palette8.tif", 1), ("ccitt-g3.tif", 0), ("ccitt-g4.tif", 0), ("tiled-rgb8.tif", 0), ("planar-rgb8.tif", 0),
        ("bigendian-rgb8.tif", 0), ("bigtiff-rgb8.tif", 0), ("lzw-strips-rgb8.tif", 0), ("cmyk8.tif", 3), ("orientation6.tif", 0), ("pages2.tif", 0),
        ("float32-rgba.tif", 1), ("float16-gray.tif", 1), ("uint32-rgb.tif", 1),
        ("lab16.tif", 4),
    ]

    @Test("decodes like ImageMagick", arguments: cases)
    func matchesReference(name: String, tolerance: Int) throws {
        let data = try ConformanceFixture.data(name)
        #expect(ImageFormat.sniff(data) == .tiff)
        let image = try ImageCodecRegistry.shared.decode(data)
        #expect(image.sourceFormat == .tiff)
        let reference = try ConformanceFixture.reference(name)
        #expect(reference.count == image.width * image.height * 4, "\(name): \(image.width)x\(image.height)")
        let difference = ConformanceFixture.maxVisibleDifference(image.pixels, reference)
        #expect(difference <= tolerance, "\(name): largest difference \(difference), allowed \(tolerance)")
    }

    @Test func orientationTagTurnsThePicture() throws {
        let data = try ConformanceFixture.data("orientation6.tif")
        let info = try TIFFDecoder().info(for: data)
        #expect(info.orientation == .right)
        #expect(info.width == 23 && info.height == 37)
        let upright = try TIFFDecoder().decode(data)
        #expect(upright.width == 23 && upright.height == 37 && upright.orientation == .right)
        let stored = try TIFFDecoder().decode(data, options: DecodingOptions(appliesOrientation: false))
        #expect(stored.width == 37 && stored.height == 23 && stored.orientation == .right)
        #expect(stored.applyingOrientation(.right).pixels == upright.pixels)
    }

    @Test func pagesAreCountedAndChosen() throws {
        let data = try ConformanceFixture.data("pages2.tif")
        let info = try ImageCodecRegistry.shared.info(for: data)
        #expect(info.pageCount == 2)
        #expect(info.frameCount == 1)
        var options = DecodingOptions()
        options.page = 1
        let second = try ImageCodecRegistry.shared.decode(data, options: options)
        #expect(second.width == 20 && second.height == 31)
        #expect(ConformanceFixture.maxDifference(second.pixels, try ConformanceFixture.reference("pages2.tif", suffix: ".page1")) == 0)
        #expect(try ImageCodecRegistry.shared.info(for: data, options: options).width == 20)
        options.page = 2
        #expect(performing: {
            _ = try ImageCodecRegistry.shared.decode(data, options: options)
        }, throws: { ($0 as? AlcedoError)?.decodingReason == .pageOutOfRange(format: .tiff, page: 2, count: 2) })
    }

    @Test func infoReportsTheFormatFacts() throws {
        let lzw = try TIFFDecoder().info(for: try ConformanceFixture.data("lzw-rgb16.tif"))
        #expect(lzw.compression == "lzw" && lzw.bitDepth == 16 && lzw.colorModel == "rgb" && !lzw.hasAlpha)
        let g4 = try TIFFDecoder().info(for: try ConformanceFixture.data("ccitt-g4.tif"))
        #expect(g4.compression == "ccitt-g4" && g4.bitDepth == 1 && g4.colorModel == "gray")
        let rgba = try TIFFDecoder().info(for: try ConformanceFixture.data("rgba-associated.tif"))
        #expect(rgba.hasAlpha && rgba.colorModel == "rgba")
        let cmyk = try TIFFDecoder().info(for: try ConformanceFixture.data("cmyk8.tif"))
        #expect(cmyk.colorModel == "cmyk")
        let palette = try TIFFDecoder().info(for: try ConformanceFixture.data("palette4.tif"))
        #expect(palette.colorModel == "palette" && palette.bitDepth == 4)
    }

    @Test func cmykUsesTheGenericProfileOrTheNaiveFormula() throws {
        let data = try ConformanceFixture.data("cmyk8.tif")
        let managed = try TIFFDecoder().decode(data)
        #expect(managed.colorMetadata.sourceProfile?.origin == .genericCMYK)
        let naive = try TIFFDecoder().decode(data, options: DecodingOptions(colorManagement: .ignore))
        #expect(ConformanceFixture.maxDifference(naive.pixels, try ConformanceFixture.reference("cmyk8.tif")) <= 1)
    }

    @Test("shrinks while decoding for a target size", arguments: ["lzw-rgb8.tif", "tiled-rgb8.tif", "planar-rgb8.tif"])
    func decodeTimeShrinking(name: String) throws {
        let data = try ConformanceFixture.data(name)
        let image = try TIFFDecoder().decode(data, options: DecodingOptions(targetSize: PixelSize(width: 9, height: 5)))
        // Factor 2 keeps at least twice the 9x5 the target needs.
        #expect(image.width == 19 && image.height == 12)
        // Each pixel is the rounded average of its 2x2 block (fewer at the edges) of the full decode.
        let full = try TIFFDecoder().decode(data)
        var expected = [UInt8](repeating: 255, count: 19 * 12 * 4)
        for oy in 0..<12 {
            for ox in 0..<19 {
                for c in 0..<3 {
                    var sum = 0, count = 0
                    for y in (oy * 2)..<min(oy * 2 + 2, full.height) {
                        for x in (ox * 2)..<min(ox * 2 + 2, full.width) { sum += Int(full.pixels[(y * full.width + x) * 4 + c]); count += 1 }
                    }
                    expected[(oy * 19 + ox) * 4 + c] = UInt8((sum + count / 2) / count)
                }
            }
        }
        #expect(ConformanceFixture.maxDifference(image.pixels, expected) <= 1)
    }

    /// The bands of `name` read from an open file with ``TIFFDecoder/decodeRows(fileDescriptor:options:start:rows:)``,
    /// or `nil` when it answered that the rows cannot come that way.
    static func bands(_ name: String, options: DecodingOptions = .default) throws -> (size: PixelSize, pixels: [UInt8], bands: [(Int, Int)])? {
        let path = Fixtures.url("\(ConformanceFixture.folder)/\(name)").path
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw CocoaError(.fileReadNoSuchFile) }
        defer { close(fd) }
        var size = PixelSize(width: 0, height: 0), pixels: [UInt8] = [], bands: [(Int, Int)] = []
        let streamed = try TIFFDecoder().decodeRows(fileDescriptor: fd, options: options, start: { size = $0 }) { band, first, count in
            #expect(band.count == count * size.width * 4)
            #expect(first == (bands.last.map { $0.0 + $0.1 } ?? 0), "bands come in order, without gaps")
            pixels += band
            bands.append((first, count))
            return true
        }
        return streamed ? (size, pixels, bands) : nil
    }

    @Test("read from a file band by band, equal to the whole decode", arguments: cases.map(\.0).filter { $0 != "orientation6.tif" })
    func bandsFromAFileEqualTheWholeDecode(name: String) throws {
        let whole = try TIFFDecoder().decode(ConformanceFixture.data(name))
        guard let read = try Self.bands(name) else {
            // Only models read through libtiff's whole-picture RGBA interface may decline; none here.
            Issue.record("\(name): declined"); return
        }
        #expect(read.size == whole.pixelSize, "\(name)")
        #expect(read.pixels == whole.pixels, "\(name)")
        #expect(read.bands.last.map { $0.0 + $0.1 } == whole.height)
    }

    @Test func bandsAreStripsOrTileRowsAndStopWhenAsked() throws {
        let strips = try #require(try Self.bands("lzw-strips-rgb8.tif"))
        #expect(strips.bands.map(\.1) == [4, 4, 4, 4, 4, 3], "one band a strip")
        let tiled = try #require(try Self.bands("tiled-rgb8.tif"))
        #expect(tiled.bands.count > 1 && tiled.bands.dropLast().allSatisfy { $0.1 == tiled.bands[0].1 }, "one band a row of tiles")
        // A page to turn declines, having called nothing; without applying orientation it streams as stored.
        #expect(try Self.bands("orientation6.tif") == nil)
        let stored = try #require(try Self.bands("orientation6.tif", options: DecodingOptions(appliesOrientation: false)))
        #expect(stored.size == PixelSize(width: 37, height: 23))
        // `rows` returning false stops the decode.
        let fd = open(Fixtures.url("\(ConformanceFixture.folder)/lzw-strips-rgb8.tif").path, O_RDONLY)
        defer { close(fd) }
        var calls = 0
        #expect(try TIFFDecoder().decodeRows(fileDescriptor: fd, start: { _ in }) { _, _, _ in calls += 1; return false })
        #expect(calls == 1)
    }

    @Test func bandsFromAFileKeepTheLimitsAndCheckStripOffsets() throws {
        let folder = try TemporaryDirectory()
        func streamed(_ data: Data, options: DecodingOptions = .default) throws -> [UInt8] {
            let url = folder.url.appendingPathComponent("\(UUID().uuidString).tif")
            try data.write(to: url)
            let fd = open(url.path, O_RDONLY)
            defer { close(fd) }
            var pixels: [UInt8] = []
            _ = try TIFFDecoder().decodeRows(fileDescriptor: fd, options: options, start: { _ in }) { band, _, _ in pixels += band; return true }
            return pixels
        }
        let pixels = [UInt8](repeating: 200, count: 4 * 4 * 3)
        #expect(try streamed(TIFFBuilder.rgb(width: 4, height: 4, pixels: pixels)) == [UInt8]((0..<16).flatMap { _ in [200, 200, 200, 255] }))
        #expect(throws: AlcedoError.self) { try streamed(TIFFBuilder.rgb(width: 4, height: 4, pixels: pixels, stripOffset: 1_000_000)) }
        let cut = TIFFBuilder.rgb(width: 4, height: 4, pixels: Array(pixels.prefix(20)), stripByteCount: 48)
        #expect(throws: AlcedoError.self) { try streamed(cut) }
        #expect(try streamed(cut, options: DecodingOptions(allowTruncated: true)) == [UInt8](repeating: 0, count: 64))
        var small = DecodingOptions()
        small.limits.maxPixelCount = 10
        #expect(throws: AlcedoError.self) { try streamed(TIFFBuilder.rgb(width: 4, height: 4, pixels: pixels), options: small) }
    }
}

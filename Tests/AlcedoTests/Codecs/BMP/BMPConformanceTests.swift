import Foundation
import Testing
@testable import Alcedo

/// BMP and ICO fixtures against ImageMagick's decode, and hand-built bitmaps for the layouts
/// ImageMagick does not write (RLE4, deltas, 2-bit, top-down, ALPHABITFIELDS).
@Suite("BMP and ICO conformance")
struct BMPConformanceTests {
    static let bitmaps: [(String, String)] = [
        ("rgb24.bmp", "none"), ("rgba32-v5.bmp", "bitfields"), ("palette1.bmp", "none"), ("palette4.bmp", "none"),
        ("palette8.bmp", "none"), ("rle8.bmp", "rle8"), ("rgb565.bmp", "bitfields"), ("rgb555.bmp", "bitfields"),
        ("os2-rgb24.bmp", "none"),
    ]

    @Test("decodes like ImageMagick", arguments: bitmaps)
    func bitmapMatchesReference(name: String, compression: String) throws {
        let data = try ConformanceFixture.data(name)
        #expect(ImageFormat.sniff(data) == .bmp)
        let image = try ImageCodecRegistry.shared.decode(data)
        let reference = try ConformanceFixture.reference(name)
        #expect(reference.count == image.width * image.height * 4)
        // 5 and 6-bit channels: ImageMagick widens by bit replication, Alcedo by rounding (within 1).
        let tolerance = name.hasPrefix("rgb56") || name.hasPrefix("rgb55") ? 1 : 0
        let difference = ConformanceFixture.maxVisibleDifference(image.pixels, reference)
        #expect(difference <= tolerance, "\(name): \(difference)")
        #expect(try BMPDecoder().info(for: data).compression == compression)
    }

    @Test func iconEntriesAreListedAndTheLargestIsDecoded() throws {
        let data = try ConformanceFixture.data("icons.ico")
        #expect(ImageFormat.sniff(data) == .ico)
        let info = try ImageCodecRegistry.shared.info(for: data)
        #expect(info.entries.map(\.width) == [16, 32, 48, 256])
        #expect(info.entries.map(\.encoding) == [.bmp, .bmp, .bmp, .png])
        #expect(info.width == 256 && info.compression == "png")
        let largest = try ImageCodecRegistry.shared.decode(data)
        #expect(largest.width == 256 && largest.sourceFormat == .ico)
        // The PNG entry is 16-bit: within 1 after rounding.
        #expect(ConformanceFixture.maxVisibleDifference(largest.pixels, try ConformanceFixture.reference("icons.ico", suffix: ".3")) <= 1)
    }

    @Test("an option picks the entry closest to a size", arguments: [(16, 0), (30, 1), (40, 2), (200, 3)])
    func preferredIconSize(size: Int, entry: Int) throws {
        let data = try ConformanceFixture.data("icons.ico")
        var options = DecodingOptions()
        options.preferredIconSize = PixelSize(width: size, height: size)
        let image = try ICODecoder().decode(data, options: options)
        let expected = try ConformanceFixture.reference("icons.ico", suffix: ".\(entry)")
        #expect(image.width * image.height * 4 == expected.count)
        #expect(ConformanceFixture.maxVisibleDifference(image.pixels, expected) <= (entry == 3 ? 1 : 0))
    }

    @Test func targetSizePicksTheSmallestCoveringEntry() throws {
        let data = try ConformanceFixture.data("icons.ico")
        #expect(try ICODecoder().decode(data, options: DecodingOptions(targetSize: PixelSize(width: 32, height: 32))).width == 32)
        #expect(try ICODecoder().decode(data, options: DecodingOptions(targetSize: PixelSize(width: 33, height: 33))).width == 48)
        #expect(try ICODecoder().decode(data, options: DecodingOptions(targetSize: PixelSize(width: 999, height: 999))).width == 256)
    }

    @Test func cursorsDecodeAndReportTheirHotSpot() throws {
        let data = try ConformanceFixture.data("cursor.cur")
        #expect(ImageFormat.sniff(data) == .ico)
        let info = try ImageCodecRegistry.shared.info(for: data)
        #expect(info.colorModel == "cursor")
        #expect(info.entries.first?.hotSpot?.x == 3 && info.entries.first?.hotSpot?.y == 5)
        let image = try ImageCodecRegistry.shared.decode(data)
        #expect(ConformanceFixture.maxVisibleDifference(image.pixels, try ConformanceFixture.reference("cursor.cur")) == 0)
    }
}

/// Bitmaps built byte by byte.
@Suite("BMP decoder")
struct BMPDecoderTests {
    /// File header + BITMAPINFOHEADER (+ `extra` after it: masks or palette) + pixel data.
    static func bitmap(width: Int32, height: Int32, bitCount: UInt16, compression: UInt32 = 0, extra: [UInt8] = [],
                       colors: UInt32 = 0, pixels: [UInt8]) -> Data {
        var b: [UInt8] = Array("BM".utf8)
        func put32(_ v: UInt32) { for i in 0..<4 { b.append(UInt8((v >> (8 * UInt32(i))) & 0xFF)) } }
        func put16(_ v: UInt16) { b += [UInt8(v & 0xFF), UInt8(v >> 8)] }
        let offset = UInt32(14 + 40 + extra.count)
        put32(offset + UInt32(pixels.count)); put32(0); put32(offset)
        put32(40); put32(UInt32(bitPattern: width)); put32(UInt32(bitPattern: height)); put16(1); put16(bitCount)
        put32(compression); put32(UInt32(pixels.count)); put32(0); put32(0); put32(colors); put32(0)
        return Data(b + extra + pixels)
    }

    static let redGreenBlueWhite: [UInt8] = [0, 0, 255, 0, 0, 255, 0, 0, 255, 0, 0, 0, 255, 255, 255, 0]

    @Test func rle4WithDeltaEndOfLineAndAbsoluteRuns() throws {
        // 6x3, bottom-up. Row 0 (bottom): run of 4 alternating red/green, EOL. Row 1: absolute
        // 3 pixels blue, white, blue, then delta (+1, +1) to (4, 2), run of 2 white, EOB.
        let pixels: [UInt8] = [4, 0x01, 0, 0, 0, 3, 0x23, 0x20, 0, 2, 1, 1, 2, 0x33, 0, 1]
        let data = Self.bitmap(width: 6, height: 3, bitCount: 4, compression: 2, extra: Self.redGreenBlueWhite, colors: 4, pixels: pixels)
        let image = try BMPDecoder().decode(data)
        let red = RGBA(red: 255, green: 0, blue: 0), green = RGBA(red: 0, green: 255, blue: 0)
        let blue = RGBA(red: 0, green: 0, blue: 255), white = RGBA.white
        #expect((0..<4).map { image.pixel(x: $0, y: 2) } == [red, green, red, green])
        #expect(image.pixel(x: 4, y: 2) == .clear && image.pixel(x: 5, y: 2) == .clear)
        #expect((0..<3).map { image.pixel(x: $0, y: 1) } == [blue, white, blue])
        #expect(image.pixel(x: 3, y: 1) == .clear)
        #expect(image.pixel(x: 4, y: 0) == white && image.pixel(x: 5, y: 0) == white && image.pixel(x: 0, y: 0) == .clear)
        #expect(try BMPDecoder().info(for: data).compression == "rle4")
    }

    @Test func twoBitPaletteTopDown() throws {
        // 4x2 top-down, 2 bits a pixel: row 0 = 0,1,2,3; row 1 = 3,2,1,0.
        let pixels: [UInt8] = [0b00_01_10_11, 0, 0, 0, 0b11_10_01_00, 0, 0, 0]
        let data = Self.bitmap(width: 4, height: -2, bitCount: 2, extra: Self.redGreenBlueWhite, colors: 4, pixels: pixels)
        let image = try BMPDecoder().decode(data)
        #expect(image.pixel(x: 0, y: 0) == RGBA(red: 255, green: 0, blue: 0))
        #expect(image.pixel(x: 3, y: 0) == .white)
        #expect(image.pixel(x: 0, y: 1) == .white)
        #expect(image.pixel(x: 1, y: 1) == RGBA(red: 0, green: 0, blue: 255))
    }

    @Test func sixteenBitBitfieldsWithAlpha() throws {
        // ALPHABITFIELDS 4-4-4-4 (A R G B from the top nibble), one pixel 0x8F00: half alpha, full red.
        var masks: [UInt8] = []
        for mask: UInt32 in [0x0F00, 0x00F0, 0x000F, 0xF000] { for i in 0..<4 { masks.append(UInt8((mask >> (8 * UInt32(i))) & 0xFF)) } }
        let data = Self.bitmap(width: 1, height: 1, bitCount: 16, compression: 6, extra: masks, pixels: [0x00, 0x8F, 0, 0])
        let pixel = try BMPDecoder().decode(data).pixel(x: 0, y: 0)
        #expect(pixel == RGBA(red: 255, green: 0, blue: 0, alpha: 136))
    }

    @Test func thirtyTwoBitWithAllZeroAlphaIsOpaque() throws {
        let data = Self.bitmap(width: 2, height: 1, bitCount: 32, pixels: [10, 20, 30, 0, 40, 50, 60, 0])
        let image = try BMPDecoder().decode(data)
        #expect(image.pixel(x: 0, y: 0) == RGBA(red: 30, green: 20, blue: 10))
        #expect(!image.hasAlpha)
        let withAlpha = Self.bitmap(width: 2, height: 1, bitCount: 32, pixels: [10, 20, 30, 128, 40, 50, 60, 0])
        #expect(try BMPDecoder().decode(withAlpha).pixel(x: 0, y: 0).alpha == 128)
    }

    @Test func shrinksWhileDecodingForATargetSize() throws {
        let image = AlcedoImage(width: 64, height: 40, pixels: (0..<(64 * 40 * 4)).map { $0 % 4 == 3 ? 255 : UInt8(truncatingIfNeeded: $0 / 7) })
        let data = try BMPEncoder().encode(image)
        let small = try BMPDecoder().decode(data, options: DecodingOptions(targetSize: PixelSize(width: 8, height: 5)))
        #expect(small.width == 16 && small.height == 10)
    }

    @Test func notABitmapIsAnInvalidHeader() {
        for bytes: [UInt8] in [Array("BMxx".utf8), Array("BM".utf8) + [UInt8](repeating: 0, count: 12) + [41, 0, 0, 0] + [UInt8](repeating: 0, count: 40)] {
            #expect(throws: AlcedoError.self) { _ = try BMPDecoder().decode(Data(bytes)) }
        }
    }
}

@Suite("BMP, ICO and TIFF encoders")
struct BMPICOTIFFEncoderTests {
    static let opaque = AlcedoImage(width: 13, height: 7, pixels: (0..<(13 * 7 * 4)).map { $0 % 4 == 3 ? 255 : UInt8(truncatingIfNeeded: $0 &* 29) })
    static let translucent = AlcedoImage(width: 13, height: 7, pixels: (0..<(13 * 7 * 4)).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    @Test("BMP round trip", arguments: [opaque, translucent])
    func bmpRoundTrip(image: AlcedoImage) throws {
        let data = try ImageCodecRegistry.shared.encode(image, as: .bmp)
        #expect(ImageFormat.sniff(data) == .bmp)
        let info = try BMPDecoder().info(for: data)
        #expect(info.bitDepth == (image.hasAlpha ? 32 : 24))
        #expect(try ImageCodecRegistry.shared.decode(data).pixels == image.pixels)
    }

    @Test("TIFF round trip", arguments: [TIFFEncoder.Compression.lzw, .deflate])
    func tiffRoundTrip(compression: TIFFEncoder.Compression) throws {
        for image in [Self.opaque, Self.translucent] {
            let data = try TIFFEncoder(compression: compression).encode(image)
            #expect(ImageFormat.sniff(data) == .tiff)
            let info = try TIFFDecoder().info(for: data)
            #expect(info.compression == compression.rawValue && info.colorModel == (image.hasAlpha ? "rgba" : "rgb"))
            #expect(try TIFFDecoder().decode(data).pixels == image.pixels)
        }
    }

    @Test func tiffKeepsAPreservedProfile() throws {
        let profile = try #require(ImageColorProfile(iccData: try Fixtures.data("color-generated/adobe-rgb.icc")))
        let tagged = Self.opaque.withColorMetadata(ImageColorMetadata(sourceProfile: profile, pixelProfile: profile))
        let data = try TIFFEncoder().encode(tagged)
        let info = try TIFFDecoder().info(for: data)
        #expect(info.colorProfile?.data == profile.data)
        let bmp = try BMPEncoder().encode(tagged)
        #expect(try BMPDecoder().info(for: bmp).colorProfile?.data == profile.data)
    }

    @Test func icoWritesOneEntryPerSize() throws {
        let big = Self.translucent.resized(to: PixelSize(width: 300, height: 150))
        let data = try ICOEncoder(sizes: [16, 32, 256]).encode(big)
        let info = try ICODecoder().info(for: data)
        #expect(info.entries.map(\.width) == [16, 32, 256])
        #expect(info.entries.map(\.height) == [8, 16, 128])
        #expect(info.entries.allSatisfy { $0.encoding == .png })
        let single = try ImageCodecRegistry.shared.encode(Self.translucent, as: .ico)
        let decoded = try ImageCodecRegistry.shared.decode(single)
        #expect(decoded.pixels == Self.translucent.pixels)
        #expect(throws: AlcedoError.self) { _ = try ICOEncoder(sizes: [512]).encode(Self.opaque) }
    }
}

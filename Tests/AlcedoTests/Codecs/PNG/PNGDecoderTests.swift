import Foundation
import Testing
@testable import Alcedo

/// Builds PNG bytes chunk by chunk, for files no tool would write.
enum PNGTestFile {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
    }

    static func header(width: UInt32, height: UInt32, depth: UInt8 = 8, colorType: UInt8 = 0) -> [UInt8] {
        chunk("IHDR", bigEndian(width) + bigEndian(height) + [depth, colorType, 0, 0, 0])
    }

    /// A zlib stream holding `raw` in stored (uncompressed) blocks.
    static func zlibStored(_ raw: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, raw.count - offset)
            let last: UInt8 = offset + count == raw.count ? 1 : 0
            let length = UInt16(count)
            out += [last, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
            out += raw[offset..<offset + count]
            offset += count
        } while offset < raw.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in raw { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
        return out + bigEndian(b << 16 | a)
    }

    /// Re-computes the CRC of every chunk (after a test edited chunk data).
    static func fixingCRCs(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        var offset = 8
        while offset + 12 <= out.count {
            let length = out[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            guard offset + 12 + length <= out.count else { break }
            let crc = bigEndian(crc32(Array(out[(offset + 4)..<(offset + 8 + length)])))
            out.replaceSubrange((offset + 8 + length)..<(offset + 12 + length), with: crc)
            offset += 12 + length
        }
        return out
    }
}

/// The decoding error a call threw (`nil` when it did not throw). Any other error comes back as
/// an `.unsupportedFeature` of format `.unknown` naming it, which no expectation matches.
func pngGIFDecodingFailure(_ body: () throws -> Void) -> DecodingErrorReason? {
    do {
        try body()
        return nil
    } catch let error as AlcedoError where error.decodingReason != nil {
        return error.decodingReason
    } catch {
        return .unsupportedFeature(format: .unknown, message: "not a decoding error: \(error)")
    }
}

extension DecodingErrorReason {
    var pngGIFKind: String {
        switch self {
        case .emptyData: return "empty"
        case .unsupportedFormat: return "unsupported"
        case .invalidHeader: return "header"
        case .corrupt: return "corrupt"
        case .truncated: return "truncated"
        case .unsupportedFeature: return "feature"
        case .tooManyPixels: return "pixels"
        case .tooManyFrames: return "frames"
        case .animationTooLarge: return "animation"
        case .workingMemoryTooLarge: return "working memory"
        case .timedOut: return "timed out"
        case .tooComplex: return "too complex"
        case .pageOutOfRange: return "page"
        }
    }
}

@Suite("PNG decoder")
struct PNGDecoderTests {
    let decoder = PNGDecoder()

    /// The files that crashed earlier libpng versions, and Go's invalid files: each is a typed
    /// error of the expected kind.
    @Test(arguments: [
        ("libpng/testpngs/crashers/bad_iCCP.png", "corrupt"),
        ("libpng/testpngs/crashers/badadler.png", "corrupt"),
        ("libpng/testpngs/crashers/badcrc.png", "corrupt"),
        ("libpng/testpngs/crashers/empty_ancillary_chunks.png", "corrupt"),
        ("libpng/testpngs/crashers/huge_IDAT.png", "truncated"),
        ("go-image/png-testdata/invalid-crc32.png", "corrupt"),
        ("go-image/png-testdata/invalid-noend.png", "truncated"),
        ("go-image/png-testdata/invalid-palette.png", "corrupt"),
        ("go-image/png-testdata/invalid-trunc.png", "truncated"),
        ("go-image/png-testdata/invalid-zlib.png", "corrupt"),
    ])
    func invalidFileIsATypedError(file: String, kind: String) throws {
        let data = try Fixtures.data(file)
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(data, options: .default) }?.pngGIFKind == kind)
    }

    @Test func everyCrasherIsATypedError() throws {
        let files = try Fixtures.files(in: "libpng/testpngs/crashers", suffix: ".png")
        #expect(files.count == 23)
        for file in files {
            let data = try Fixtures.data("libpng/testpngs/crashers/" + file)
            let failure = pngGIFDecodingFailure { _ = try decoder.decode(data, options: .default) }
            #expect(failure != nil, "\(file) decoded")
            if file.hasPrefix("huge_") && file != "huge_IDAT.png" {
                #expect(failure?.pngGIFKind == "truncated", "\(file): \(String(describing: failure))")
            }
        }
    }

    @Test func paletteIndexPastThePaletteIsNamed() throws {
        let data = try Fixtures.data("go-image/png-testdata/invalid-palette.png")
        let failure = pngGIFDecodingFailure { _ = try decoder.decode(data, options: .default) }
        #expect(failure == .corrupt(format: .png, message: "palette index 255 is past the 255 entries of PLTE"))
    }

    @Test func emptyAndTinyInputs() {
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(Data(), options: .default) } == .emptyData)
        #expect(pngGIFDecodingFailure { _ = try decoder.info(for: Data(), options: .default) } == .emptyData)
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(Data([0x89]), options: .default) }?.pngGIFKind == "truncated")
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(Data([0x89, 0x50]), options: .default) }?.pngGIFKind == "truncated")
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(Data([0, 1, 2]), options: .default) }?.pngGIFKind == "header")
        #expect(pngGIFDecodingFailure { _ = try decoder.info(for: Data([0, 1, 2]), options: .default) } != nil)
    }

    /// Every proper prefix of a file is truncated (the empty one is empty).
    @Test(arguments: ["libpng/testpngs/palette-4-sRGB-tRNS.png", "go-image/png-testdata/pngsuite/basn3p04-31i.png"])
    func everyPrefixIsTruncated(file: String) throws {
        let bytes = try [UInt8](Fixtures.data(file))
        for length in 0..<bytes.count {
            let failure = pngGIFDecodingFailure { _ = try decoder.decode(Data(bytes[0..<length]), options: .default) }
            #expect(failure?.pngGIFKind == (length == 0 ? "empty" : "truncated"), "prefix of \(length) bytes: \(String(describing: failure))")
            _ = try? decoder.info(for: Data(bytes[0..<length]), options: .default)
        }
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(Data(bytes), options: .default) } == nil)
    }

    /// Every chunk is covered by a CRC: flipping any bit of a file is an error.
    @Test func everySingleBitFlipIsAnError() throws {
        let bytes = try [UInt8](Fixtures.data("libpng/testpngs/palette-2-1.8-tRNS.png"))
        for index in 0..<bytes.count {
            for bit in 0..<8 {
                var flipped = bytes
                flipped[index] ^= 1 << bit
                let failure = pngGIFDecodingFailure { _ = try decoder.decode(Data(flipped), options: .default) }
                #expect(failure != nil, "flip of bit \(bit) in byte \(index) decoded")
            }
        }
    }

    /// Flips inside the compressed data with the CRCs made right again, so that libpng itself
    /// meets the damage: a typed error or an image, never a crash.
    @Test func corruptCompressedDataWithValidCRCsNeverCrashes() throws {
        let bytes = try [UInt8](Fixtures.data("go-image/png-testdata/pngsuite/basn2c08.png"))
        var outcomes: [String: Int] = [:]
        var generator = SeededRandom(seed: 7)
        for _ in 0..<300 {
            var damaged = bytes
            for _ in 0..<3 {
                let index = 60 + Int(generator.next() % UInt64(bytes.count - 80))
                damaged[index] ^= UInt8(1 << (generator.next() % 8))
            }
            damaged = PNGTestFile.fixingCRCs(damaged)
            do {
                let image = try decoder.decode(Data(damaged), options: .default)
                #expect(image.pixels.count == 32 * 32 * 4)
                outcomes["decoded", default: 0] += 1
            } catch {
                guard case .decodingFailed(let reason)? = error.processorCause else { Issue.record("not a decoding error: \(error)"); continue }
                outcomes[reason.pngGIFKind, default: 0] += 1
            }
        }
        #expect(outcomes["corrupt", default: 0] + outcomes["truncated", default: 0] > 0, "\(outcomes)")
    }

    @Test func hugeDeclaredSizeIsRefusedBeforeAllocating() throws {
        let png = PNGTestFile.signature + PNGTestFile.header(width: 100_000, height: 100_000)
            + PNGTestFile.chunk("IDAT", PNGTestFile.zlibStored([0, 0, 0]))
            + PNGTestFile.chunk("IEND", [])
        let failure = pngGIFDecodingFailure { _ = try decoder.decode(Data(png), options: .default) }
        #expect(failure == .tooManyPixels(format: .png, width: 100_000, height: 100_000, limit: 100_000_000))
        // The header alone reads fine.
        let info = try decoder.info(for: Data(png), options: .default)
        #expect(info.width == 100_000 && info.height == 100_000)
    }

    @Test func customPixelLimit() throws {
        let data = try Fixtures.data("go-image/png-testdata/pngsuite/basn6a08.png")
        let options = DecodingOptions(limits: DecodingLimits(maxPixelCount: 1000))
        #expect(pngGIFDecodingFailure { _ = try decoder.decode(data, options: options) }
            == .tooManyPixels(format: .png, width: 32, height: 32, limit: 1000))
        #expect(try decoder.decode(data, options: DecodingOptions(limits: DecodingLimits(maxPixelCount: 1024))).width == 32)
    }

    @Test func handMadeFileDecodes() throws {
        // 2x2 RGB, rows [red, green] and [blue, white], filter type 0.
        let raw: [UInt8] = [0, 255, 0, 0, 0, 255, 0, 0, 0, 0, 255, 255, 255, 255]
        let png = PNGTestFile.signature + PNGTestFile.header(width: 2, height: 2, colorType: 2)
            + PNGTestFile.chunk("IDAT", PNGTestFile.zlibStored(raw)) + PNGTestFile.chunk("IEND", [])
        let image = try decoder.decode(Data(png), options: .default)
        #expect(image.pixel(x: 0, y: 0) == RGBA(red: 255, green: 0, blue: 0))
        #expect(image.pixel(x: 1, y: 0) == RGBA(red: 0, green: 255, blue: 0))
        #expect(image.pixel(x: 0, y: 1) == RGBA(red: 0, green: 0, blue: 255))
        #expect(image.pixel(x: 1, y: 1) == .white)
        // Bytes after IEND are ignored; a zero-length IDAT split is fine.
        let padded = png + [1, 2, 3]
        #expect(try decoder.decode(Data(padded), options: .default).pixels == image.pixels)
    }

    @Test func malformedHeadersAreInvalidHeaders() {
        let idat = PNGTestFile.chunk("IDAT", PNGTestFile.zlibStored([0, 0])) + PNGTestFile.chunk("IEND", [])
        let cases: [[UInt8]] = [
            PNGTestFile.header(width: 0, height: 1),
            PNGTestFile.header(width: 1, height: 1, depth: 3),
            PNGTestFile.header(width: 1, height: 1, depth: 8, colorType: 5),
            PNGTestFile.chunk("IHDR", [0, 0, 0, 1, 0, 0, 0, 1, 8]),
            PNGTestFile.chunk("gAMA", [0, 0, 0xB1, 0x8F]),
        ]
        for header in cases {
            let failure = pngGIFDecodingFailure { _ = try decoder.decode(Data(PNGTestFile.signature + header + idat), options: .default) }
            #expect(failure?.pngGIFKind == "header", "\(String(describing: failure))")
        }
    }

    @Test func infoReportsSizeAndAlpha() throws {
        let cases: [(String, Int, Int, Bool)] = [
            ("libpng/testpngs/rgb-8.png", 256, 256, false),
            ("libpng/testpngs/rgb-8-tRNS.png", 256, 256, true),
            ("libpng/testpngs/rgb-alpha-8.png", 256, 256, true),
            ("libpng/testpngs/palette-8-tRNS.png", 256, 1, true),
            ("go-image/png-testdata/pngsuite/basn3p04-31i.png", 31, 31, false),
        ]
        for (file, width, height, alpha) in cases {
            let info = try decoder.info(for: Fixtures.data(file), options: .default)
            #expect(info == ImageInfo(format: .png, width: width, height: height, hasAlpha: alpha), "\(file)")
        }
    }

    /// An APNG (made with Pillow: 4x4, a red frame of 50 ms then a half-transparent blue one)
    /// decodes as its default image when only the first frame is asked for.
    @Test func animatedPNGFirstFrameIsItsDefaultImage() throws {
        let data = try Fixtures.data("png-generated/two-frames.apng.png")
        #expect(ImageFormat.sniff(data) == .apng)
        let image = try decoder.decode(data, options: DecodingOptions(firstFrameOnly: true))
        #expect(image.frames.count == 1)
        #expect(image.sourceFormat == .apng)
        #expect(image.width == 4 && image.height == 4)
        #expect(image.pixel(x: 3, y: 3) == RGBA(red: 255, green: 0, blue: 0))
        #expect(try decoder.info(for: data, options: .default).format == .apng)
    }
}


import Foundation
import Synchronization
import Testing
@testable import Alcedo

/// Reference decodes for the JPEG tests: djpeg 2.1.5 with its default settings, recorded as
/// (size, FNV-1a 64 of the RGB bytes) by `Fixtures/jpeg-generated/generate.py`.
enum JPEGReferences {
    struct Reference: Sendable, CustomStringConvertible {
        let file: String
        let width: Int
        let height: Int
        let hash: UInt64
        var description: String { file }
    }

    /// Go's test images: every chroma subsampling, baseline and progressive, RGB (Adobe
    /// transform 0), inverted CMYK (djpeg turns it into RGB as R = C·K/255, as the decoder
    /// does) and grayscale.
    static let goImages: [Reference] = [
        Reference(file: "video-001.221212.jpeg", width: 150, height: 103, hash: 0x61D1_DA4E_4C86_3DA4),
        Reference(file: "video-001.cmyk.jpeg", width: 150, height: 103, hash: 0xC006_3A4A_DBF1_B5FA),
        Reference(file: "video-001.jpeg", width: 150, height: 103, hash: 0x7A35_A99C_1276_FBE1),
        Reference(file: "video-001.progressive.jpeg", width: 150, height: 103, hash: 0x7A35_A99C_1276_FBE1),
        Reference(file: "video-001.q50.410.jpeg", width: 150, height: 103, hash: 0x768E_710B_1BC9_7FC1),
        Reference(file: "video-001.q50.410.progressive.jpeg", width: 150, height: 103, hash: 0x768E_710B_1BC9_7FC1),
        Reference(file: "video-001.q50.411.jpeg", width: 150, height: 103, hash: 0x1429_A84C_AC79_362D),
        Reference(file: "video-001.q50.411.progressive.jpeg", width: 150, height: 103, hash: 0x1429_A84C_AC79_362D),
        Reference(file: "video-001.q50.420.jpeg", width: 150, height: 103, hash: 0xAA91_8482_85BE_B793),
        Reference(file: "video-001.q50.420.progressive.jpeg", width: 150, height: 103, hash: 0xAA91_8482_85BE_B793),
        Reference(file: "video-001.q50.422.jpeg", width: 150, height: 103, hash: 0xE7FD_1ECD_7B28_87B4),
        Reference(file: "video-001.q50.422.progressive.jpeg", width: 150, height: 103, hash: 0xE7FD_1ECD_7B28_87B4),
        Reference(file: "video-001.q50.440.jpeg", width: 150, height: 103, hash: 0xE863_87C6_816E_55E5),
        Reference(file: "video-001.q50.440.progressive.jpeg", width: 150, height: 103, hash: 0xE863_87C6_816E_55E5),
        Reference(file: "video-001.q50.444.jpeg", width: 150, height: 103, hash: 0x6A12_1A8D_956B_3306),
        Reference(file: "video-001.q50.444.progressive.jpeg", width: 150, height: 103, hash: 0x6A12_1A8D_956B_3306),
        Reference(file: "video-001.rgb.jpeg", width: 150, height: 103, hash: 0xE7C4_B763_82AA_0160),
        Reference(file: "video-001.separate.dc.progression.jpeg", width: 150, height: 103, hash: 0xB1A4_9A44_5965_6316),
        Reference(file: "video-001.separate.dc.progression.progressive.jpeg", width: 150, height: 103, hash: 0xB1A4_9A44_5965_6316),
        Reference(file: "video-005.gray.jpeg", width: 150, height: 103, hash: 0xB29D_7BE7_8D87_31A1),
        Reference(file: "video-005.gray.q50.2x2.jpeg", width: 150, height: 103, hash: 0x8BC1_A914_2B4D_25BE),
        Reference(file: "video-005.gray.q50.2x2.progressive.jpeg", width: 150, height: 103, hash: 0x8BC1_A914_2B4D_25BE),
        Reference(file: "video-005.gray.q50.jpeg", width: 150, height: 103, hash: 0x8BC1_A914_2B4D_25BE),
        Reference(file: "video-005.gray.q50.progressive.jpeg", width: 150, height: 103, hash: 0x8BC1_A914_2B4D_25BE),
    ]

    /// `djpeg sequential-3-scans.jpg`: a sequential file with one scan per component.
    static let sequentialMultiScan = Reference(file: "sequential-3-scans.jpg", width: 48, height: 32, hash: 0x8C54_AE8D_6324_4484)
    /// `djpeg testorig.jpg`.
    static let testorig = Reference(file: "testorig.jpg", width: 227, height: 149, hash: 0x6636_942C_0993_83B0)
    /// `djpeg -scale 1/2 testorig.jpg`.
    static let testorigHalf = Reference(file: "testorig.jpg", width: 114, height: 75, hash: 0xD03C_3D93_3794_BFFB)
    /// `djpeg -scale 1/8 testorig.jpg`.
    static let testorigEighth = Reference(file: "testorig.jpg", width: 29, height: 19, hash: 0x268F_0E59_EA7A_5357)
    /// djpeg's decode of the first 3000 bytes of testorig.jpg ("Premature end of JPEG file", grey fill).
    static let testorigFirst3000Bytes = Reference(file: "testorig.jpg", width: 227, height: 149, hash: 0xF6D4_664C_F093_C334)
    /// djpeg's decode of Go's progressive file that stops after its first scans (with an EOI).
    static let truncatedProgressive = Reference(
        file: "video-001.progressive.truncated.jpeg", width: 150, height: 103, hash: 0x81D0_159B_FD84_771D)
}

/// Helpers shared by the JPEG test suites.
enum JPEGTestSupport {
    /// FNV-1a 64 of the RGB bytes of RGBA8 pixels (alpha left out), as generate.py computes it.
    static func rgbHash(_ rgba: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for (index, byte) in rgba.enumerated() where index % 4 != 3 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// `true` when every alpha byte is 255.
    static func isOpaque(_ rgba: [UInt8]) -> Bool {
        stride(from: 3, to: rgba.count, by: 4).allSatisfy { rgba[$0] == 255 }
    }

    /// The name of the decoding error `body` throws ("none" when it returns, "other" for a
    /// non-decoding error), so that tests can state the expected failure in one line.
    static func failure<T>(_ body: () throws(AlcedoError) -> T) -> String {
        do {
            _ = try body()
            return "none"
        } catch {
            guard case .decodingFailed(let reason)? = error.processorCause else { return "other" }
            switch reason {
            case .emptyData: return "emptyData"
            case .unsupportedFormat: return "unsupportedFormat"
            case .invalidHeader: return "invalidHeader"
            case .corrupt: return "corrupt"
            case .truncated: return "truncated"
            case .unsupportedFeature: return "unsupportedFeature"
            case .tooManyPixels: return "tooManyPixels"
            case .tooManyFrames: return "tooManyFrames"
            case .animationTooLarge: return "animationTooLarge"
            case .workingMemoryTooLarge: return "workingMemoryTooLarge"
            case .timedOut: return "timedOut"
            case .tooComplex: return "tooComplex"
            case .pageOutOfRange: return "pageOutOfRange"
            }
        }
    }

    /// The decoding error `body` throws, or `nil`.
    static func decodingReason<T>(_ body: () throws(AlcedoError) -> T) -> DecodingErrorReason? {
        do {
            _ = try body()
            return nil
        } catch {
            if case .decodingFailed(let reason)? = error.processorCause { return reason }
            return nil
        }
    }

    /// One marker segment of a JPEG file: the marker byte and the byte range from its 0xFF,
    /// including, for SOS, the entropy-coded data that follows.
    struct Segment {
        let marker: UInt8
        let range: Range<Int>
    }

    /// Splits a well-formed JPEG into segments after SOI (test data only: no hostile input).
    static func segments(_ bytes: [UInt8]) -> [Segment] {
        var result: [Segment] = []
        var index = 2
        while index + 1 < bytes.count, bytes[index] == 0xFF {
            let marker = bytes[index + 1]
            if marker == 0xD9 {
                result.append(Segment(marker: marker, range: index..<index + 2))
                break
            }
            var end = index + 2 + (Int(bytes[index + 2]) << 8 | Int(bytes[index + 3]))
            if marker == 0xDA {
                while end + 1 < bytes.count,
                      !(bytes[end] == 0xFF && bytes[end + 1] != 0 && !(0xD0...0xD7).contains(bytes[end + 1])) {
                    end += 1
                }
            }
            result.append(Segment(marker: marker, range: index..<end))
            index = end
        }
        return result
    }

    /// The byte offset of the height field of the first SOFn segment.
    static func frameHeaderSizeOffset(_ bytes: [UInt8]) -> Int? {
        let frame = segments(bytes).first { [0xC0, 0xC1, 0xC2, 0xC9, 0xCA].contains($0.marker) }
        return frame.map { $0.range.lowerBound + 5 }
    }

    /// `bytes` with the first frame header declaring `width` x `height`.
    static func declaringSize(_ bytes: [UInt8], width: Int, height: Int) -> [UInt8] {
        guard let offset = frameHeaderSizeOffset(bytes) else { return bytes }
        var patched = bytes
        patched[offset] = UInt8(height >> 8)
        patched[offset + 1] = UInt8(height & 0xFF)
        patched[offset + 2] = UInt8(width >> 8)
        patched[offset + 3] = UInt8(width & 0xFF)
        return patched
    }
}

@Suite("JPEG decoder")
struct JPEGDecoderTests {
    let decoder = JPEGDecoder()

    static func fixture(_ path: String) throws -> Data { try Fixtures.data(path) }

    @Test("testorig.jpg decodes exactly as djpeg does, and close to the original picture")
    func testorig() throws {
        let image = try decoder.decode(Self.fixture("libjpeg-turbo/testorig.jpg"))
        #expect(image.width == 227 && image.height == 149)
        #expect(image.sourceFormat == .jpeg)
        #expect(JPEGTestSupport.isOpaque(image.pixels))
        #expect(JPEGTestSupport.rgbHash(image.pixels) == JPEGReferences.testorig.hash)
        // testorig.ppm is the uncompressed picture libjpeg-turbo compresses in its own tests,
        // not a decode of testorig.jpg (no djpeg setting reproduces it): close, not equal.
        let original = try PPMImage(data: Self.fixture("libjpeg-turbo/testorig.ppm"))
        #expect(original.width == image.width && original.height == image.height)
        #expect(PixelCompare.maxDifference(rgba: image.pixels, rgb: original.rgb) <= 3)
    }

    @Test("progressive and arithmetic-coded files decode exactly as djpeg does",
          arguments: ["testimgint.jpg", "testimgari.jpg"])
    func progressiveAndArithmetic(_ file: String) throws {
        let image = try decoder.decode(Self.fixture("libjpeg-turbo/\(file)"))
        let reference = try PPMImage(data: Self.fixture("jpeg-generated/testimgint.ppm"))
        #expect(image.width == reference.width && image.height == reference.height)
        #expect(PixelCompare.maxDifference(rgba: image.pixels, rgb: reference.rgb) == 0)
    }

    @Test("every subsampling, progression, RGB, CMYK and gray variant matches djpeg",
          arguments: JPEGReferences.goImages)
    func goVariants(_ reference: JPEGReferences.Reference) throws {
        // Without colour management, as djpeg-based tools decode (CMYK as R = C·K/255).
        let image = try decoder.decode(Self.fixture("go-image/image-testdata/\(reference.file)"),
                                       options: DecodingOptions(colorManagement: .ignore))
        #expect(image.width == reference.width && image.height == reference.height)
        #expect(JPEGTestSupport.isOpaque(image.pixels))
        #expect(JPEGTestSupport.rgbHash(image.pixels) == reference.hash)
    }

    @Test("info reads the header: size, orientation, one frame, no alpha")
    func info() throws {
        let info = try decoder.info(for: Self.fixture("libjpeg-turbo/testorig.jpg"), options: .default)
        #expect(info == ImageInfo(format: .jpeg, width: 227, height: 149, frameCount: 1, orientation: .up, hasAlpha: false))
        let gray = try decoder.info(for: Self.fixture("go-image/image-testdata/video-005.gray.jpeg"), options: .default)
        #expect(gray.width == 150 && gray.height == 103)
    }

    @Test("a progressive file whose scans stop early is truncated unless allowed")
    func truncatedProgressive() throws {
        let data = try Self.fixture("go-image/image-testdata/video-001.progressive.truncated.jpeg")
        #expect(JPEGTestSupport.failure { () throws(AlcedoError) in try decoder.decode(data, options: .default) } == "truncated")
        let image = try decoder.decode(data, options: DecodingOptions(allowTruncated: true))
        let reference = JPEGReferences.truncatedProgressive
        #expect(image.width == reference.width && image.height == reference.height)
        #expect(JPEGTestSupport.rgbHash(image.pixels) == reference.hash)
        // The header is complete, so info answers.
        #expect(try decoder.info(for: data, options: .default).width == 150)
    }

    @Test("a baseline file cut short is truncated unless allowed; then it matches djpeg's grey fill")
    func truncatedBaseline() throws {
        let data = try Self.fixture("libjpeg-turbo/testorig.jpg").prefix(3000)
        let reason = JPEGTestSupport.decodingReason { () throws(AlcedoError) in try decoder.decode(Data(data), options: .default) }
        #expect(reason == .truncated(format: .jpeg, message: "Premature end of JPEG file"))
        let image = try decoder.decode(Data(data), options: DecodingOptions(allowTruncated: true))
        #expect(JPEGTestSupport.rgbHash(image.pixels) == JPEGReferences.testorigFirst3000Bytes.hash)
    }

    @Test("a sequential file with one scan per component matches djpeg; without its last scan it is truncated")
    func sequentialMultiScan() throws {
        let data = try Self.fixture("jpeg-generated/sequential-3-scans.jpg")
        let image = try decoder.decode(data, options: .default)
        #expect(image.width == 48 && image.height == 32)
        #expect(JPEGTestSupport.rgbHash(image.pixels) == JPEGReferences.sequentialMultiScan.hash)

        let bytes = [UInt8](data)
        let lastScan = try #require(JPEGTestSupport.segments(bytes).last { $0.marker == 0xDA })
        let withoutLastScan = Data(bytes[..<lastScan.range.lowerBound] + [0xFF, 0xD9])
        let reason = JPEGTestSupport.decodingReason { () throws(AlcedoError) in try decoder.decode(withoutLastScan, options: .default) }
        #expect(reason == .truncated(format: .jpeg, message: "the scans end before the image is complete"))
        #expect(try decoder.decode(withoutLastScan, options: DecodingOptions(allowTruncated: true)).pixelSize == image.pixelSize)
    }

    @Test("12-bit JPEG is a clear unsupported-feature error")
    func twelveBit() throws {
        let data = try Self.fixture("libjpeg-turbo/testorig12.jpg")
        let reason = JPEGTestSupport.decodingReason { () throws(AlcedoError) in try decoder.decode(data, options: .default) }
        guard case .unsupportedFeature(.jpeg, let message) = reason else {
            Issue.record("expected unsupportedFeature, got \(String(describing: reason))")
            return
        }
        #expect(message.contains("12-bit"))
        #expect(JPEGTestSupport.failure { () throws(AlcedoError) in try decoder.info(for: data, options: .default) } == "unsupportedFeature")
    }

    @Test("concurrent decodes are independent and identical")
    func concurrent() throws {
        let data = try Self.fixture("go-image/image-testdata/video-001.q50.420.progressive.jpeg")
        let hashes = Mutex([UInt64]())
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let hash = (try? JPEGDecoder().decode(data, options: .default)).map { JPEGTestSupport.rgbHash($0.pixels) }
            hashes.withLock { $0.append(hash ?? 0) }
        }
        #expect(hashes.withLock { $0 } == [UInt64](repeating: 0xAA91_8482_85BE_B793, count: 8))
    }

    @Test("the pixel limit is checked from the header")
    func limits() throws {
        let data = try Self.fixture("libjpeg-turbo/testorig.jpg")
        let options = DecodingOptions(limits: DecodingLimits(maxPixelCount: 227 * 149 - 1))
        let reason = JPEGTestSupport.decodingReason { () throws(AlcedoError) in try decoder.decode(data, options: options) }
        #expect(reason == .tooManyPixels(format: .jpeg, width: 227, height: 149, limit: 227 * 149 - 1))
        #expect(try decoder.decode(data, options: DecodingOptions(limits: DecodingLimits(maxPixelCount: 227 * 149))).width == 227)
    }
}

@Suite("JPEG decoder: EXIF orientation")
struct JPEGOrientationTests {
    let decoder = JPEGDecoder()

    /// The upright pattern of the orientation files: 3 x 2 flat 8x8 blocks (see generate.py).
    static let colors: [RGBA] = [
        RGBA(red: 255, green: 0, blue: 0), RGBA(red: 0, green: 255, blue: 0), RGBA(red: 0, green: 0, blue: 255),
        RGBA(red: 255, green: 255, blue: 0), RGBA(red: 0, green: 0, blue: 0), RGBA(red: 255, green: 255, blue: 255),
    ]

    static func file(_ orientation: Int) throws -> Data {
        try Fixtures.data("jpeg-generated/orientation-\(orientation).jpg")
    }

    @Test("every orientation stands upright, in info and in pixels", arguments: 1...8)
    func upright(_ value: Int) throws {
        let data = try Self.file(value)
        let expected = try #require(ImageOrientation(rawValue: value))
        let info = try decoder.info(for: data, options: .default)
        #expect(info.orientation == expected)
        #expect(info.width == 24 && info.height == 16)

        let image = try decoder.decode(data, options: .default)
        #expect(image.orientation == expected)
        #expect(image.width == 24 && image.height == 16)
        for (index, color) in Self.colors.enumerated() {
            // Every pixel of each block, so a wrong turn (even by one pixel) is seen.
            for y in 0..<8 {
                for x in 0..<8 {
                    let pixel = image.pixel(x: (index % 3) * 8 + x, y: (index / 3) * 8 + y)
                    let difference = max(abs(Int(pixel.red) - Int(color.red)), abs(Int(pixel.green) - Int(color.green)),
                                         abs(Int(pixel.blue) - Int(color.blue)))
                    #expect(difference <= 4, "block \(index) pixel (\(x), \(y)): \(pixel), expected \(color)")
                }
            }
        }
        // Flat blocks aligned to the block grid decode the same wherever they are stored.
        let reference = try decoder.decode(Self.file(1), options: .default)
        #expect(image.pixels == reference.pixels)
    }

    @Test("without appliesOrientation the stored pixels and size are kept, the orientation recorded")
    func notApplied() throws {
        let options = DecodingOptions(appliesOrientation: false)
        let data = try Self.file(6)
        let info = try decoder.info(for: data, options: options)
        #expect(info.width == 16 && info.height == 24 && info.orientation == .right)
        let image = try decoder.decode(data, options: options)
        #expect(image.width == 16 && image.height == 24 && image.orientation == .right)
        // Orientation 6 stores the upright picture turned 90° counter-clockwise: the upright
        // top-left block (red) sits at the stored bottom-left.
        let pixel = image.pixel(x: 4, y: 20)
        #expect(pixel.red > 250 && pixel.green < 5 && pixel.blue < 5)
    }

    @Test("orientation and DCT scaling together: the target applies to the upright size")
    func scaledAndTurned() throws {
        let image = try decoder.decode(Self.file(6), options: DecodingOptions(targetSize: PixelSize(width: 12, height: 8)))
        #expect(image.width == 12 && image.height == 8)
    }
}

@Suite("JPEG decoder: DCT scaling")
struct JPEGScalingTests {
    let decoder = JPEGDecoder()

    struct Case: Sendable, CustomStringConvertible {
        let target: PixelSize
        let mode: ContentMode
        let expected: PixelSize
        var description: String { "\(target) \(mode.rawValue) -> \(expected)" }
    }

    /// testorig.jpg is 227x149.
    static let cases: [Case] = [
        Case(target: PixelSize(width: 114, height: 75), mode: .aspectFit, expected: PixelSize(width: 114, height: 75)),
        Case(target: PixelSize(width: 57, height: 38), mode: .aspectFit, expected: PixelSize(width: 57, height: 38)),
        Case(target: PixelSize(width: 29, height: 19), mode: .aspectFit, expected: PixelSize(width: 29, height: 19)),
        Case(target: PixelSize(width: 10, height: 10), mode: .aspectFit, expected: PixelSize(width: 29, height: 19)),
        // 115 wide needs more than half of 227: 1/2 would give 114, so full size.
        Case(target: PixelSize(width: 115, height: 75), mode: .aspectFit, expected: PixelSize(width: 227, height: 149)),
        Case(target: PixelSize(width: 200, height: 200), mode: .aspectFit, expected: PixelSize(width: 227, height: 149)),
        Case(target: PixelSize(width: 1000, height: 1000), mode: .aspectFit, expected: PixelSize(width: 227, height: 149)),
        // Filling 57x57 needs 57 rows: 1/4 gives 38, 1/2 gives 75.
        Case(target: PixelSize(width: 57, height: 57), mode: .aspectFill, expected: PixelSize(width: 114, height: 75)),
        Case(target: PixelSize(width: 20, height: 19), mode: .aspectFill, expected: PixelSize(width: 29, height: 19)),
    ]

    @Test("the largest reduction that still reaches the target", arguments: cases)
    func reduction(_ testCase: Case) throws {
        let data = try Fixtures.data("libjpeg-turbo/testorig.jpg")
        let options = DecodingOptions(targetSize: testCase.target, contentMode: testCase.mode)
        let image = try decoder.decode(data, options: options)
        #expect(image.pixelSize == testCase.expected)
        // Never below what the target needs.
        let scale = options.minimumScale(forWidth: 227, height: 149)
        #expect(Double(image.width) >= 227 * scale - 1e-9)
        #expect(Double(image.height) >= 149 * scale - 1e-9)
    }

    @Test("scaled decodes match djpeg -scale exactly")
    func matchesDjpeg() throws {
        let data = try Fixtures.data("libjpeg-turbo/testorig.jpg")
        let quarter = try decoder.decode(data, options: DecodingOptions(targetSize: PixelSize(width: 57, height: 38)))
        let reference = try PPMImage(data: Fixtures.data("jpeg-generated/testorig.scale-1-4.ppm"))
        #expect(quarter.width == reference.width && quarter.height == reference.height)
        #expect(PixelCompare.maxDifference(rgba: quarter.pixels, rgb: reference.rgb) == 0)

        for (target, reference) in [(PixelSize(width: 114, height: 75), JPEGReferences.testorigHalf),
                                    (PixelSize(width: 29, height: 19), JPEGReferences.testorigEighth)] {
            let image = try decoder.decode(data, options: DecodingOptions(targetSize: target))
            #expect(image.width == reference.width && image.height == reference.height)
            #expect(JPEGTestSupport.rgbHash(image.pixels) == reference.hash)
        }
    }

    @Test("the denominator rule on its own")
    func denominators() {
        func denominator(_ width: Int, _ height: Int, _ target: PixelSize?) -> Int {
            JPEGDecoder.scaleDenominator(width: width, height: height, options: DecodingOptions(targetSize: target))
        }
        #expect(denominator(4000, 3000, nil) == 1)
        #expect(denominator(4000, 3000, PixelSize(width: 500, height: 500)) == 8)
        #expect(denominator(4000, 3000, PixelSize(width: 501, height: 501)) == 4)
        #expect(denominator(4000, 3000, PixelSize(width: 1000, height: 1000)) == 4)
        #expect(denominator(4000, 3000, PixelSize(width: 1001, height: 1001)) == 2)
        #expect(denominator(4000, 3000, PixelSize(width: 2001, height: 2000)) == 1)
        #expect(denominator(1, 1, PixelSize(width: 1, height: 1)) == 1)
    }
}

@Suite("JPEG decoder, strip by strip")
struct JPEGRowDecodingTests {
    /// Full size, and DCT-scaled to fit 40x40.
    static let fullAndScaled = [DecodingOptions.default, DecodingOptions(targetSize: PixelSize(width: 40, height: 40), contentMode: .aspectFit)]

    /// Every strip of `decodeRows` joined, with the size `start` gave and the strips' first rows.
    static func rows(_ data: Data, options: DecodingOptions) throws -> (size: PixelSize?, pixels: [UInt8], firstRows: [Int], streamed: Bool) {
        var size: PixelSize?
        var pixels: [UInt8] = []
        var firstRows: [Int] = []
        let streamed = try JPEGDecoder().decodeRows(data, options: options, start: { size = $0 }, rows: { strip, first, count in
            #expect(strip.count == count * (size?.width ?? 0) * 4)
            pixels.append(contentsOf: strip)
            firstRows.append(first)
            return true
        })
        return (size, pixels, firstRows, streamed)
    }

    @Test("the strips joined equal the whole decode: plain, CMYK, P3 and gray files, full size and DCT-scaled",
          arguments: ["libjpeg-turbo/testorig.jpg", "color-generated/cmyk-plain-profile.jpg", "color-generated/ycck-inverted.jpg",
                      "color-generated/p3.jpg", "color-generated/gray-18.jpg"])
    func stripsEqualWholeDecode(_ name: String) throws {
        let data = try Fixtures.data(name)
        for options in JPEGRowDecodingTests.fullAndScaled {
            let whole = try JPEGDecoder().decode(data, options: options)
            let streamed = try Self.rows(data, options: options)
            #expect(streamed.streamed)
            #expect(streamed.size == whole.pixelSize)
            #expect(streamed.pixels == whole.frames[0].pixels, "\(name)")
            #expect(streamed.firstRows.first == 0)
            #expect(streamed.firstRows == streamed.firstRows.sorted())
        }
    }

    @Test("a file that must be turned is left to decode(): nothing is called; with orientation off it streams as stored")
    func orientedFile() throws {
        let data = try Fixtures.data("jpeg-generated/orientation-6.jpg")
        let turned = try Self.rows(data, options: .default)
        #expect(!turned.streamed)
        #expect(turned.size == nil && turned.pixels.isEmpty)
        let stored = try Self.rows(data, options: DecodingOptions(appliesOrientation: false))
        #expect(stored.streamed)
        #expect(stored.pixels == (try JPEGDecoder().decode(data, options: DecodingOptions(appliesOrientation: false))).frames[0].pixels)
    }

    @Test("returning false stops the decode after that strip; limits and truncation throw as decode() does")
    func stopsAndThrows() throws {
        let data = try Fixtures.data("libjpeg-turbo/testorig.jpg")
        var strips = 0
        let streamed = try JPEGDecoder().decodeRows(data, start: { _ in }, rows: { _, _, _ in strips += 1; return false })
        #expect(streamed && strips == 1)

        var limits = DecodingLimits.default
        limits.maxPixelCount = 100
        #expect(throws: AlcedoError.self) {
            _ = try JPEGDecoder().decodeRows(data, options: DecodingOptions(limits: limits), start: { _ in }, rows: { _, _, _ in true })
        }
        #expect(throws: AlcedoError.self) {
            _ = try JPEGDecoder().decodeRows(data.prefix(data.count / 2), start: { _ in }, rows: { _, _, _ in true })
        }
    }
}

@Suite("JPEG decoder, reading a file descriptor")
struct JPEGFileDescriptorTests {
    /// `body` with `data` written to a temporary file and opened for reading.
    static func withOpenFile<T>(_ data: Data, _ body: (Int32) throws -> T) throws -> T {
        let dir = try TemporaryDirectory()
        let url = dir.url.appendingPathComponent("picture.jpg")
        try data.write(to: url)
        let fd = open(url.path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        return try body(fd)
    }

    @Test("decode, info and decodeRows from a file equal the in-memory ones: full size, DCT-scaled, arithmetic-coded, YCCK, oriented",
          arguments: ["libjpeg-turbo/testorig.jpg", "libjpeg-turbo/testimgari.jpg", "color-generated/ycck-inverted.jpg",
                      "color-generated/p3.jpg", "jpeg-generated/orientation-6.jpg"])
    func fileEqualsMemory(_ name: String) throws {
        let data = try Fixtures.data(name)
        for options in JPEGRowDecodingTests.fullAndScaled {
            let expected = try JPEGDecoder().decode(data, options: options)
            let decoded = try Self.withOpenFile(data) { try JPEGDecoder().decode(fileDescriptor: $0, options: options) }
            #expect(decoded.pixelSize == expected.pixelSize && decoded.orientation == expected.orientation)
            #expect(decoded.frames[0].pixels == expected.frames[0].pixels, "\(name)")
            let info = try Self.withOpenFile(data) { try JPEGDecoder().info(fileDescriptor: $0, options: options) }
            #expect(info == (try JPEGDecoder().info(for: data, options: options)))
            var rows: [UInt8] = []
            let streamed = try Self.withOpenFile(data) { fd in
                try JPEGDecoder().decodeRows(fileDescriptor: fd, options: options, start: { _ in }, rows: { strip, _, _ in
                    rows.append(contentsOf: strip)
                    return true
                })
            }
            if streamed { #expect(rows == expected.frames[0].pixels) } else { #expect(expected.orientation != .up) }
        }
    }

    @Test("a truncated file is .truncated as in memory; an empty one and a descriptor not open are typed errors")
    func truncatedAndBadFiles() throws {
        let data = try Fixtures.data("libjpeg-turbo/testorig.jpg")
        let cut = data.prefix(data.count / 2)
        #expect {
            try Self.withOpenFile(cut) { _ = try JPEGDecoder().decode(fileDescriptor: $0) }
        } throws: { error in
            guard case .decodingFailed(.truncated)? = (error as? AlcedoError)?.processorCause else { return false }
            return true
        }
        var options = DecodingOptions.default
        options.allowTruncated = true
        let partial = try Self.withOpenFile(cut) { try JPEGDecoder().decode(fileDescriptor: $0, options: options) }
        #expect(partial.frames[0].pixels == (try JPEGDecoder().decode(cut, options: options)).frames[0].pixels)
        #expect(throws: AlcedoError.self) { try Self.withOpenFile(Data()) { _ = try JPEGDecoder().decode(fileDescriptor: $0) } }
        #expect(throws: AlcedoError.self) { _ = try JPEGDecoder().decode(fileDescriptor: -1) }
        // A folder opens but cannot be read: the read error is reported, not a crash.
        let dir = try TemporaryDirectory()
        let folder = open(dir.url.path, O_RDONLY)
        defer { close(folder) }
        #expect(throws: AlcedoError.self) { _ = try JPEGDecoder().decode(fileDescriptor: folder) }
    }
}

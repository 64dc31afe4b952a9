import Foundation
import Testing
@testable import Alcedo

@Suite("JPEG decoder on hostile input")
struct JPEGHostileInputTests {
    let decoder = JPEGDecoder()

    /// Decodes and reads the header of `bytes`; both must return or throw a decoding error.
    /// Returns the decode's failure name ("none" when it decoded).
    @discardableResult
    func survive(_ bytes: [UInt8], options: DecodingOptions = .default, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        let data = Data(bytes)
        let decoded = JPEGTestSupport.failure { () throws(AlcedoError) in try decoder.decode(data, options: options) }
        let info = JPEGTestSupport.failure { () throws(AlcedoError) in try decoder.info(for: data, options: options) }
        #expect(decoded != "other", sourceLocation: sourceLocation)
        #expect(info != "other", sourceLocation: sourceLocation)
        return decoded
    }

    @Test("empty data")
    func empty() {
        #expect(survive([]) == "emptyData")
    }

    @Test("one to three bytes, and SOI alone", arguments: [[0xFF], [0xFF, 0xD8], [0xFF, 0xD8, 0xFF], [0x00, 0x00, 0x00]] as [[UInt8]])
    func tiny(_ bytes: [UInt8]) {
        let failure = survive(bytes)
        #expect(failure == "invalidHeader" || failure == "truncated", "\(bytes): \(failure)")
    }

    @Test("other formats are an invalid JPEG header")
    func otherFormats() throws {
        let png = [UInt8](try Fixtures.data("go-image/png-testdata/gray-gradient.png"))
        #expect(survive(png) == "invalidHeader")
        let gif = [UInt8](try Fixtures.data("go-image/image-testdata/triangle-001.gif"))
        #expect(survive(gif) == "invalidHeader")
    }

    @Test("SOI followed by EOI, and SOI followed by random bytes")
    func randomAfterStart() {
        #expect(survive([0xFF, 0xD8, 0xFF, 0xD9]) == "invalidHeader")
        var random = SeededRandom(seed: 1)
        for _ in 0..<300 {
            let length = Int.random(in: 1...600, using: &random)
            let tail = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            let failure = survive([0xFF, 0xD8] + tail)
            #expect(failure != "none", "random bytes decoded as an image")
        }
    }

    @Test("random marker segments after SOI")
    func randomSegments() {
        var random = SeededRandom(seed: 2)
        let markers: [UInt8] = [0xC0, 0xC2, 0xC4, 0xDB, 0xDA, 0xDD, 0xE1, 0xEE, 0xFE, 0xC9, 0xCC]
        for _ in 0..<300 {
            var bytes: [UInt8] = [0xFF, 0xD8]
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let length = Int.random(in: 0...40, using: &random)
                bytes += [0xFF, markers.randomElement(using: &random) ?? 0xC0, 0, UInt8(length + 2)]
                bytes += (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            }
            survive(bytes)
        }
    }

    /// Files, the height of their MCU rows, and the step between prefix lengths tried.
    static let prefixFiles: [(file: String, mcuHeight: Int, step: Int)] = [
        ("jpeg-generated/orientation-1.jpg", 8, 1),
        ("go-image/image-testdata/video-001.q50.420.jpeg", 16, 3),
        ("go-image/image-testdata/video-001.q50.420.progressive.jpeg", 16, 3),
        ("jpeg-generated/sequential-3-scans.jpg", 16, 1),
    ]

    @Test("prefixes: an error unless the data ends in the last MCU row; with allowTruncated an image",
          arguments: prefixFiles)
    func prefixes(_ file: String, mcuHeight: Int, step: Int) throws {
        let bytes = [UInt8](try Fixtures.data(file))
        let full = try decoder.decode(Data(bytes), options: .default)
        let firstScan = try #require(JPEGTestSupport.segments(bytes).first { $0.marker == 0xDA }).range.lowerBound
        let headerEnd = firstScan + 2 + (Int(bytes[firstScan + 2]) << 8 | Int(bytes[firstScan + 3]))
        // A prefix decoded without allowTruncated lost data in the last MCU row only. Chroma
        // upsampling reaches one MCU row up, so the rows above that must be exact.
        let lastRow = (full.height - 1) / mcuHeight * mcuHeight
        let exactBytes = max(0, lastRow - mcuHeight) * full.width * 4
        var decodedPrefixes = 0, lenientImages = 0, lenientTries = 0
        for length in stride(from: 0, to: bytes.count, by: step) {
            let prefix = Data(bytes.prefix(length))
            do {
                let image = try decoder.decode(prefix, options: .default)
                decodedPrefixes += 1
                let exact = image.pixelSize == full.pixelSize && image.pixels.prefix(exactBytes) == full.pixels.prefix(exactBytes)
                #expect(exact, "prefix of \(length) bytes decoded with damage above the last MCU row")
            } catch {
                guard case .decodingFailed? = error.processorCause else {
                    Issue.record("prefix of \(length) bytes: \(error)")
                    continue
                }
            }
            let lenient = survive(Array(prefix), options: DecodingOptions(allowTruncated: true))
            if length >= headerEnd {
                // Only a cut inside a marker segment between scans (libjpeg reads the rest of
                // the segment as garbage) fails, and then as truncated.
                #expect(lenient == "none" || lenient == "truncated", "prefix of \(length) bytes with allowTruncated: \(lenient)")
                if lenient == "none" { lenientImages += 1 }
                lenientTries += 1
            }
        }
        // Only prefixes that end inside the last MCU row (of the last scan) may decode.
        #expect(decodedPrefixes * 4 < bytes.count / step, "\(decodedPrefixes) prefixes decoded")
        // With allowTruncated nearly every prefix with a whole header gives an image.
        #expect(lenientImages * 10 >= lenientTries * 9, "\(lenientImages) images from \(lenientTries) prefixes")
    }

    @Test("a file missing only its EOI marker decodes whole")
    func missingEndMarker() throws {
        let bytes = try Fixtures.data("go-image/image-testdata/video-001.q50.420.jpeg")
        let full = try decoder.decode(bytes, options: .default)
        #expect(try decoder.decode(bytes.dropLast(2), options: .default).pixels == full.pixels)
    }

    @Test("bit flips at every offset of small files never crash", arguments: [
        "jpeg-generated/orientation-5.jpg", "go-image/image-testdata/video-001.q50.420.progressive.jpeg",
        "go-image/image-testdata/video-005.gray.q50.jpeg",
    ])
    func bitFlips(_ file: String) throws {
        let bytes = [UInt8](try Fixtures.data(file))
        var failures: [String: Int] = [:]
        for offset in 0..<bytes.count {
            var flipped = bytes
            flipped[offset] ^= 1 << UInt8(offset % 8)
            failures[survive(flipped), default: 0] += 1
        }
        // Flips in the entropy-coded data mostly still decode; flips in the markers mostly fail.
        #expect(failures["none", default: 0] > 0)
        #expect(failures.keys.contains { $0 != "none" })
    }

    @Test("truncated and mangled files with allowTruncated never crash either")
    func lenientMangling() throws {
        let bytes = [UInt8](try Fixtures.data("go-image/image-testdata/video-001.q50.422.jpeg"))
        var random = SeededRandom(seed: 3)
        for _ in 0..<200 {
            var mangled = Array(bytes.prefix(Int.random(in: 2...bytes.count, using: &random)))
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                let offset = Int.random(in: 0..<mangled.count, using: &random)
                mangled[offset] = UInt8.random(in: 0...255, using: &random)
            }
            survive(mangled, options: DecodingOptions(allowTruncated: true))
        }
    }

    @Test("a header declaring 65500x65500 fails on the limit before anything is allocated")
    func giantHeader() throws {
        let bytes = JPEGTestSupport.declaringSize([UInt8](try Fixtures.data("libjpeg-turbo/testorig.jpg")), width: 65500, height: 65500)
        let data = Data(bytes)
        let reason = JPEGTestSupport.decodingReason { () throws(AlcedoError) in try decoder.decode(data, options: .default) }
        #expect(reason == .tooManyPixels(format: .jpeg, width: 65500, height: 65500, limit: DecodingLimits.default.maxPixelCount))
        // Scaling does not lift the limit: libjpeg would still work on the full size.
        let scaled = DecodingOptions(targetSize: PixelSize(width: 100, height: 100))
        #expect(JPEGTestSupport.failure { () throws(AlcedoError) in try decoder.decode(data, options: scaled) } == "tooManyPixels")
        // The header itself is readable.
        let info = try decoder.info(for: data, options: .default)
        #expect(info.width == 65500 && info.height == 65500)
    }

    @Test("a header declaring a zero height is an invalid header")
    func zeroSize() throws {
        let bytes = JPEGTestSupport.declaringSize([UInt8](try Fixtures.data("libjpeg-turbo/testorig.jpg")), width: 227, height: 0)
        #expect(survive(bytes) == "invalidHeader")
    }

    @Test("a file larger than declared, then cut short, is truncated without decoding the rest")
    func largerThanItsData() throws {
        // 3000x3000 declared over testorig's few kilobytes: the data runs out in the first rows.
        let bytes = JPEGTestSupport.declaringSize([UInt8](try Fixtures.data("libjpeg-turbo/testorig.jpg")), width: 3000, height: 3000)
        #expect(survive(bytes) == "truncated")
    }

    @Test("a thousand repeated scans are refused as corrupt (after 64 passes over the blocks)")
    func tooManyScans() throws {
        let bytes = [UInt8](try Fixtures.data("go-image/image-testdata/video-005.gray.q50.progressive.jpeg"))
        let segments = JPEGTestSupport.segments(bytes)
        let scans = segments.filter { $0.marker == 0xDA }
        let smallest = try #require(scans.min { $0.range.count < $1.range.count })
        let eoi = try #require(segments.last { $0.marker == 0xD9 })
        // Repeat the smallest scan until the file has well over 1,000 scans.
        var hostile = Array(bytes[..<eoi.range.lowerBound])
        for _ in 0..<1_010 { hostile += bytes[smallest.range] }
        hostile += [0xFF, 0xD9]
        let reason = JPEGTestSupport.decodingReason { () throws(AlcedoError) in try decoder.decode(Data(hostile), options: .default) }
        guard case .corrupt(.jpeg, let message) = reason else {
            Issue.record("expected corrupt, got \(String(describing: reason))")
            return
        }
        // Every scan of this one-component file covers all its blocks: the pass limit answers first.
        #expect(message.contains("visit every block more than 64 times"), "\(message)")
    }

    @Test("lossless and hierarchical files are unsupported, not crashes")
    func unsupportedProcesses() throws {
        let bytes = [UInt8](try Fixtures.data("libjpeg-turbo/testorig.jpg"))
        let offset = try #require(JPEGTestSupport.frameHeaderSizeOffset(bytes))
        for marker: UInt8 in [0xC3, 0xC5, 0xC7, 0xCB] {
            var patched = bytes
            patched[offset - 4] = marker
            #expect(survive(patched) == "unsupportedFeature", "SOF marker \(marker)")
        }
    }
}

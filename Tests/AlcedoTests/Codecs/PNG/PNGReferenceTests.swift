import Foundation
import Testing
@testable import Alcedo

/// A 64-bit digest of pixel bytes, the same as `digest()` in the fixture scripts
/// (`png-generated/make_references.py`, `gif-generated/make_references.py`): FNV-1a over
/// little-endian 64-bit words, the tail zero-padded, then the byte count.
enum PNGGIFDigest {
    static func of(_ bytes: [UInt8]) -> String {
        let prime: UInt64 = 0x100_0000_01B3
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        bytes.withUnsafeBytes { raw in
            let words = raw.count / 8
            for index in 0..<words {
                hash = (hash ^ UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))) &* prime
            }
            if raw.count % 8 != 0 {
                var tail: UInt64 = 0
                for j in 0..<(raw.count % 8) { tail |= UInt64(raw[words * 8 + j]) << (8 * UInt64(j)) }
                hash = (hash ^ tail) &* prime
            }
        }
        hash = (hash ^ UInt64(bytes.count)) &* prime
        let text = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }
}

/// One row of `png-generated/references.json`.
struct PNGReference: Codable, Sendable, CustomTestStringConvertible {
    var file: String
    var width: Int
    var height: Int
    var digest: String
    /// For gamma-converted 16-bit files: an 8-bit PNG holding the expected pixels.
    var reference: String?

    var testDescription: String { file }

    static let all: [PNGReference] = pngGIFReferenceRows("png-generated/references.json")
}

/// The rows of a JSON reference fixture (empty when it cannot be read, which the suites'
/// count checks catch).
func pngGIFReferenceRows<Row: Decodable>(_ path: String) -> [Row] {
    guard let data = try? Fixtures.data(path), let rows = try? JSONDecoder().decode([Row].self, from: data) else { return [] }
    return rows
}

/// Every PNG of the libpng and Go test suites against references made without libpng (see
/// `png-generated/make_references.py`), following ``PNGDecoder``'s gamma decision.
@Suite("PNG reference decodes")
struct PNGReferenceTests {
    @Test func everyFixtureHasAReference() throws {
        let suite = try Fixtures.files(in: "libpng/testpngs", suffix: ".png").count
            + Fixtures.files(in: "go-image/png-testdata/pngsuite", suffix: ".png").count
            + Fixtures.files(in: "go-image/png-testdata", suffix: ".png").filter { !$0.hasPrefix("invalid-") }.count
        #expect(suite == 147)
        #expect(PNGReference.all.count == suite)
    }

    @Test(arguments: PNGReference.all)
    func decodesLikeTheReference(_ reference: PNGReference) throws {
        let image = try PNGDecoder().decode(Fixtures.data(reference.file), options: .default)
        #expect(image.width == reference.width && image.height == reference.height)
        #expect(image.sourceFormat == .png)
        guard let expectedFile = reference.reference else {
            #expect(PNGGIFDigest.of(image.pixels) == reference.digest, "pixels of \(reference.file) differ from the reference")
            return
        }
        // libpng converts 16-bit samples through a gamma table indexed by fewer bits than the
        // samples have: within 2 levels of the exact value, within 8 below level 32 (where a
        // linear-light file's curve is steepest). Alpha is exact.
        let expected = try PNGDecoder().decode(Fixtures.data(expectedFile), options: .default).pixels
        #expect(PNGGIFDigest.of(expected) == reference.digest, "reference PNG \(expectedFile) does not hold the expected pixels")
        var worstDark = 0, worstOther = 0, worstAlpha = 0
        for index in 0..<expected.count {
            let difference = abs(Int(image.pixels[index]) - Int(expected[index]))
            if index % 4 == 3 {
                worstAlpha = max(worstAlpha, difference)
            } else if expected[index] < 32 {
                worstDark = max(worstDark, difference)
            } else {
                worstOther = max(worstOther, difference)
            }
        }
        #expect(worstAlpha == 0)
        #expect(worstOther <= 2)
        #expect(worstDark <= 8)
    }

    /// libpng's simplified API takes an untagged 16-bit file as linear light by default; the
    /// decoder keeps its samples instead (rounded to 8 bits), as browsers do.
    @Test func untaggedSixteenBitSamplesAreKept() throws {
        let image = try PNGDecoder().decode(Fixtures.data("libpng/testpngs/gray-16.png"), options: .default)
        let tagged = try PNGDecoder().decode(Fixtures.data("libpng/testpngs/gray-16-sRGB.png"), options: .default)
        let same = image.pixels == tagged.pixels
        #expect(same)
        // A gAMA 1.0 (linear) file is brightened: mid-grey samples come out lighter.
        let linear = try PNGDecoder().decode(Fixtures.data("libpng/testpngs/gray-16-linear.png"), options: .default)
        let middle = (128 * image.width + 128) * 4
        #expect(Int(linear.pixels[middle]) > Int(image.pixels[middle]) + 40)
    }
}

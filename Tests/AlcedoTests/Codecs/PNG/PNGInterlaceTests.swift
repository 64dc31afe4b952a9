import Foundation
import Testing
@testable import Alcedo

/// Writes the same samples as a PNG twice, Adam7-interlaced and not, with every filter type
/// used in turn, so that the two decodes can be compared pixel for pixel.
enum PNGTwin {
    static let channelsOf: [Int: Int] = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4]

    /// `samples` holds `width * height * channels` values of `depth` bits, row by row.
    static func png(width: Int, height: Int, depth: Int, colorType: Int, samples: [Int], interlaced: Bool,
                    chunksBeforeData: [[UInt8]] = []) -> [UInt8] {
        let channels = channelsOf[colorType]!
        var raw: [UInt8] = []
        let passes = interlaced ? PNGRasterDecoder.adam7 : [(x: 0, y: 0, dx: 1, dy: 1)]
        var filter = 0
        for pass in passes {
            let xs = Array(stride(from: pass.x, to: width, by: pass.dx))
            let ys = Array(stride(from: pass.y, to: height, by: pass.dy))
            guard !xs.isEmpty, !ys.isEmpty else { continue }
            var previous = [UInt8](repeating: 0, count: (xs.count * channels * depth + 7) / 8)
            for y in ys {
                let row = pack(xs.flatMap { x in (0..<channels).map { samples[(y * width + x) * channels + $0] } }, depth: depth)
                raw.append(UInt8(filter))
                raw += apply(filter: filter, row: row, previous: previous, bpp: max(1, channels * depth / 8))
                previous = row
                filter = (filter + 1) % 5
            }
        }
        var bytes = PNGTestFile.signature
        bytes += PNGTestFile.chunk("IHDR", PNGTestFile.bigEndian(UInt32(width)) + PNGTestFile.bigEndian(UInt32(height))
                                   + [UInt8(depth), UInt8(colorType), 0, 0, interlaced ? 1 : 0])
        for chunk in chunksBeforeData { bytes += chunk }
        bytes += PNGTestFile.chunk("IDAT", PNGTestFile.zlibStored(raw))
        bytes += PNGTestFile.chunk("IEND", [])
        return bytes
    }

    static func pack(_ values: [Int], depth: Int) -> [UInt8] {
        switch depth {
        case 16: return values.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        case 8: return values.map { UInt8($0) }
        default:
            var out = [UInt8](repeating: 0, count: (values.count * depth + 7) / 8)
            for (index, value) in values.enumerated() {
                let bit = index * depth
                out[bit >> 3] |= UInt8(value << (8 - depth - (bit & 7)))
            }
            return out
        }
    }

    static func apply(filter: Int, row: [UInt8], previous: [UInt8], bpp: Int) -> [UInt8] {
        (0..<row.count).map { i in
            let a = i >= bpp ? Int(row[i - bpp]) : 0, b = Int(previous[i]), c = i >= bpp ? Int(previous[i - bpp]) : 0
            let predictor: Int
            switch filter {
            case 1: predictor = a
            case 2: predictor = b
            case 3: predictor = (a + b) >> 1
            case 4:
                let p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                predictor = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
            default: predictor = 0
            }
            return UInt8(truncatingIfNeeded: Int(row[i]) - predictor)
        }
    }

    /// The RGBA8 an untagged file of these samples must decode to (16-bit and low-depth
    /// samples rounded to 8 bits; a palette of `palette` RGB entries).
    static func expected(samples: [Int], depth: Int, colorType: Int, palette: [[UInt8]] = []) -> [UInt8] {
        let maximum = (1 << depth) - 1
        func level(_ value: Int) -> UInt8 { UInt8((2 * value * 255 + maximum) / (2 * maximum)) }
        let channels = channelsOf[colorType]!
        return stride(from: 0, to: samples.count, by: channels).flatMap { at -> [UInt8] in
            let s = samples[at..<(at + channels)].map { $0 }
            switch colorType {
            case 0: return [level(s[0]), level(s[0]), level(s[0]), 255]
            case 2: return [level(s[0]), level(s[1]), level(s[2]), 255]
            case 3: return palette[s[0]] + [255]
            case 4: return [level(s[0]), level(s[0]), level(s[0]), level(s[1])]
            default: return [level(s[0]), level(s[1]), level(s[2]), level(s[3])]
            }
        }
    }
}

@Suite("PNG interlacing")
struct PNGInterlaceTests {
    static let layouts: [(colorType: Int, depth: Int)] = [
        (0, 1), (0, 2), (0, 4), (0, 8), (0, 16), (2, 8), (2, 16), (3, 1), (3, 2), (3, 4), (3, 8),
        (4, 8), (4, 16), (6, 8), (6, 16),
    ]

    /// Every colour type and bit depth, untagged, with `gAMA`, and with `tRNS` where it applies,
    /// at sizes that leave some Adam7 passes empty (1x1, 3x2) and at odd sizes: the interlaced
    /// file decodes to exactly the pixels of its non-interlaced twin, and both to the samples.
    @Test(arguments: layouts.indices)
    func interlacedDecodesLikeItsTwin(layout: Int) throws {
        let (colorType, depth) = PNGInterlaceTests.layouts[layout]
        let channels = PNGTwin.channelsOf[colorType]!
        var generator = SeededRandom(seed: UInt64(colorType * 100 + depth))
        let paletteCount = colorType == 3 ? 1 << depth : 0
        let palette = (0..<paletteCount).map { _ in (0..<3).map { _ in UInt8(generator.next() % 256) } }
        for (width, height) in [(1, 1), (3, 2), (13, 11), (33, 17)] {
            let count = width * height * channels
            let maximum = colorType == 3 ? paletteCount : 1 << depth
            let samples = (0..<count).map { _ in Int(generator.next() % UInt64(maximum)) }
            var variants: [(name: String, chunks: [[UInt8]])] = [("untagged", [])]
            variants.append(("gAMA", [PNGTestFile.chunk("gAMA", PNGTestFile.bigEndian(100_000))]))
            if colorType == 0 || colorType == 2 {
                let key = Array(samples.prefix(colorType == 0 ? 1 : 3))
                variants.append(("tRNS", [PNGTestFile.chunk("tRNS", key.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] })]))
            }
            for variant in variants {
                var chunks = variant.chunks
                if colorType == 3 {
                    chunks.append(PNGTestFile.chunk("PLTE", palette.flatMap { $0 }))
                }
                let plain = PNGTwin.png(width: width, height: height, depth: depth, colorType: colorType, samples: samples,
                                        interlaced: false, chunksBeforeData: chunks)
                let interlaced = PNGTwin.png(width: width, height: height, depth: depth, colorType: colorType,
                                             samples: samples, interlaced: true, chunksBeforeData: chunks)
                let a = try PNGDecoder().decode(Data(plain))
                let b = try PNGDecoder().decode(Data(interlaced))
                let label = "colour type \(colorType), \(depth)-bit, \(width)x\(height), \(variant.name)"
                #expect(a.pixels == b.pixels, "\(label): interlaced differs from its twin")
                if variant.name == "untagged" {
                    let expected = PNGTwin.expected(samples: samples, depth: depth, colorType: colorType, palette: palette)
                    #expect(a.pixels == expected, "\(label): not the samples")
                }
                if variant.name == "tRNS" {
                    #expect(a.pixels[3] == 0, "\(label): the tRNS colour is not transparent")
                }
            }
        }
    }

    /// The interlaced fixture with a non-interlaced twin of the same pixels and colour chunks
    /// (`gray-gradient.interlaced.png` has a `gAMA` its twin lacks).
    @Test(arguments: [
        ("go-image/png-testdata/benchRGB-interlace.png", "go-image/png-testdata/benchRGB.png"),
    ])
    func interlacedFixtureDecodesLikeItsTwin(interlaced: String, plain: String) throws {
        let a = try PNGDecoder().decode(Fixtures.data(interlaced))
        let b = try PNGDecoder().decode(Fixtures.data(plain))
        #expect(a.width == b.width && a.height == b.height)
        #expect(a.pixels == b.pixels)
    }
}

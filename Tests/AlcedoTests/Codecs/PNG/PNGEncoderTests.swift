import Foundation
import Testing
@testable import Alcedo

@Suite("PNG encoder")
struct PNGEncoderTests {
    /// Deterministic pixels: random colours, or random gray levels, with the given alpha rule.
    static func pixels(width: Int, height: Int, gray: Bool = false, alpha: (inout SeededRandom) -> UInt8) -> [UInt8] {
        var generator = SeededRandom(seed: UInt64(width * 1000 + height))
        var out: [UInt8] = []
        out.reserveCapacity(width * height * 4)
        for _ in 0..<(width * height) {
            let r = UInt8(truncatingIfNeeded: generator.next())
            let g = gray ? r : UInt8(truncatingIfNeeded: generator.next())
            let b = gray ? r : UInt8(truncatingIfNeeded: generator.next())
            out += [r, g, b, alpha(&generator)]
        }
        return out
    }

    /// The colour type byte of the IHDR of a PNG.
    static func colorType(of png: Data) -> UInt8 { [UInt8](png)[25] }

    @Test(arguments: [
        ("rgba", false, false, UInt8(6)),
        ("rgb", false, true, UInt8(2)),
        ("gray-alpha", true, false, UInt8(4)),
        ("gray", true, true, UInt8(0)),
    ])
    func roundTripIsExactInTheSmallestLayout(name: String, gray: Bool, opaque: Bool, expectedColorType: UInt8) throws {
        let pixels = Self.pixels(width: 37, height: 23, gray: gray) { opaque ? 255 : UInt8(truncatingIfNeeded: $0.next()) }
        let image = AlcedoImage(width: 37, height: 23, pixels: pixels)
        let png = try PNGEncoder().encode(image, options: .default)
        #expect(Self.colorType(of: png) == expectedColorType, "\(name)")
        let decoded = try PNGDecoder().decode(png, options: .default)
        #expect(decoded.width == 37 && decoded.height == 23)
        let same = decoded.pixels == pixels
        #expect(same, "\(name)")
    }

    @Test func withoutReductionEveryImageIsRGBA() throws {
        let pixels = Self.pixels(width: 8, height: 8, gray: true) { _ in 255 }
        let png = try PNGEncoder(reducesChannels: false).encode(AlcedoImage(width: 8, height: 8, pixels: pixels), options: .default)
        #expect(Self.colorType(of: png) == 6)
        #expect(try PNGDecoder().decode(png, options: .default).pixels == pixels)
    }

    /// Fully transparent pixels keep their colour (straight alpha).
    @Test func transparentPixelsKeepTheirColour() throws {
        let pixels: [UInt8] = [10, 20, 30, 0, 200, 100, 50, 0, 1, 2, 3, 128, 255, 255, 255, 255]
        let png = try PNGEncoder().encode(AlcedoImage(width: 2, height: 2, pixels: pixels), options: .default)
        #expect(try PNGDecoder().decode(png, options: .default).pixels == pixels)
    }

    @Test func animatedImageWritesItsFirstFrame() throws {
        let first = Self.pixels(width: 5, height: 4) { _ in 255 }
        let second = [UInt8](repeating: 7, count: 5 * 4 * 4)
        let image = AlcedoImage(width: 5, height: 4, frames: [.init(pixels: first, duration: 0.1), .init(pixels: second, duration: 0.1)])
        let decoded = try PNGDecoder().decode(PNGEncoder().encode(image, options: .default), options: .default)
        #expect(decoded.pixels == first)
        #expect(decoded.frames.count == 1)
    }

    /// A noise image barely compresses: the output stays within libpng's bound and is
    /// written in one pass.
    @Test func incompressibleImage() throws {
        let pixels = Self.pixels(width: 300, height: 200) { UInt8(truncatingIfNeeded: $0.next()) }
        let png = try PNGEncoder().encode(AlcedoImage(width: 300, height: 200, pixels: pixels), options: .default)
        #expect(png.count > 300 * 200 * 4)
        let same = try PNGDecoder().decode(png, options: .default).pixels == pixels
        #expect(same)
    }

    @Test func reencodingAFixtureIsLossless() throws {
        for file in ["go-image/png-testdata/pngsuite/basn3p08-trns.png", "libpng/testpngs/gray-alpha-8.png",
                     "go-image/png-testdata/benchRGB-interlace.png"] {
            let original = try PNGDecoder().decode(Fixtures.data(file), options: .default)
            let again = try PNGDecoder().decode(PNGEncoder().encode(original, options: .default), options: .default)
            let same = again.pixels == original.pixels
            #expect(same, "\(file)")
        }
    }
}

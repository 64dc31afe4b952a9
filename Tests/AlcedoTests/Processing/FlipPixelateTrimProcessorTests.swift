import Testing
@testable import Alcedo

/// The processors imgproxy's `flip`, `pixelate` and `trim` use, on images built pixel by pixel.
@Suite("Flip, pixelate and trim processors")
struct FlipPixelateTrimProcessorTests {
    /// A 4x2 image whose pixel (x, y) has red x * 10 and green y * 10.
    static let grid: AlcedoImage = {
        var pixels: [UInt8] = []
        for y in 0..<2 { for x in 0..<4 { pixels += [UInt8(x * 10), UInt8(y * 10), 0, 255] } }
        return AlcedoImage(width: 4, height: 2, pixels: pixels)
    }()

    @Test func flip() throws {
        let horizontal = try FlipImageProcessor().process(Self.grid)
        #expect(horizontal.pixel(x: 0, y: 0) == Self.grid.pixel(x: 3, y: 0))
        #expect(horizontal.pixel(x: 3, y: 1) == Self.grid.pixel(x: 0, y: 1))
        let both = try FlipImageProcessor(horizontal: true, vertical: true).process(Self.grid)
        #expect(both.pixel(x: 0, y: 0) == Self.grid.pixel(x: 3, y: 1))
        #expect(try FlipImageProcessor(horizontal: false).process(Self.grid) == Self.grid)
        #expect(FlipImageProcessor().identifier != FlipImageProcessor(horizontal: true, vertical: true).identifier)
    }

    @Test func pixelate() throws {
        let blocks = try PixelateImageProcessor(size: 2).process(Self.grid)
        // Block (0...1, 0...1): red (0 + 10) / 2 = 5, green (0 + 10) / 2 = 5.
        #expect(blocks.pixel(x: 0, y: 0) == RGBA(red: 5, green: 5, blue: 0))
        #expect(blocks.pixel(x: 1, y: 1) == RGBA(red: 5, green: 5, blue: 0))
        #expect(blocks.pixel(x: 2, y: 0) == RGBA(red: 25, green: 5, blue: 0))
        #expect(try PixelateImageProcessor(size: 1).process(Self.grid) == Self.grid)
        // Transparent pixels do not darken their block.
        let half = AlcedoImage(width: 2, height: 1, pixels: [200, 0, 0, 255, 0, 0, 0, 0])
        #expect(try PixelateImageProcessor(size: 2).process(half).pixel(x: 1, y: 0) == RGBA(red: 200, green: 0, blue: 0, alpha: 128))
    }

    @Test func trim() throws {
        // 7x6 white with a black 3x3 square at (1, 2), and one black pixel of noise at (6, 0).
        var pixels = [UInt8](repeating: 255, count: 7 * 6 * 4)
        for (x, y) in [(1, 2), (2, 2), (3, 2), (1, 3), (2, 3), (3, 3), (1, 4), (2, 4), (3, 4), (6, 0)] {
            let i = (y * 7 + x) * 4; pixels[i] = 0; pixels[i + 1] = 0; pixels[i + 2] = 0
        }
        let image = AlcedoImage(width: 7, height: 6, pixels: pixels)
        // The 3x3 median (as libvips' find_trim) removes the lone pixel, not the square.
        let trimmed = try TrimImageProcessor().process(image)
        #expect(trimmed.pixelSize == PixelSize(width: 3, height: 3) && trimmed.pixel(x: 0, y: 0) == RGBA(red: 0, green: 0, blue: 0))
        // Equal sides: left 1 and right 3 → 1 each; top 2 and bottom 1 → 1 each.
        let equal = TrimImageProcessor(equalHorizontal: true, equalVertical: true).contentRect(of: image)
        #expect(equal?.x == 1 && equal?.y == 1 && equal?.size == PixelSize(width: 5, height: 4))
        // A threshold above the difference keeps everything.
        #expect(try TrimImageProcessor(threshold: 255).process(image) == image)
        #expect(throws: AlcedoError.self) { try TrimImageProcessor(threshold: -1).process(image) }
        // Smaller than the median's window, content is taken for noise: nothing is cut.
        var dot = [UInt8](repeating: 255, count: 5 * 5 * 4)
        dot[(2 * 5 + 2) * 4] = 0
        let single = AlcedoImage(width: 5, height: 5, pixels: dot)
        #expect(TrimImageProcessor().contentRect(of: single) == nil)
    }
}

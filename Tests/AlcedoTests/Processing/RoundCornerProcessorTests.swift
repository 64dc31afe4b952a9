import Testing
@testable import Alcedo

@Suite("RoundCornerImageProcessor")
struct RoundCornerProcessorTests {
    static let red = RGBA(red: 255, green: 0, blue: 0)

    /// The alpha a pixel of an opaque image keeps under a corner of radius `r` at (r, r):
    /// 255 * clamp(0.5 - (distance of the pixel centre from the corner centre - r)).
    static func expectedAlpha(x: Int, y: Int, radius r: Double) -> Int {
        let dx = Double(x) + 0.5 - r, dy = Double(y) + 0.5 - r
        let coverage = min(max(0.5 - ((dx * dx + dy * dy).squareRoot() - r), 0), 1)
        return Int((255 * coverage).rounded())
    }

    @Test("corners transparent, centre and edge middles untouched, anti-aliased in between")
    func corners() throws {
        let image = Synthetic.solid(Self.red, width: 8, height: 8)
        let result = try RoundCornerImageProcessor(cornerRadius: 3).process(image)
        #expect(result.pixelSize == image.pixelSize)
        for (x, y) in [(0, 0), (7, 0), (0, 7), (7, 7)] { #expect(result.pixel(x: x, y: y) == .clear) }
        for (x, y) in [(3, 3), (4, 4), (0, 3), (0, 4), (3, 0), (7, 4), (4, 7)] {
            #expect(result.pixel(x: x, y: y) == Self.red, "(\(x), \(y))")
        }
        // Inside the top-left corner square the alpha follows the circle; the colour stays red.
        for y in 0..<3 {
            for x in 0..<3 {
                let pixel = result.pixel(x: x, y: y)
                #expect(abs(Int(pixel.alpha) - Self.expectedAlpha(x: x, y: y, radius: 3)) <= 1, "(\(x), \(y))")
                if pixel.alpha > 0 { #expect(pixel.red == 255 && pixel.green == 0) }
            }
        }
        let partial = result.pixel(x: 1, y: 0).alpha
        #expect(partial > 0 && partial < 255)
        // The four corners are mirror images of each other.
        for y in 0..<8 {
            for x in 0..<8 {
                #expect(result.pixel(x: x, y: y) == result.pixel(x: 7 - x, y: y))
                #expect(result.pixel(x: x, y: y) == result.pixel(x: x, y: 7 - y))
            }
        }
    }

    @Test("only the chosen corners are rounded")
    func chosenCorners() throws {
        let image = Synthetic.solid(Self.red, width: 8, height: 8)
        let result = try RoundCornerImageProcessor(cornerRadius: 3, roundingCorners: [.topRight, .bottomLeft]).process(image)
        #expect(result.pixel(x: 7, y: 0) == .clear)
        #expect(result.pixel(x: 0, y: 7) == .clear)
        #expect(result.pixel(x: 0, y: 0) == Self.red)
        #expect(result.pixel(x: 7, y: 7) == Self.red)
        #expect(try RoundCornerImageProcessor(cornerRadius: 3, roundingCorners: []).process(image) == image)
    }

    @Test("a background colour fills the corners and shows through translucent pixels")
    func background() throws {
        let blue = RGBA(red: 0, green: 0, blue: 255)
        let image = Synthetic.image(width: 8, height: 8) { x, y in
            (x, y) == (4, 4) ? RGBA(red: 255, green: 0, blue: 0, alpha: 128) : Self.red
        }
        let result = try RoundCornerImageProcessor(cornerRadius: 4, backgroundColor: blue).process(image)
        #expect(result.pixel(x: 0, y: 0) == blue)
        #expect(result.pixel(x: 7, y: 7) == blue)
        #expect(result.pixel(x: 3, y: 3) == Self.red)
        // Half red over blue.
        #expect(channelDifference(result.pixel(x: 4, y: 4), RGBA(red: 128, green: 0, blue: 127)) <= 1)
        #expect(!result.hasAlpha)
    }

    @Test("width fraction 0.5 makes a square image a disc; an oversized radius is clamped")
    func fullRound() throws {
        let image = Synthetic.solid(Self.red, width: 10, height: 10)
        let disc = try RoundCornerImageProcessor(radius: .widthFraction(0.5)).process(image)
        let clamped = try RoundCornerImageProcessor(cornerRadius: 1000).process(image)
        #expect(disc == clamped)
        for y in 0..<10 {
            for x in 0..<10 {
                #expect(abs(Int(disc.pixel(x: x, y: y).alpha) - Self.expectedAlpha(x: x, y: y, radius: 5)) <= 1)
            }
        }
        // Height fraction on a wide image: radius 0.25 * 4 = 1 on a 12x4 image.
        let wide = try RoundCornerImageProcessor(radius: .heightFraction(0.25)).process(Synthetic.solid(Self.red, width: 12, height: 4))
        #expect(wide.pixel(x: 0, y: 0).alpha < 255)
        #expect(wide.pixel(x: 1, y: 1) == Self.red)
    }

    @Test("radius 0 and the alpha of translucent pixels")
    func translucent() throws {
        let image = Synthetic.image(width: 6, height: 6) { _, _ in RGBA(red: 10, green: 20, blue: 30, alpha: 100) }
        #expect(try RoundCornerImageProcessor(cornerRadius: 0).process(image) == image)
        let result = try RoundCornerImageProcessor(cornerRadius: 3).process(image)
        #expect(result.pixel(x: 0, y: 0) == .clear)
        #expect(result.pixel(x: 3, y: 3) == image.pixel(x: 3, y: 3))
        let partial = result.pixel(x: 1, y: 0)
        #expect(abs(Int(partial.alpha) - Int((100 * Double(Self.expectedAlpha(x: 1, y: 0, radius: 3)) / 255).rounded())) <= 1)
    }

    @Test("a target size resizes first; fractions are of the target size")
    func targetSize() throws {
        let image = Synthetic.solid(Self.red, width: 8, height: 4)
        let target = PixelSize(width: 6, height: 6)
        let result = try RoundCornerImageProcessor(radius: .widthFraction(0.5), targetSize: target).process(image)
        #expect(result.pixelSize == target)
        #expect(try result == RoundCornerImageProcessor(cornerRadius: 3).process(Synthetic.solid(Self.red, width: 6, height: 6)))
        #expect(RoundCornerImageProcessor(cornerRadius: 3, targetSize: target).identifier == "com.alcedo.roundcorner(3.0,all,6x6,-)")
        #expect(invalidParameter { () throws(AlcedoError) in
            try RoundCornerImageProcessor(cornerRadius: 3, targetSize: PixelSize(width: 0, height: 6)).process(image)
        }?.message.contains("targetSize") == true)
    }
}

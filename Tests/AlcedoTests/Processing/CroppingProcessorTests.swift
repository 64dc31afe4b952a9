import Testing
@testable import Alcedo

@Suite("CroppingImageProcessor")
struct CroppingProcessorTests {
    /// A pattern where each pixel tells its coordinates: red = x, green = y.
    static func coordinates(width: Int, height: Int) -> AlcedoImage {
        Synthetic.image(width: width, height: height) { x, y in RGBA(red: UInt8(x), green: UInt8(y), blue: 9) }
    }

    @Test("the anchor places the rectangle", arguments: [
        (CroppingImageProcessor.Anchor.topLeft, 0, 0),
        (.center, 3, 2),
        (.bottomRight, 6, 4),
        (.topRight, 6, 0),
        (.bottomLeft, 0, 4),
        (.init(x: 0.25, y: 0.75), 2, 3),
    ])
    func anchors(anchor: CroppingImageProcessor.Anchor, x: Int, y: Int) throws {
        let image = Self.coordinates(width: 10, height: 7)
        let result = try CroppingImageProcessor(size: PixelSize(width: 4, height: 3), anchor: anchor).process(image)
        #expect(result.pixelSize == PixelSize(width: 4, height: 3))
        for row in 0..<3 {
            for column in 0..<4 {
                #expect(result.pixel(x: column, y: row) == RGBA(red: UInt8(x + column), green: UInt8(y + row), blue: 9))
            }
        }
    }

    @Test("a crop larger than the image is limited to it; the full size is the image itself")
    func larger() throws {
        let image = Self.coordinates(width: 4, height: 4)
        let wide = try CroppingImageProcessor(size: PixelSize(width: 10, height: 2)).process(image)
        #expect(wide.pixelSize == PixelSize(width: 4, height: 2))
        #expect(wide.pixel(x: 0, y: 0) == RGBA(red: 0, green: 1, blue: 9))
        #expect(try CroppingImageProcessor(size: PixelSize(width: 4, height: 4)).process(image) == image)
        #expect(try CroppingImageProcessor(size: PixelSize(width: 100, height: 100)).process(image) == image)
    }

    @Test("crop rectangles of Kingfisher's example: 100x100 to 20x20")
    func kingfisherExample() {
        let size = PixelSize(width: 100, height: 100)
        let crop = PixelSize(width: 20, height: 20)
        #expect(CroppingImageProcessor(size: crop, anchor: .topLeft).cropRect(for: size) == (0, 0, crop))
        #expect(CroppingImageProcessor(size: crop, anchor: .center).cropRect(for: size) == (40, 40, crop))
        #expect(CroppingImageProcessor(size: crop, anchor: .bottomRight).cropRect(for: size) == (80, 80, crop))
    }
}

import Testing
@testable import Alcedo

@Suite("OverlayImageProcessor")
struct OverlayProcessorTests {
    static let blue = RGBA(red: 0, green: 0, blue: 255)

    @Test("fraction 1 keeps the image, fraction 0 is the colour (alpha kept), 0.5 is half and half")
    func fractions() throws {
        let image = Synthetic.image(width: 4, height: 3) { x, y in
            RGBA(red: 200, green: UInt8(40 * x), blue: 0, alpha: y == 0 ? 255 : 90)
        }
        #expect(try OverlayImageProcessor(overlay: Self.blue, fraction: 1).process(image) == image)
        let solid = try OverlayImageProcessor(overlay: Self.blue, fraction: 0).process(image)
        for y in 0..<3 {
            for x in 0..<4 {
                #expect(solid.pixel(x: x, y: y) == RGBA(red: 0, green: 0, blue: 255, alpha: y == 0 ? 255 : 90))
            }
        }
        let half = try OverlayImageProcessor(overlay: Self.blue).process(image)
        // (200, 120, 0) and (0, 0, 255) half and half: (100, 60, 127.5 -> 128).
        #expect(half.pixel(x: 3, y: 0) == RGBA(red: 100, green: 60, blue: 128))
        #expect(half.pixel(x: 3, y: 1).alpha == 90)
    }

    @Test("the overlay colour's alpha scales its share; a transparent colour changes nothing")
    func colourAlpha() throws {
        let image = Synthetic.solid(RGBA(red: 200, green: 100, blue: 0), width: 2, height: 2)
        #expect(try OverlayImageProcessor(overlay: .clear, fraction: 0).process(image) == image)
        // Share (1 - 0) * 0.2 of blue: 200 * 0.8 = 160, 100 * 0.8 = 80, 255 * 0.2 = 51.
        let result = try OverlayImageProcessor(overlay: RGBA(red: 0, green: 0, blue: 255, alpha: 51), fraction: 0).process(image)
        #expect(result.pixel(x: 0, y: 0) == RGBA(red: 160, green: 80, blue: 51))
    }
}

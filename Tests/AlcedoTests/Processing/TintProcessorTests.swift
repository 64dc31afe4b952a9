import Testing
@testable import Alcedo

@Suite("TintImageProcessor")
struct TintProcessorTests {
    @Test("alpha 0 is the identity; an opaque tint is the solid colour")
    func extremes() throws {
        let image = Synthetic.animated(width: 3, height: 3).frame(at: 1)
        #expect(try TintImageProcessor(tint: RGBA(red: 9, green: 8, blue: 7, alpha: 0)).process(image) == image)
        let green = RGBA(red: 0, green: 255, blue: 0)
        #expect(try TintImageProcessor(tint: green).process(image) == Synthetic.solid(green, width: 3, height: 3))
    }

    @Test("a translucent tint is composited source-over the image, transparent pixels included")
    func composite() throws {
        let image = Synthetic.image(width: 3, height: 1) { x, _ in
            [RGBA.white, RGBA(red: 0, green: 0, blue: 0, alpha: 0), RGBA(red: 0, green: 0, blue: 255, alpha: 128)][x]
        }
        let tint = RGBA(red: 255, green: 0, blue: 0, alpha: 128)
        let result = try TintImageProcessor(tint: tint).process(image)
        // Over white: (255, 127, 127) opaque.
        #expect(channelDifference(result.pixel(x: 0, y: 0), RGBA(red: 255, green: 127, blue: 127)) <= 1)
        // Over nothing: the tint itself.
        #expect(result.pixel(x: 1, y: 0) == tint)
        // Over half blue: alpha 0.502 + 0.502 * 0.498 = 0.752 (192); red 0.502 / 0.752 = 170, blue 0.25 / 0.752 = 85.
        #expect(channelDifference(result.pixel(x: 2, y: 0), RGBA(red: 170, green: 0, blue: 85, alpha: 192)) <= 1)
    }
}

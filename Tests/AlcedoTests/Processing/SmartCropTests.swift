import Alcedo
import Testing

@Suite("SmartCrop")
struct SmartCropTests {
    /// A flat grey image with a black-and-white checkerboard patch at (`x`, `y`), `side` square.
    static func scene(width: Int, height: Int, x: Int, y: Int, side: Int) -> AlcedoImage {
        var pixels = [UInt8](repeating: 128, count: width * height * 4)
        for row in 0..<height {
            for column in 0..<width {
                let index = (row * width + column) * 4
                pixels[index + 3] = 255
                if (x..<(x + side)).contains(column), (y..<(y + side)).contains(row) {
                    let value: UInt8 = ((column / 4) + (row / 4)) % 2 == 0 ? 0 : 255
                    pixels[index] = value
                    pixels[index + 1] = value
                    pixels[index + 2] = value
                }
            }
        }
        return AlcedoImage(width: width, height: height, pixels: pixels)
    }

    @Test func theWindowCentresTheDetailWhenItCan() {
        // 1200x400 (analysed at 240x80): a 100 px patch centred at x = 850.
        let image = Self.scene(width: 1200, height: 400, x: 800, y: 150, side: 100)
        let origin = SmartCrop.origin(of: PixelSize(width: 400, height: 400), in: image)
        #expect(origin.y == 0)
        #expect(abs(origin.x - 650) <= 6, "\(origin)")
        // Both axes free.
        let both = SmartCrop.origin(of: PixelSize(width: 300, height: 200), in: Self.scene(width: 900, height: 900, x: 100, y: 650, side: 100))
        #expect(both.x <= 100 && both.x + 300 >= 200 && both.y <= 650 && both.y + 200 >= 750, "\(both)")
    }

    @Test func nothingToChooseOrNothingStandsOut() {
        let image = Self.scene(width: 300, height: 200, x: 0, y: 0, side: 0)
        let centred = SmartCrop.origin(of: PixelSize(width: 100, height: 100), in: image)
        #expect(centred.x == 100 && centred.y == 50)
        #expect(SmartCrop.origin(of: PixelSize(width: 300, height: 200), in: image) == (0, 0))
        // Larger than the image: limited to it.
        #expect(SmartCrop.origin(of: PixelSize(width: 999, height: 50), in: image).x == 0)
        // A transparent image with colour behind the alpha: nothing to see.
        var clear = AlcedoImage(width: 40, height: 10, pixels: [UInt8](repeating: 0, count: 40 * 10 * 4)).pixels
        for index in stride(from: 0, to: clear.count, by: 8) { clear[index] = 255 }
        let transparent = AlcedoImage(width: 40, height: 10, pixels: clear)
        #expect(SmartCrop.origin(of: PixelSize(width: 10, height: 10), in: transparent) == (15, 0))
    }

    @Test func thinImagesStayInBounds() {
        // Sides shorter than the reduction factor (1 x 3000 reduces by 12 to 1 x 250).
        let tall = Self.scene(width: 1, height: 3000, x: 0, y: 2500, side: 100)
        let origin = SmartCrop.origin(of: PixelSize(width: 1, height: 200), in: tall)
        #expect(origin.x == 0 && origin.y >= 2400 && origin.y <= 2500, "\(origin)")
        let wide = Self.scene(width: 5000, height: 3, x: 200, y: 0, side: 100)
        let across = SmartCrop.origin(of: PixelSize(width: 400, height: 3), in: wide)
        #expect(across.y == 0 && across.x <= 200 && across.x + 400 >= 300, "\(across)")
    }

    @Test func theProcessorCutsWhereTheOriginSays() throws {
        let image = Self.scene(width: 600, height: 200, x: 450, y: 60, side: 80)
        let processor = SmartCroppingImageProcessor(size: PixelSize(width: 200, height: 400))
        #expect(processor.identifier == "com.alcedo.smartCropping(200x400)")
        let result = try processor.process(image)
        #expect(result.pixelSize == PixelSize(width: 200, height: 200))
        let origin = SmartCrop.origin(of: PixelSize(width: 200, height: 200), in: image)
        #expect(origin.x >= 330)
        let expected = try CroppingImageProcessor(size: PixelSize(width: 200, height: 200),
                                                  anchor: .init(x: Double(origin.x) / 400, y: 0.5)).process(image)
        #expect(result.pixels == expected.pixels)
        #expect(throws: AlcedoError.self) { try SmartCroppingImageProcessor(size: PixelSize(width: 0, height: 5)).process(image) }
    }
}

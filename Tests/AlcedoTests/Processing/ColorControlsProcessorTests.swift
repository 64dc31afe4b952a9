import Foundation
import Testing
@testable import Alcedo

@Suite("ColorControlsProcessor and BlackWhiteProcessor")
struct ColorControlsProcessorTests {
    static func single(_ pixel: RGBA) -> AlcedoImage { Synthetic.solid(pixel, width: 1, height: 1) }

    @Test("neutral parameters are the identity")
    func neutral() throws {
        let image = Synthetic.animated(width: 5, height: 4)
        #expect(try ColorControlsProcessor().process(image) == image)
        #expect(try ColorControlsProcessor(brightness: 0, contrast: 1, saturation: 1, inputEV: 0).process(image) == image)
    }

    @Test("brightness adds, contrast scales around 0.5; alpha is kept")
    func brightnessContrast() throws {
        let image = Synthetic.image(width: 3, height: 1) { x, _ in
            RGBA(red: [100, 200, 20][x], green: [100, 200, 20][x], blue: 0, alpha: 77)
        }
        let brighter = try ColorControlsProcessor(brightness: 0.2).process(image)
        // 100 + 51 = 151, 200 + 51 = 251, 20 + 51 = 71, 0 + 51 = 51.
        #expect(brighter.pixel(x: 0, y: 0) == RGBA(red: 151, green: 151, blue: 51, alpha: 77))
        #expect(brighter.pixel(x: 1, y: 0) == RGBA(red: 251, green: 251, blue: 51, alpha: 77))
        let contrasted = try ColorControlsProcessor(contrast: 1.5).process(image)
        // 1.5 v - 63.75: 100 -> 86.25, 200 -> 236.25, 20 -> -33.75 (clamped), 0 -> 0.
        #expect(contrasted.pixel(x: 0, y: 0) == RGBA(red: 86, green: 86, blue: 0, alpha: 77))
        #expect(contrasted.pixel(x: 1, y: 0) == RGBA(red: 236, green: 236, blue: 0, alpha: 77))
        #expect(contrasted.pixel(x: 2, y: 0) == RGBA(red: 0, green: 0, blue: 0, alpha: 77))
        let flat = try ColorControlsProcessor(contrast: 0).process(image)
        #expect(flat.pixel(x: 1, y: 0) == RGBA(red: 128, green: 128, blue: 128, alpha: 77))
    }

    @Test("saturation mixes with the Rec. 709 luma")
    func saturation() throws {
        let image = Self.single(RGBA(red: 200, green: 100, blue: 50))
        // luma = 0.2126 * 200 + 0.7152 * 100 + 0.0722 * 50 = 117.65
        #expect(try ColorControlsProcessor(saturation: 0).process(image).pixel(x: 0, y: 0) == RGBA(red: 118, green: 118, blue: 118))
        #expect(try ColorControlsProcessor(saturation: 0.5).process(image).pixel(x: 0, y: 0) == RGBA(red: 159, green: 109, blue: 84))
        #expect(try ColorControlsProcessor(saturation: 2).process(image).pixel(x: 0, y: 0) == RGBA(red: 255, green: 82, blue: 0))
    }

    @Test("exposure multiplies linear light by 2^EV", arguments: [
        (10, 1.0, 18), (64, 1.0, 90), (128, 1.0, 176), (200, 1.0, 255), (255, 1.0, 255), (0, 1.0, 0),
        (64, -1.0, 44), (128, -1.0, 92), (255, -1.0, 188),
    ])
    func exposure(value: Int, ev: Double, expected: Int) throws {
        let v = UInt8(value), e = UInt8(expected)
        let image = Self.single(RGBA(red: v, green: v, blue: v, alpha: 200))
        // Through the per-channel table (saturation 1) and the per-pixel path (saturation 0 on a grey).
        #expect(try ColorControlsProcessor(inputEV: ev).process(image).pixel(x: 0, y: 0) == RGBA(red: e, green: e, blue: e, alpha: 200))
        #expect(try ColorControlsProcessor(saturation: 0, inputEV: ev).process(image).pixel(x: 0, y: 0)
                == RGBA(red: e, green: e, blue: e, alpha: 200))
    }

    @Test("exposure is exact on every 8-bit value, through both paths", arguments: [-2.0, 0.7, 3.0, 9.0])
    func exposureEveryValue(ev: Double) throws {
        func linear(_ v: Double) -> Double { v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4) }
        func encoded(_ l: Double) -> Double { l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1 / 2.4) - 0.055 }
        let image = Synthetic.image(width: 16, height: 16) { x, y in
            let v = UInt8(y * 16 + x)
            return RGBA(red: v, green: v, blue: v)
        }
        let table = try ColorControlsProcessor(inputEV: ev).process(image)
        let perPixel = try ColorControlsProcessor(saturation: 0, inputEV: ev).process(image)
        for value in 0..<256 {
            let exact = 255 * encoded(min(1, linear(Double(value) / 255) * pow(2, ev)))
            let (x, y) = (value % 16, value / 16)
            if abs(exact - exact.rounded(.down) - 0.5) < 1e-3 { continue }   // a tie: either side is right
            let expected = UInt8(exact.rounded())
            #expect(table.pixel(x: x, y: y).red == expected, "\(value) at \(ev) EV")
            #expect(perPixel.pixel(x: x, y: y).red == expected, "\(value) at \(ev) EV")
        }
    }

    @Test("black and white gives r == g == b (Kingfisher's +0.7 EV on the luma)")
    func blackWhite() throws {
        let image = Synthetic.animated(width: 6, height: 5)
        let result = try BlackWhiteProcessor().process(image)
        for frame in 0..<3 {
            for y in 0..<5 {
                for x in 0..<6 {
                    let pixel = result.pixel(x: x, y: y, frame: frame)
                    #expect(pixel.red == pixel.green && pixel.green == pixel.blue)
                    #expect(pixel.alpha == image.pixel(x: x, y: y, frame: frame).alpha)
                }
            }
        }
        // luma 117.65 -> linear 0.1779 * 2^0.7 = 0.2890 -> sRGB 147.15
        #expect(try BlackWhiteProcessor().process(Self.single(RGBA(red: 200, green: 100, blue: 50))).pixel(x: 0, y: 0)
                == RGBA(red: 147, green: 147, blue: 147))
        #expect(try BlackWhiteProcessor().process(image) == BlackWhiteProcessor.colorControls.process(image))
    }
}

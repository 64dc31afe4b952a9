import Foundation
import Testing
@testable import Alcedo

@Suite("EXIF orientation in PNG and WebP")
struct ContainerOrientationTests {
    @Test("eXIf / EXIF orientation 6 is applied like JPEG's and reported by info", arguments: ["orientation-6.png", "orientation-6.webp"])
    func applied(_ file: String) throws {
        let data = try ColorFixtures.data(file)
        let image = try ImageCodecRegistry.shared.decode(data)
        #expect(image.orientation == .right)
        #expect(image.width == 32 && image.height == 48)
        // The stored top-left red marker is now top-right.
        #expect(image.pixel(x: 30, y: 1) == RGBA(red: 255, green: 0, blue: 0))
        let stored = try ImageCodecRegistry.shared.decode(data, options: DecodingOptions(appliesOrientation: false))
        #expect(stored.width == 48 && stored.height == 32 && stored.orientation == .right)
        #expect(image.pixels == ImageOrientation.right.apply(to: stored.pixels, width: 48, height: 32).pixels)
        let info = try ImageCodecRegistry.shared.info(for: data)
        #expect(info.orientation == .right && info.width == 32 && info.height == 48)
    }

    @Test("a WebP turned by EXIF still gets decoder-side scaling that covers the upright target")
    func scaledWebP() throws {
        let data = try ColorFixtures.data("orientation-6.webp")
        let image = try WebPDecoder().decode(data, options: DecodingOptions(targetSize: PixelSize(width: 16, height: 24)))
        #expect(image.width >= 16 && image.height >= 24)
        #expect(image.width < 32)
    }

    @Test("a scaled decode reports the whole picture's size, turned as its pixels are; a full-size one and an SVG none")
    func scaledFrom() throws {
        let webp = try ColorFixtures.data("orientation-6.webp")
        let upright = try ImageCodecRegistry.shared.decode(webp, options: DecodingOptions(targetSize: PixelSize(width: 8, height: 12)))
        #expect(upright.pixelSize != PixelSize(width: 32, height: 48))
        #expect(upright.scaledFrom == PixelSize(width: 32, height: 48))
        let stored = try ImageCodecRegistry.shared.decode(webp, options: DecodingOptions(targetSize: PixelSize(width: 12, height: 8),
                                                                                          appliesOrientation: false))
        #expect(stored.scaledFrom == PixelSize(width: 48, height: 32))
        #expect(try ImageCodecRegistry.shared.decode(webp).scaledFrom == nil)
        let jpeg = try Fixtures.data("jpeg-generated/orientation-6.jpg")
        let whole = try ImageCodecRegistry.shared.decode(jpeg)
        let scaled = try ImageCodecRegistry.shared.decode(jpeg, options: DecodingOptions(targetSize: PixelSize(width: 2, height: 2)))
        #expect(scaled.pixelSize != whole.pixelSize)
        #expect(scaled.scaledFrom == whole.pixelSize)
        let storedJPEG = try ImageCodecRegistry.shared.decode(jpeg, options: DecodingOptions(targetSize: PixelSize(width: 2, height: 2),
                                                                                             appliesOrientation: false))
        #expect(storedJPEG.scaledFrom == PixelSize(width: whole.height, height: whole.width))
        let svg = try ImageCodecRegistry.shared.decode(try SVGFixtures.data("shapes.svg"),
                                                       options: DecodingOptions(targetSize: PixelSize(width: 10, height: 10)))
        #expect(svg.scaledFrom == nil)
    }
}

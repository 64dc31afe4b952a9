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
}

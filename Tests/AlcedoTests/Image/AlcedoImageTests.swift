import Foundation
import Testing
@testable import Alcedo

@Suite("The image value")
struct AlcedoImageTests {
    /// A 3x2 image whose pixel (x, y) has red = x, green = y.
    static func gradient() -> AlcedoImage {
        var pixels: [UInt8] = []
        for y in 0..<2 { for x in 0..<3 { pixels += [UInt8(x), UInt8(y), 0, 255] } }
        return AlcedoImage(width: 3, height: 2, pixels: pixels)
    }

    @Test("cost counts every frame")
    func cost() {
        let frame = AlcedoImage.Frame(pixels: [UInt8](repeating: 0, count: 16), duration: 0.1)
        let image = AlcedoImage(width: 2, height: 2, frames: [frame, frame, frame], loopCount: 3)
        #expect(image.costInBytes == 48)
        #expect(image.isAnimated)
        #expect(abs(image.totalDuration - 0.3) < 1e-9)
        #expect(image.loopCount == 3)
    }

    @Test("short frame delays become 100 ms")
    func frameDelays() {
        #expect(AlcedoImage.normalizedFrameDuration(nil) == 0.1)
        #expect(AlcedoImage.normalizedFrameDuration(0) == 0.1)
        #expect(AlcedoImage.normalizedFrameDuration(0.01) == 0.1)
        #expect(AlcedoImage.normalizedFrameDuration(0.02) == 0.02)
    }

    @Test("every EXIF orientation stands the picture upright", arguments: ImageOrientation.allCases)
    func orientation(_ orientation: ImageOrientation) {
        let image = Self.gradient()
        let (pixels, width, height) = orientation.apply(to: image.pixels, width: 3, height: 2)
        #expect(width == (orientation.swapsDimensions ? 2 : 3))
        #expect(height == (orientation.swapsDimensions ? 3 : 2))
        let upright = AlcedoImage(width: width, height: height, pixels: pixels)
        // Where does the stored top-left pixel (0, 0) land?
        let expectedTopLeft: (Int, Int)
        switch orientation {
        case .up, .leftMirrored: expectedTopLeft = (0, 0)
        case .upMirrored, .right: expectedTopLeft = (width - 1, 0)
        case .down, .rightMirrored: expectedTopLeft = (width - 1, height - 1)
        case .downMirrored, .left: expectedTopLeft = (0, height - 1)
        }
        #expect(upright.pixel(x: expectedTopLeft.0, y: expectedTopLeft.1) == RGBA(red: 0, green: 0, blue: 0))
        // Every stored pixel appears exactly once.
        let distinct: Set<[UInt8]> = Set(stride(from: 0, to: pixels.count, by: 4).map { (i: Int) -> [UInt8] in [pixels[i], pixels[i + 1]] })
        #expect(distinct.count == 6)
    }

    @Test("pixel sizes")
    func sizes() {
        #expect(PixelSize(parsing: "256x128") == PixelSize(width: 256, height: 128))
        #expect(PixelSize(parsing: "256") == nil)
        #expect(PixelSize(parsing: "0x5") == nil)
        #expect(PixelSize(parsing: "-3x5") == nil)
        let photo = PixelSize(width: 4000, height: 3000)
        #expect(photo.fitting(in: PixelSize(width: 256, height: 256)) == PixelSize(width: 256, height: 192))
        #expect(photo.filling(PixelSize(width: 256, height: 256)) == PixelSize(width: 341, height: 256))
        #expect(PixelSize(width: 100, height: 50).fitting(in: PixelSize(width: 400, height: 400)) == PixelSize(width: 100, height: 50))
    }

    @Test("limits are checked before allocation")
    func limits() {
        let limits = DecodingLimits(maxPixelCount: 1_000, maxFrameCount: 3, maxTotalBytes: 10_000)
        #expect(throws: AlcedoError.self) { try limits.check(width: 100, height: 11, format: .png) }
        #expect(throws: AlcedoError.self) { try limits.check(width: Int.max, height: 2, format: .png) }
        #expect(throws: AlcedoError.self) { try limits.check(width: 0, height: 2, format: .png) }
        #expect(throws: AlcedoError.self) { try limits.check(frameCount: 4, width: 1, height: 1, format: .gif) }
        #expect(throws: AlcedoError.self) { try limits.check(frameCount: 3, width: 30, height: 30, format: .gif) }
        #expect(throws: Never.self) { try limits.check(width: 10, height: 10, format: .png) }
    }

    @Test("decoder-side minimum scale")
    func minimumScale() {
        var options = DecodingOptions(targetSize: PixelSize(width: 256, height: 256))
        #expect(options.minimumScale(forWidth: 4000, height: 3000) == 256.0 / 4000.0)
        options.contentMode = .aspectFill
        #expect(options.minimumScale(forWidth: 4000, height: 3000) == 256.0 / 3000.0)
        #expect(options.minimumScale(forWidth: 100, height: 100) == 1)
        #expect(DecodingOptions().minimumScale(forWidth: 10, height: 10) == 1)
    }
}

import Foundation
import Testing
@testable import Alcedo

/// Decoding a JPEG XL for a thumbnail: the DC pass only when the target needs no more detail.
@Suite("JPEG XL scaled decoding")
struct JXLScaledDecodingTests {
    /// 1024x768 of smooth gradients with a stripe pattern 48 pixels wide (detail a 1/8
    /// thumbnail still shows), encoded lossy by Alcedo's encoder.
    static let picture: AlcedoImage = {
        let width = 1024, height = 768
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                pixels[i] = UInt8(x * 255 / (width - 1))
                pixels[i + 1] = UInt8(y * 255 / (height - 1))
                pixels[i + 2] = UInt8(128 + 100 * sin(Double(x + y) * .pi / 24))
            }
        }
        return AlcedoImage(width: width, height: height, pixels: pixels)
    }()

    static let lossy: Data = try! JXLEncoder().encode(picture, options: EncodingOptions(quality: 90))

    /// `image` resized to `size` by Alcedo's resampler.
    static func thumbnail(_ image: AlcedoImage, _ size: PixelSize) -> AlcedoImage {
        AlcedoImage(width: size.width, height: size.height,
                    pixels: Resampler.resize(image.pixels, width: image.width, height: image.height, to: size))
    }

    @Test("a target at most 1/8 of the picture decodes the DC pass only: a different render, the same thumbnail within 3 levels on average")
    func dcPassForSmallTargets() throws {
        let full = try JXLDecoder().decode(Self.lossy)
        let target = PixelSize(width: 128, height: 96)
        let dc = try JXLDecoder().decode(Self.lossy, options: DecodingOptions(targetSize: target))
        #expect(dc.width == 1024 && dc.height == 768, "libjxl 0.7 renders the DC pass at full size")
        #expect(dc.pixels != full.pixels, "the DC render is not the full decode")
        let fromDC = Self.thumbnail(dc, target), fromFull = Self.thumbnail(full, target)
        let mean = JXLFixtures.meanDifference(fromDC, fromFull)
        #expect(mean < 3, "mean difference \(mean)")
        let reference = Self.thumbnail(Self.picture, target)
        #expect(JXLFixtures.meanDifference(fromDC, reference) < 4, "close to the source's thumbnail too")
        // Under aspect fill, the side that decides is the one that needs the most detail.
        let fill = try JXLDecoder().decode(Self.lossy, options: DecodingOptions(targetSize: PixelSize(width: 128, height: 10), contentMode: .aspectFill))
        #expect(fill.pixels == dc.pixels)
    }

    @Test("larger targets, files with alpha and lossless files decode in full")
    func fullDecodeOtherwise() throws {
        let full = try JXLDecoder().decode(Self.lossy)
        let half = try JXLDecoder().decode(Self.lossy, options: DecodingOptions(targetSize: PixelSize(width: 512, height: 384)))
        #expect(half.pixels == full.pixels, "a 1/2 target needs the AC detail")
        let fill = try JXLDecoder().decode(Self.lossy, options: DecodingOptions(targetSize: PixelSize(width: 256, height: 10), contentMode: .aspectFill))
        #expect(fill.pixels == full.pixels, "aspect fill to 256 wide needs 1/4")

        var translucent = Self.picture.pixels
        for index in stride(from: 3, to: translucent.count, by: 4) { translucent[index] = UInt8(index / 4 % 256) }
        let alpha = try JXLEncoder().encode(AlcedoImage(width: 1024, height: 768, pixels: translucent), options: EncodingOptions(quality: 90))
        let alphaFull = try JXLDecoder().decode(alpha)
        let alphaSmall = try JXLDecoder().decode(alpha, options: DecodingOptions(targetSize: PixelSize(width: 64, height: 48)))
        #expect(alphaSmall.pixels == alphaFull.pixels, "alpha is not in the DC pass")

        let lossless = try JXLEncoder().encode(Self.picture, options: EncodingOptions(lossless: true))
        let exact = try JXLDecoder().decode(lossless, options: DecodingOptions(targetSize: PixelSize(width: 64, height: 48)))
        #expect(exact.pixels == Self.picture.pixels, "a lossless file has no DC pass to stop at")
    }
}

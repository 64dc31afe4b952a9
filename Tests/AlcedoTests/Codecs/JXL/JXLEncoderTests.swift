import Foundation
import Testing
@testable import Alcedo

@Suite("JPEG XL encoder")
struct JXLEncoderTests {
    @Test("lossless round trip keeps every sample, alpha included")
    func lossless() throws {
        let source = try JXLFixtures.png("jxl-generated/alpha.png")
        let data = try JXLEncoder().encode(source, options: EncodingOptions(lossless: true))
        #expect(ImageFormat.sniff(data) == .jxl)
        let back = try JXLDecoder().decode(data)
        #expect(back.pixelSize == source.pixelSize)
        #expect(JXLFixtures.maxVisibleDifference(back, source) == 0)
        let noise = JXLTestImages.noise(width: 33, height: 17, seed: 9)
        #expect(try JXLDecoder().decode(JXLEncoder(effort: 1).encode(noise, options: EncodingOptions(lossless: true))).pixels == noise.pixels)
    }

    @Test("lossy: quality maps onto cjxl's distance, smaller files at lower quality, close to the source")
    func lossy() throws {
        #expect(JXLEncoder.distance(forQuality: 90) == 1.0)
        #expect(abs(JXLEncoder.distance(forQuality: 100) - 0.1) < 1e-6)
        #expect(JXLEncoder.distance(forQuality: 1) == 25)
        let source = try JXLFixtures.png("jxl-generated/photo.png")
        let high = try JXLEncoder().encode(source, options: EncodingOptions(quality: 95))
        let low = try JXLEncoder().encode(source, options: EncodingOptions(quality: 40))
        #expect(low.count < high.count)
        let back = try JXLDecoder().decode(high)
        #expect(JXLFixtures.maxDifference(back, source) <= 64)
        #expect(JXLFixtures.meanDifference(back, source) < 1.5)
        #expect(try JXLDecoder().info(for: high).compression == "lossy (XYB)")
        #expect(!(try JXLDecoder().info(for: high).hasAlpha))
    }

    @Test("an animation keeps its frames, durations and loop count")
    func animation() throws {
        let gif = try GIFDecoder().decode(JXLFixtures.data("anim.gif"))
        let data = try JXLEncoder().encode(gif, options: EncodingOptions(lossless: true))
        let back = try JXLDecoder().decode(data)
        #expect(back.frames.count == 3 && back.loopCount == gif.loopCount)
        #expect(back.frames.map(\.duration) == [0.1, 0.2, 0.3])
        for index in 0..<3 { #expect(back.frames[index].pixels == gif.frames[index].pixels) }
    }

    @Test("an image kept in Display P3 carries its profile")
    func profile() throws {
        let p3 = try JXLDecoder().decode(JXLFixtures.data("p3-lossless.jxl"), options: DecodingOptions(colorManagement: .preserve))
        let data = try JXLEncoder().encode(p3, options: EncodingOptions(lossless: true))
        let back = try JXLDecoder().decode(data)
        #expect(JXLFixtures.maxDifference(back, try JXLFixtures.png("color-generated/p3.png.srgb.png")) <= 2)
    }

    @Test("quality outside 1...100 is refused")
    func invalidQuality() {
        #expect(ErrorReasons.encoding { () throws(AlcedoError) in _ = try JXLEncoder().encode(JXLTestImages.noise(width: 4, height: 4, seed: 1), options: EncodingOptions(quality: 0)) } == .invalidQuality(0))
    }
}

import Foundation
import Testing
@testable import Alcedo

@Suite("Colour management in the pipeline and the CLI")
struct ColorPipelineTests {
    @Test("the option reaches the decoder, and sRGB and preserved images are cached apart")
    func optionAndCacheKeys() async throws {
        try await withPipeline { h in
            let p3 = try ColorFixtures.data("p3.jpg")
            let source = Source.provider(RawImageDataProvider(data: p3, cacheKey: "p3"))
            let converted = try await h.manager.retrieveImage(with: source, options: [.waitForCache])
            #expect(converted.image.colorMetadata.pixelProfile == nil)
            #expect(ColorFixtures.maxDifference(converted.image, try ColorFixtures.reference("p3.jpg")) <= 2)
            // The sRGB image is now in memory; a preserving request must not be served it.
            let preserved = try await h.manager.retrieveImage(with: source, options: [.colorManagement(.preserve), .waitForCache])
            #expect(preserved.image.colorMetadata.pixelProfile?.description == "Display P3 (Alcedo test)")
            let raw = try JPEGDecoder().decode(p3, options: DecodingOptions(colorManagement: .ignore))
            #expect(preserved.image.pixels == raw.pixels)
            let again = try await h.manager.retrieveImage(with: source)
            #expect(again.cacheType == .memory)
            #expect(again.image.colorMetadata.pixelProfile == nil)
            // With a processor, the preserved variant keeps the profile through processing.
            let thumbnail = DownsamplingImageProcessor(size: PixelSize(width: 12, height: 8))
            let small = try await h.manager.retrieveImage(with: source, options: [.colorManagement(.preserve), .processor(thumbnail)])
            #expect(small.image.colorMetadata.pixelProfile != nil)
        }
    }

    @Test("alcedo info reports iccProfile; convert --color preserve embeds it")
    func commandLine() async throws {
        let folder = try TemporaryDirectory()
        let input = Fixtures.url("color-generated/p3.jpg").path
        let info = try await AlcedoProcess.runDetached(["info", "--json", input])
        #expect(info.status == 0)
        #expect(info.stdout.contains("\"iccProfile\":{"))
        #expect(info.stdout.contains("\"description\":\"Display P3 (Alcedo test)\""))
        #expect(info.stdout.contains("\"colorSpace\":\"RGB\""))
        let untagged = try await AlcedoProcess.runDetached(["info", "--json", Fixtures.url("libjpeg-turbo/testorig.jpg").path])
        #expect(untagged.stdout.contains("\"iccProfile\":null"))

        let kept = folder.url.appendingPathComponent("kept.png").path
        let preserving = try await AlcedoProcess.runDetached(["convert", input, kept, "--color", "preserve"])
        #expect(preserving.status == 0)
        #expect(try PNGDecoder().info(for: Data(contentsOf: URL(fileURLWithPath: kept))).colorProfile?.description == "Display P3 (Alcedo test)")
        let converted = folder.url.appendingPathComponent("converted.png").path
        let converting = try await AlcedoProcess.runDetached(["convert", input, converted])
        #expect(converting.status == 0)
        #expect(try PNGDecoder().info(for: Data(contentsOf: URL(fileURLWithPath: converted))).colorProfile == nil)
        let avif = folder.url.appendingPathComponent("thumb.avif").path
        let thumbnailing = try await AlcedoProcess.runDetached(["convert", input, avif, "--downsample", "24x24"])
        #expect(thumbnailing.status == 0)
        #expect(try AVIFDecoder().info(for: Data(contentsOf: URL(fileURLWithPath: avif))).width == 24)
        let unknownColor = try await AlcedoProcess.runDetached(["convert", input, converted, "--color", "vivid"])
        #expect(unknownColor.status != 0)
    }
}

import Foundation
import Synchronization
import Testing
@testable import Alcedo

/// Records the size of the image it receives: what the decoder produced.
private struct InputRecordingProcessor: ImageProcessor {
    let inputs: Collected<PixelSize>
    let target: PixelSize

    var identifier: String { "test.recording(\(target))" }
    var decodingTarget: (size: PixelSize, mode: ContentMode)? { (target, .aspectFit) }

    func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        inputs.append(image.pixelSize)
        return image.resized(toFit: target)
    }
}

@Suite("Pipeline processing")
struct PipelineProcessingTests {
    @Test func decodingTargetDrivesDecoderSideScaling() async throws {
        try await withPipeline { h in
            h.server.route("/big.jpg", .ok(TestImages.jpeg(width: 256, height: 192)))
            let inputs = Collected<PixelSize>()
            let processor = InputRecordingProcessor(inputs: inputs, target: PixelSize(width: 32, height: 32))
            let result = try await h.manager.retrieveImage(with: h.server.url("/big.jpg"), options: [.processor(processor)])
            #expect(result.image.pixelSize == PixelSize(width: 32, height: 24))
            // libjpeg's DCT scaling gave 1/8 of the size: the processor never saw the full image.
            #expect(inputs.values == [PixelSize(width: 32, height: 24)])
        }
    }

    @Test func decodingTargetAppliesToDiskOriginals() async throws {
        try await withPipeline { h in
            h.server.route("/orig.jpg", .ok(TestImages.jpeg(width: 256, height: 192)))
            let url = h.server.url("/orig.jpg")
            _ = try await h.manager.retrieveImage(with: url, options: [.waitForCache])
            h.cache.clearMemoryCache()
            let inputs = Collected<PixelSize>()
            let processor = InputRecordingProcessor(inputs: inputs, target: PixelSize(width: 64, height: 64))
            let result = try await h.manager.retrieveImage(with: url, options: [.processor(processor), .waitForCache])
            // Made now from the original on disk: Kingfisher's `.none`, and where the original was.
            #expect(result.cacheType == .none)
            #expect(result.originalCacheType == .disk)
            #expect(inputs.values == [PixelSize(width: 64, height: 48)])
            #expect(h.server.requestCount("/orig.jpg") == 1)
            #expect(h.cache.imageCachedType(forKey: url.cacheKey, processorIdentifier: processor.identifier) == .memory)
        }
    }

    @Test func composedProcessorsRunInOrderAndKeyTheChain() async throws {
        try await withPipeline { h in
            h.server.route("/chain.jpg", .ok(TestImages.jpeg(width: 80, height: 40)))
            let url = h.server.url("/chain.jpg")
            let chain = DownsamplingImageProcessor(size: PixelSize(width: 20, height: 20))
                |> BorderImageProcessor(border: 1, color: .white)
                |> RoundCornerImageProcessor(radius: .point(4))
            let result = try await h.manager.retrieveImage(with: url, options: [.processor(chain), .waitForCache])
            #expect(result.image.pixelSize == PixelSize(width: 20, height: 10))
            #expect(result.image.pixel(x: 0, y: 0).alpha == 0)        // the rounded corner
            #expect(result.image.pixel(x: 10, y: 0) == .white)         // the border
            #expect(chain.identifier.contains("|>"))
            h.cache.clearMemoryCache()
            #expect(h.cache.imageCachedType(forKey: url.cacheKey, processorIdentifier: chain.identifier) == .disk)
            let hit = try await h.manager.retrieveImage(with: url, options: [.processor(chain)])
            #expect(hit.cacheType == .disk)
            // The variant holds transparency: it was stored in a format that keeps it.
            #expect(hit.image.pixel(x: 0, y: 0).alpha == 0)
        }
    }

    @Test(arguments: [
        ("blur", BlurImageProcessor(blurRadius: 2) as any ImageProcessor),
        ("tint", TintImageProcessor(tint: RGBA(red: 255, green: 0, blue: 0, alpha: 128))),
        ("crop", CroppingImageProcessor(size: PixelSize(width: 8, height: 8))),
        ("bw", BlackWhiteProcessor()),
        ("resize", ResizingImageProcessor(referenceSize: PixelSize(width: 7, height: 9))),
        ("colors", ColorControlsProcessor(brightness: 0.1, contrast: 1.2, saturation: 0.5)),
        ("overlay", OverlayImageProcessor(overlay: .black, fraction: 0.3)),
        ("blend", BlendImageProcessor(blendMode: .multiply, alpha: 0.8, backgroundColor: .white)),
    ])
    func everyProcessorWorksThroughThePipeline(_ name: String, _ processor: any ImageProcessor) async throws {
        try await withPipeline { h in
            let jpeg = TestImages.jpeg(width: 24, height: 16)
            h.server.route("/\(name).jpg", .ok(jpeg))
            let url = h.server.url("/\(name).jpg")
            let expected = try processor.process(ImageCodecRegistry.shared.decode(jpeg))
            let result = try await h.manager.retrieveImage(with: url, options: [.processor(processor)])
            #expect(result.image == expected)
            #expect(h.cache.retrieveImageInMemoryCache(forKey: url.cacheKey, processorIdentifier: processor.identifier) == expected)
        }
    }

    @Test func animatedImagesAreProcessedFrameByFrame() async throws {
        try await withPipeline { h in
            let animated = try Fixtures.data("webp-generated/animated.webp")
            h.server.route("/anim.webp", .ok(animated))
            let original = try ImageCodecRegistry.shared.decode(animated)
            #expect(original.frames.count == 4)
            let processor = DownsamplingImageProcessor(size: PixelSize(width: 16, height: 16))
            let result = try await h.manager.retrieveImage(with: h.server.url("/anim.webp"),
                                                           options: [.processor(processor), .waitForCache])
            #expect(result.image.frames.count == 4)
            #expect(result.image.pixelSize == PixelSize(width: 16, height: 12))
            #expect(result.image.frames.map(\.duration) == original.frames.map(\.duration))
            #expect(result.image.loopCount == original.loopCount)
            // The frames are composited at the target scale by the decoder (each frame decoded
            // scaled), then fitted: the same pixels as that decode processed, and close to
            // resizing each full-size frame.
            let scaled = try ImageCodecRegistry.shared.decode(animated, options: DecodingOptions(targetSize: PixelSize(width: 16, height: 16)))
            for index in 0..<4 {
                #expect(result.image.frame(at: index) == (try processor.process(scaled)).frame(at: index))
                let full = original.frame(at: index).resized(toFit: PixelSize(width: 16, height: 16))
                let difference = zip(result.image.frames[index].pixels, full.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
                #expect(Double(difference) / Double(full.pixels.count) < 12, "frame \(index + 1)")
            }
            // Its variant on disk is still an animation.
            h.cache.clearMemoryCache()
            let hit = try await h.manager.retrieveImage(with: h.server.url("/anim.webp"), options: [.processor(processor)])
            #expect(hit.cacheType == .disk)
            #expect(hit.image.frames.count == 4)
        }
    }
}

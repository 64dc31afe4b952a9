import Foundation
import Testing
@testable import Alcedo

/// A processor that reports two steps of its own with a clock.
private struct TwoStepProcessor: ImageProcessor {
    var identifier: String { "two-steps" }

    func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        var steps = ProcessingStepClock()
        let smaller = image.resized(to: PixelSize(width: max(1, image.width / 2), height: max(1, image.height / 2)))
        steps.lap("halve")
        let flipped = try FlipImageProcessor(horizontal: true, vertical: false).process(smaller)
        steps.lap("mirror")
        return flipped
    }
}

/// A processor that always fails.
private struct AlwaysFailingProcessor: ImageProcessor {
    var identifier: String { "fails" }

    func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        throw .processorError(reason: .processingFailed(processor: self, item: .image(image)))
    }
}

@Suite("Processing steps timed one by one")
struct ProcessingStepsTests {
    static let image = TestImages.image(width: 64, height: 48)

    static func names(_ steps: [ProcessingStepTime]) -> [String] { steps.map(\.name) }

    @Test func eachProcessorOfAChainIsAStepAndAProcessorsOwnLapsReplaceIt() throws {
        let chain = ResizingImageProcessor(referenceSize: PixelSize(width: 32, height: 24))
            |> RoundCornerImageProcessor(radius: .point(4)) |> TwoStepProcessor() |> BlurImageProcessor(blurRadius: 1)
        let (result, steps) = ProcessingStepClock.run(chain, on: Self.image)
        #expect(try result.get().pixelSize == PixelSize(width: 16, height: 12))
        #expect(Self.names(steps) == ["resizing", "round_corner", "halve", "mirror", "blur"])
        #expect(steps.allSatisfy { $0.duration >= .zero })
    }

    @Test func aAlwaysFailingProcessorEndsTheRunWithItsStepRecorded() {
        let chain = BlurImageProcessor(blurRadius: 1) |> AlwaysFailingProcessor() |> RoundCornerImageProcessor(radius: .point(4))
        let (result, steps) = ProcessingStepClock.run(chain, on: Self.image)
        #expect(throws: AlcedoError.self) { try result.get() }
        #expect(Self.names(steps) == ["blur", "always_failing"])
    }

    @Test func stepNamesComeFromTheTypeInSnakeCase() {
        #expect(ProcessingStepClock.stepName(of: RoundCornerImageProcessor(radius: .point(2))) == "round_corner")
        #expect(ProcessingStepClock.stepName(of: DownsamplingImageProcessor(size: PixelSize(width: 4, height: 4))) == "downsampling")
        #expect(ProcessingStepClock.stepName(of: TwoStepProcessor()) == "two_step")
    }

    @Test func aClockOutsideATimedRunRecordsNothing() throws {
        // Called directly, the processor's clock has nowhere to write and the image is made all the same.
        let image = try TwoStepProcessor().process(Self.image)
        #expect(image.pixelSize == PixelSize(width: 32, height: 24))
        let (_, steps) = ProcessingStepClock.run(DefaultImageProcessor.default, on: Self.image)
        #expect(Self.names(steps) == ["default"])
    }

    @Test func aRetrievalReportsItsStepsAndTheVariantsEncodingApartFromStoring() async throws {
        let metrics = try await withPipeline { h in
            h.server.route("/s.jpg", .ok(TestImages.jpeg(width: 80, height: 60)))
            let processor = ResizingImageProcessor(referenceSize: PixelSize(width: 40, height: 30)) |> TwoStepProcessor()
            return try await h.manager.retrieveImage(with: h.server.url("/s.jpg"), options: [.processor(processor), .waitForCache]).metrics
        }
        #expect(Self.names(metrics.processingSteps) == ["resizing", "halve", "mirror"])
        #expect(metrics.encoding > .zero, "the variant was encoded for the disk cache before delivery")
        #expect(metrics.encoding <= metrics.storing)
    }
}

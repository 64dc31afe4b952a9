@testable import Alcedo
import Foundation
import Synchronization
import Testing

/// A list several tasks append to.
final class Recorded<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var all: [Element] { items.withLock { $0 } }
}

@Suite("MemoryBudget: reservations, the queue, refusals, the caches' share")
struct MemoryBudgetTests {
    /// Waits until `condition` holds (10 ms steps, failing after 300 s: a bound, not a timing claim).
    func eventually(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(300)
        // Checked once more after the deadline (a stalled machine must not fail a condition met meanwhile).
        while true {
            if condition() { return }
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("condition not met within 300 s")
    }

    /// `onGrant` hears every grant, immediate, after a wait, memory-only or tried, with its
    /// bytes, and nothing of a refusal.
    @Test func onGrantHearsEveryGrantWithItsBytes() async throws {
        let heard = Recorded<Int>()
        let budget = MemoryBudget(capacity: 100, onGrant: { heard.append($0) })
        let first = try await budget.reserve(60)
        let memoryOnly = try await budget.reserveMemory(10)
        #expect(budget.tryReserve(50) == nil)
        #expect(heard.all == [60, 10])
        await #expect(throws: AlcedoError.self) { _ = try await budget.reserve(101) }
        let waiting = Task { try await budget.reserve(50) }
        try await eventually { budget.snapshot.waiting == 1 }
        #expect(heard.all == [60, 10], "a waiting job is not granted yet")
        first.release()
        let second = try await waiting.value
        #expect(heard.all == [60, 10, 50])
        second.release()
        memoryOnly.release()
        let tried = try #require(budget.tryReserve(30))
        #expect(heard.all == [60, 10, 50, 30])
        tried.release()
    }

    @Test func aReservationThatFitsIsGrantedAndGivenBack() async throws {
        let budget = MemoryBudget(capacity: 100)
        let first = try await budget.reserve(60)
        #expect(budget.snapshot.reserved == 60 && budget.snapshot.free == 40 && budget.snapshot.running == 1)
        first.release()
        first.release()  // a second release gives nothing back twice
        #expect(budget.snapshot.reserved == 0 && budget.snapshot.running == 0)
    }

    @Test func aJobThatDoesNotFitWaitsInOrderAndStartsWhenMemoryIsFreed() async throws {
        let events = Recorded<MemoryBudget.Event>()
        let budget = MemoryBudget(capacity: 100) { event in events.append(event) }
        let held = try await budget.reserve(70)
        let order = Recorded<String>()
        let big = Task {
            let reservation = try await budget.reserve(60, for: "big")
            order.append("big")
            return reservation
        }
        try await eventually { budget.snapshot.waiting == 1 }
        // A small job behind a waiting one waits too (first in, first out: no starvation).
        let small = Task {
            let reservation = try await budget.reserve(10, for: "small")
            order.append("small")
            return reservation
        }
        try await eventually { budget.snapshot.waiting == 2 }
        #expect(budget.snapshot.waitingForMemory == 2)
        #expect(order.all.isEmpty)
        held.release()
        let bigReservation = try await big.value
        let smallReservation = try await small.value
        #expect(order.all == ["big", "small"])
        #expect(budget.snapshot.reserved == 70)
        bigReservation.release()
        smallReservation.release()
        let seen = events.all
        #expect(seen.count == 2)
        if case .startedWaitingForMemory(let snapshot) = seen.first { #expect(snapshot.reserved == 70) } else { Issue.record("\(seen)") }
        if case .stoppedWaitingForMemory = seen.last {} else { Issue.record("\(seen)") }
        #expect(budget.snapshot.waitedForMemoryTotal >= 1)
    }

    @Test func aJobThatCanNeverFitIsRefusedAtOnceNamingTheFigures() async throws {
        let budget = MemoryBudget(capacity: 100 << 20)
        budget.setCeiling(40 << 20, for: "result")
        do {
            _ = try await budget.reserve(70 << 20, for: "decoding a 4000x3000 JPEG")
            Issue.record("reserved more than can ever fit")
        } catch {
            guard case .neverFits(let what, let bytes, let largest, let capacity) = error.memoryBudgetReason else {
                Issue.record("\(error)")
                return
            }
            #expect(what == "decoding a 4000x3000 JPEG" && bytes == 70 << 20 && largest == 60 << 20 && capacity == 100 << 20)
            #expect(error.description.contains("70 MiB") && error.description.contains("100 MiB") && error.description.contains("60 MiB"))
        }
        #expect(budget.snapshot.refusedTotal == 1)
        #expect(budget.largestReservation == 60 << 20)
    }

    @Test func theQueueIsBounded() async throws {
        let budget = MemoryBudget(capacity: 100, queueLength: 1)
        let held = try await budget.reserve(100)
        let waiter = Task { try await budget.reserve(50) }
        try await eventually { budget.snapshot.waiting == 1 }
        do {
            _ = try await budget.reserve(50)
            Issue.record("the queue took a second waiter")
        } catch {
            guard case .queueFull(let waiting, let limit) = error.memoryBudgetReason else { Issue.record("\(error)"); return }
            #expect(waiting == 1 && limit == 1)
        }
        held.release()
        try await waiter.value.release()
    }

    @Test func aCancelledWaiterLeavesTheQueueAndLetsTheNextIn() async throws {
        let budget = MemoryBudget(capacity: 100)
        let held = try await budget.reserve(80)
        let cancelled = Task { try await budget.reserve(90) }
        try await eventually { budget.snapshot.waiting == 1 }
        let next = Task { try await budget.reserve(20) }
        try await eventually { budget.snapshot.waiting == 2 }
        cancelled.cancel()
        do {
            _ = try await cancelled.value
            Issue.record("a cancelled waiter was granted")
        } catch {
            guard case .requestError(.cancelled) = error as? AlcedoError else { Issue.record("\(error)"); return }
        }
        // The head left: the 20 bytes behind it fit beside the 80 held.
        let granted = try await next.value
        #expect(budget.snapshot.reserved == 100 && budget.snapshot.waiting == 0)
        granted.release()
        held.release()
    }

    @Test func theCountLimitHoldsWhateverMemoryIsFree() async throws {
        let budget = MemoryBudget(capacity: 1 << 30, maximumConcurrent: 1)
        let first = try await budget.reserve(1)
        let second = Task { try await budget.reserve(1) }
        try await eventually { budget.snapshot.waiting == 1 }
        // Waiting for a place, not for memory.
        #expect(budget.snapshot.waitingForMemory == 0)
        first.release()
        try await second.value.release()
    }

    @Test func whatTheCachesHoldIsNotFreeUntilTheyLetGo() async throws {
        let budget = MemoryBudget(capacity: 100)
        budget.setCeiling(50, for: "result")
        budget.setHeld(50, by: "result")
        #expect(budget.snapshot.free == 50)
        let first = try await budget.reserve(50)
        let second = Task { try await budget.reserve(30) }
        try await eventually { budget.snapshot.waitingForMemory == 1 }
        budget.setHeld(20, by: "result")  // the cache evicted
        let reservation = try await second.value
        #expect(budget.snapshot.free == 0)
        reservation.release()
        first.release()
        #expect(budget.snapshot.heldTotal == 20)
    }

    @Test func aReservationShrinksWithoutWaitingAndDeinitReleases() async throws {
        let budget = MemoryBudget(capacity: 100)
        var reservation: MemoryReservation? = try await budget.reserve(80)
        reservation?.shrink(to: 30)
        reservation?.shrink(to: 90)  // growing is ignored
        #expect(budget.snapshot.reserved == 30)
        reservation = nil
        #expect(budget.snapshot.reserved == 0 && budget.snapshot.running == 0)
    }
}

@Suite("WorkingSetEstimate: from the header, at the decoder's scale")
struct WorkingSetEstimateTests {
    func image(width: Int, height: Int) -> AlcedoImage {
        AlcedoImage(width: width, height: height, pixels: [UInt8](repeating: 200, count: width * height * 4))
    }

    @Test func aJPEGThumbnailCountsTheDCTScaledDecodeNotTheFullPicture() throws {
        let data = try ImageCodecRegistry.shared.encode(image(width: 1600, height: 1200), as: .jpeg)
        let full = try WorkingSetEstimate.estimate(data: data, options: DecodingOptions())
        #expect(full.decodedSize == PixelSize(width: 1600, height: 1200))
        #expect(full.decoded == 1600 * 1200 * 4)
        let thumbnail = try WorkingSetEstimate.estimate(data: data, options: DecodingOptions(targetSize: PixelSize(width: 200, height: 150)))
        // 1/8 DCT scaling gives exactly 200x150.
        #expect(thumbnail.decodedSize == PixelSize(width: 200, height: 150))
        #expect(thumbnail.outputSize == PixelSize(width: 200, height: 150))
        #expect(thumbnail.total < full.total / 8)
        // What the decoder really makes is what was estimated.
        let decoded = try ImageCodecRegistry.shared.decode(data, options: DecodingOptions(targetSize: PixelSize(width: 200, height: 150)))
        #expect(decoded.pixelSize == thumbnail.decodedSize)
    }

    @Test func aProgressiveJPEGCountsItsWholeCoefficientBuffer() throws {
        let progressive = try Fixtures.data("go-image/image-testdata/video-001.progressive.jpeg")
        let baseline = try Fixtures.data("go-image/image-testdata/video-001.jpeg")
        let options = DecodingOptions(targetSize: PixelSize(width: 20, height: 20))
        let p = try WorkingSetEstimate.estimate(data: progressive, options: options)
        let b = try WorkingSetEstimate.estimate(data: baseline, options: options)
        #expect(p.decodedSize == b.decodedSize)
        // 150x103 at 4:2:0: at least one coefficient (2 bytes) per luma sample.
        #expect(p.decoderWorking - b.decoderWorking >= 150 * 103 * 2)
    }

    @Test func aPNGShrinksWhileDecodingAndAnAnimationHoldsEveryFrame() throws {
        let png = try ImageCodecRegistry.shared.encode(image(width: 800, height: 800), as: .png)
        let shrunk = try WorkingSetEstimate.estimate(data: png, options: DecodingOptions(targetSize: PixelSize(width: 100, height: 100)))
        let decoded = try ImageCodecRegistry.shared.decode(png, options: DecodingOptions(targetSize: PixelSize(width: 100, height: 100)))
        #expect(shrunk.decodedSize == decoded.pixelSize)
        let frame = image(width: 64, height: 48)
        let animation = AlcedoImage(width: 64, height: 48, frames: Array(repeating: .init(pixels: frame.pixels, duration: 0.1), count: 5))
        let gif = try ImageCodecRegistry.shared.encode(animation, as: .gif)
        let all = try WorkingSetEstimate.estimate(data: gif, options: DecodingOptions())
        let first = try WorkingSetEstimate.estimate(data: gif, options: DecodingOptions(firstFrameOnly: true))
        #expect(all.framesHeld == 5 && first.framesHeld == 1)
        #expect(all.decoded == 5 * 64 * 48 * 4)
    }

    @Test func anAVIFCountsItsPlanesAtTheHeadersDepthAndChromaLayout() throws {
        // Quality 90 and up writes 4:4:4, below it 4:2:0; both 8-bit, opaque.
        let picture = AVIFEncoderTests.pattern(width: 320, height: 240)
        let full = try AVIFEncoder().encode(picture, options: EncodingOptions(quality: 95))
        let subsampled = try AVIFEncoder().encode(picture, options: EncodingOptions(quality: 60))
        let fullInfo = try AVIFDecoder().info(for: full)
        let subsampledInfo = try AVIFDecoder().info(for: subsampled)
        #expect(fullInfo.bitDepth == 8 && fullInfo.colorModel == "yuv444" && !fullInfo.hasAlpha)
        #expect(subsampledInfo.bitDepth == 8 && subsampledInfo.colorModel == "yuv420")
        let pixels = 320 * 240
        let a = try WorkingSetEstimate.estimate(data: full, options: DecodingOptions())
        let b = try WorkingSetEstimate.estimate(data: subsampled, options: DecodingOptions())
        // 3 and 1.5 bytes a pixel of planes, a quarter more for the decoder's context.
        #expect(a.decoderWorking == pixels * 3 + pixels * 3 / 4)
        #expect(b.decoderWorking == pixels * 3 / 2 + pixels * 3 / 2 / 4)
        #expect(a.decoded == pixels * 4 && b.decoded == pixels * 4)
        // A header that says neither is costed at 8 bytes a pixel, as before.
        var unknown = fullInfo
        unknown.colorModel = nil
        #expect(WorkingSetEstimate.estimate(info: unknown, options: DecodingOptions()).decoderWorking == pixels * 8)
        var deep = fullInfo
        deep.bitDepth = 10
        deep.hasAlpha = true
        #expect(WorkingSetEstimate.estimate(info: deep, options: DecodingOptions()).decoderWorking == pixels * 8 + pixels * 8 / 4)
        // The decoder's planes are gone before the resize starts: the peak counts the larger of
        // the two, not both.
        let resized = try WorkingSetEstimate.estimate(data: full, options: DecodingOptions(targetSize: PixelSize(width: 100, height: 100)))
        #expect(resized.total == resized.sourceBytes + resized.decoded
            + max(resized.decoderWorking, resized.processing + resized.encoding))
        #expect(resized.total < resized.sourceBytes + resized.decoded + resized.decoderWorking + resized.processing + resized.encoding)
    }

    @Test func theOutputFollowsTheContentMode() {
        let full = PixelSize(width: 4000, height: 3000)
        // A width alone (the other side unbounded) fits by the width.
        #expect(WorkingSetEstimate.outputSize(of: full, target: PixelSize(width: 400, height: 1 << 20), mode: .aspectFit)
            == PixelSize(width: 400, height: 300))
        // A fill covers the target and is cropped to it.
        #expect(WorkingSetEstimate.outputSize(of: full, target: PixelSize(width: 300, height: 300), mode: .aspectFill)
            == PixelSize(width: 300, height: 300))
        // A target larger than the image does not enlarge it.
        #expect(WorkingSetEstimate.outputSize(of: full, target: PixelSize(width: 8000, height: 8000), mode: .aspectFit) == full)
        // A fill covers the target and is cropped to it, without enlarging: 4000x100.
        #expect(WorkingSetEstimate.outputSize(of: full, target: PixelSize(width: 8000, height: 100), mode: .aspectFill)
            == PixelSize(width: 4000, height: 100))
    }

    /// Every processor's result size is known before decoding (``ImageProcessor/outputSize(for:)``),
    /// and the estimate sizes the processing and the encoding by it through the decoding
    /// options' hint: enlarged only by a processor that enlarges.
    @Test func everyProcessorIsEstimatedByWhatItMakes() throws {
        let source = image(width: 480, height: 360)
        let large = PixelSize(width: 1300, height: 1300)
        let processors: [any ImageProcessor] = [
            DefaultImageProcessor.default,
            DownsamplingImageProcessor(size: large),
            DownsamplingImageProcessor(size: PixelSize(width: 200, height: 200)),
            ResizingImageProcessor(referenceSize: large),
            ResizingImageProcessor(referenceSize: large, mode: .aspectFit),
            ResizingImageProcessor(referenceSize: PixelSize(width: 100, height: 1000), mode: .aspectFill),
            CroppingImageProcessor(size: PixelSize(width: 100, height: 500)),
            SmartCroppingImageProcessor(size: PixelSize(width: 300, height: 300)),
            RoundCornerImageProcessor(cornerRadius: 8, targetSize: PixelSize(width: 1000, height: 100)),
            RoundCornerImageProcessor(cornerRadius: 8),
            BlurImageProcessor(blurRadius: 2),
            TintImageProcessor(tint: RGBA(red: 255, green: 0, blue: 0, alpha: 128)),
            DownsamplingImageProcessor(size: large) |> CroppingImageProcessor(size: PixelSize(width: 100, height: 100)),
            ResizingImageProcessor(referenceSize: PixelSize(width: 960, height: 720)) |> BorderImageProcessor(border: 4),
        ]
        for processor in processors {
            let made = try processor.process(source).pixelSize
            #expect(processor.outputSize(for: source.pixelSize) == made, "\(processor.identifier)")
            let options = DownloadOptions(processor: processor).effectiveDecodingOptions
            #expect(options.processedSize == (processor.identifier.isEmpty ? nil : ProcessedSizeHint(processor)))
            let estimate = WorkingSetEstimate.estimate(info: ImageInfo(format: .png, width: 480, height: 360), options: options)
            #expect(estimate.outputSize == made, "\(processor.identifier)")
        }
    }

    /// The resampler streams (boxed rows made and filtered as its bands need them): a resize
    /// is costed at its result and the resampler's rows, not at a whole intermediate picture;
    /// a processor's own copies (``ImageProcessor/intermediateBytes(for:)``) add, and a chain
    /// holds the first one's result while the second one runs.
    @Test func aResizeCostsItsResultAndTheResamplersRowsAndAProcessorsCopiesAdd() {
        let info = ImageInfo(format: .png, width: 4000, height: 3000)
        let target = PixelSize(width: 1300, height: 1300)
        let options = DownloadOptions(processor: ResizingImageProcessor(referenceSize: target, mode: .aspectFit)).effectiveDecodingOptions
        let estimate = WorkingSetEstimate.estimate(info: info, options: options)
        let output = PixelSize(width: 1300, height: 975)
        #expect(estimate.outputSize == output)
        #expect(estimate.processing == 1300 * 975 * 4 + ResamplerPlan.workingMemory(from: PixelSize(width: 4000, height: 3000), to: output))
        struct Copying: ImageProcessor {
            var identifier: String { "copying" }
            func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage { image }
            func intermediateBytes(for size: PixelSize) -> Int { size.width * size.height * 4 }
        }
        let copying = WorkingSetEstimate.estimate(
            info: info, options: DownloadOptions(processor: Copying() |> ResizingImageProcessor(referenceSize: target, mode: .aspectFit))
                .effectiveDecodingOptions)
        // The chain: the copy of the first step, or its result (the full size) held while the resize runs.
        #expect(copying.processing == estimate.processing + 4000 * 3000 * 4)
    }

    /// The soak's animation (12 frames of 480x360) asked at 1300 px: a fit that never enlarges
    /// is costed at its own size, a resize that enlarges at the enlarged one.
    @Test func aFitIsNotCostedAsAnEnlargement() {
        let info = ImageInfo(format: .webp, width: 480, height: 360, frameCount: 12)
        let large = PixelSize(width: 1300, height: 1300)
        let fit = WorkingSetEstimate.estimate(
            info: info, options: DownloadOptions(processor: DownsamplingImageProcessor(size: large)).effectiveDecodingOptions, outputFormat: .webp)
        let enlarging = WorkingSetEstimate.estimate(
            info: info, options: DownloadOptions(processor: ResizingImageProcessor(referenceSize: large, mode: .aspectFit)).effectiveDecodingOptions,
            outputFormat: .webp)
        #expect(fit.outputSize == PixelSize(width: 480, height: 360))
        #expect(enlarging.outputSize == PixelSize(width: 1300, height: 975))
        #expect(fit.total * 4 < enlarging.total)
        // A decoding target alone (no processor's hint) is what the decoder may shrink to: never an enlargement.
        #expect(WorkingSetEstimate.estimate(info: info, options: DecodingOptions(targetSize: large)).outputSize == PixelSize(width: 480, height: 360))
    }

    @Test func aHeaderThatDoesNotReadThrowsAsTheDecodeWould() {
        #expect(throws: AlcedoError.self) { try WorkingSetEstimate.estimate(data: Data("not an image".utf8), options: DecodingOptions()) }
    }
}

@Suite("The memory budget in the pipeline and the prefetcher")
struct PipelineMemoryBudgetTests {
    @Test func aDecodeThatCanNeverFitFailsWithTheBudgetsErrorBeforeDecoding() async throws {
        try await withPipeline { h in
            h.server.route("/big.jpg", .ok(TestImages.jpeg(width: 1200, height: 900)))
            // 1200x900 RGBA is 4.3 MB decoded: a 2 MB budget can never hold it.
            let budget = MemoryBudget(capacity: 2 << 20)
            do {
                _ = try await h.manager.retrieveImage(with: h.server.url("/big.jpg"), options: [.memoryBudget(budget)])
                Issue.record("decoded beyond the budget")
            } catch {
                guard case .neverFits(_, let bytes, _, let capacity) = (error as? AlcedoError)?.memoryBudgetReason else { Issue.record("\(error)"); return }
                #expect(bytes > 1200 * 900 * 4 && capacity == 2 << 20)
            }
            #expect(budget.snapshot.reserved == 0 && budget.snapshot.running == 0)
            // With a thumbnail target the DCT-scaled decode fits the same budget.
            let thumbnail = DownsamplingImageProcessor(size: PixelSize(width: 150, height: 112))
            let result = try await h.manager.retrieveImage(with: h.server.url("/big.jpg"),
                                                           options: [.memoryBudget(budget), .processor(thumbnail), .forceRefresh])
            #expect(result.image.width <= 150)
            #expect(budget.snapshot.reserved == 0 && budget.snapshot.grantedTotal == 1)
        }
    }

    @Test func aPrefetchOfBigImagesRunsAsManyAsTheBudgetHolds() async throws {
        try await withPipeline { h in
            let names = (0..<6).map { "/photo\($0).jpg" }
            for (index, name) in names.enumerated() { h.server.route(name, .ok(TestImages.jpeg(width: 800, height: 600, seed: index))) }
            let one = try WorkingSetEstimate.estimate(data: TestImages.jpeg(width: 800, height: 600), options: DecodingOptions()).total
            // Room for one decode at a time, though six downloads run at once.
            let budget = MemoryBudget(capacity: one + one / 2)
            let prefetcher = ImagePrefetcher(urls: names.map { h.server.url($0) }, options: [.memoryBudget(budget)], manager: h.manager)
            prefetcher.maxConcurrentDownloads = 6
            let result = await prefetcher.prefetch()
            #expect(result.completed.count == 6 && result.failures.isEmpty, "\(result.failures)")
            let snapshot = budget.snapshot
            #expect(snapshot.grantedTotal == 6 && snapshot.reserved == 0 && snapshot.running == 0)
        }
    }
}

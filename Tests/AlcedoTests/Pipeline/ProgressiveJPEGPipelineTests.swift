import Foundation
import Synchronization
import Testing
@testable import Alcedo

/// `.progressiveJPEG` end to end: a real server sends a progressive JPEG piece by piece (each
/// piece completing one more scan, the next sent only when the test says so), and the
/// previews arrive on the task's stream and at a bound target before the final image.
@Suite("Progressive JPEG previews through the pipeline")
struct ProgressiveJPEGPipelineTests {
    private static let sample = ProgressiveSample.make()
    private static let sharp = ImageProgressive(isBlur: false, isFastestScan: false, scanInterval: 0)

    private func start(_ h: PipelineHarness, _ path: String, options: AlcedoOptionsInfo? = nil) -> ProgressiveFlight {
        h.startProgressive(path, options: options)
    }

    private func routePaced(_ h: PipelineHarness, _ path: String) -> PieceGate {
        h.routePaced(path, Self.sample)
    }

    @Test("each scan's preview arrives in order, then the final image, which alone is cached")
    func previewsInOrderThenFinal() async throws {
        let sample = Self.sample
        try await withPipeline { h in
            let gate = routePaced(h, "/p.jpg")
            // The disk write is waited for, so that the disk is checked below without a race.
            let flight = start(h, "/p.jpg", options: [.progressiveJPEG(Self.sharp), .waitForCache])
            for index in 1..<sample.scanCount {
                #expect(await eventually { flight.previews.values.count == index }, "preview \(index)")
                #expect(flight.results.values.isEmpty)
                gate.open(index)
            }
            let result = try #require(try? await flight.finish()?.get())
            let plain = try JPEGDecoder().decode(sample.data)
            #expect(result.image == plain)
            let shown = flight.previews.values
            #expect(shown.count == sample.scanCount - 1)
            for (index, preview) in shown.enumerated() {
                #expect(preview.pixelSize == plain.pixelSize)
                #expect(preview == (try? sample.referenceDecode(throughScan: index + 1)), "scan \(index + 1)")
            }
            // The caches hold the final image and the original bytes only.
            let url = h.server.url("/p.jpg")
            let again = try await h.manager.retrieveImage(with: url)
            #expect(again.cacheType == .memory)
            #expect(again.image == plain)
            h.cache.clearMemoryCache()
            let fromDisk = try await h.manager.retrieveImage(with: url)
            #expect(fromDisk.cacheType == .disk)
            #expect(fromDisk.image == plain)
            #expect(h.server.requestCount("/p.jpg") == 1)
        }
    }

    @Test("Kingfisher's defaults (blur, fastest scan) with a processor: previews of the final size")
    func defaultsWithProcessor() async throws {
        let sample = Self.sample
        try await withPipeline { h in
            let gate = routePaced(h, "/d.jpg")
            let processor = DownsamplingImageProcessor(size: PixelSize(width: 30, height: 20))
            let flight = start(h, "/d.jpg", options: [.progressiveJPEG(.default), .processor(processor)])
            #expect(await eventually { flight.previews.values.count == 1 })
            gate.openAll()
            let final = try #require(try? await flight.finish()?.get()).image
            #expect(final.pixelSize == PixelSize(width: 30, height: 20))
            #expect(flight.previews.values.allSatisfy { $0.pixelSize == final.pixelSize })
            // The first preview is blurred: it differs from the processed partial decode.
            var options = DecodingOptions.default
            options.targetSize = processor.decodingTarget?.size
            let unblurred = try processor.process(sample.referenceDecode(throughScan: 1, options: options))
            #expect(flight.previews.values.first != unblurred)
        }
    }

    @Test("a baseline JPEG and a WebP deliver no previews")
    func noPreviewsForOtherFiles() async throws {
        try await withPipeline { h in
            let files = [("/b.jpg", ProgressiveSample.make(progressive: false).data), ("/w.webp", TestImages.webp(width: 64, height: 48))]
            for (path, data) in files {
                h.server.route(path, TestHTTPServer.Response.ok(data).chunked(300, every: .milliseconds(1)))
                let flight = start(h, path, options: [.progressiveJPEG(Self.sharp)])
                #expect((try? await flight.finish()?.get()) != nil, "\(path)")
                #expect(flight.previews.values.isEmpty, "\(path)")
            }
        }
    }

    @Test("without the option the task's stream ends at once, empty")
    func noOptionNoPreviews() async throws {
        try await withPipeline { h in
            h.server.route("/n.jpg", TestHTTPServer.Response.ok(Self.sample.data).chunked(200, every: .milliseconds(1)))
            let flight = start(h, "/n.jpg")
            #expect((try? await flight.finish()?.get()) != nil)
            #expect(flight.previews.values.isEmpty)
        }
    }

    @Test("cancelling mid-stream ends the previews: none after the cancel")
    func cancellation() async throws {
        try await withPipeline { h in
            let gate = routePaced(h, "/c.jpg")
            let flight = start(h, "/c.jpg", options: [.progressiveJPEG(Self.sharp)])
            #expect(await eventually { flight.previews.values.count == 1 })
            flight.task.cancel()
            gate.openAll()
            #expect(await flight.finish()?.failureValue?.isCancellation == true)
            #expect(flight.previews.values.count == 1)
        }
    }

    @Test("scanInterval counts: an hour's interval gives exactly one preview")
    func scanIntervalGivesOnePreview() async throws {
        let sample = Self.sample
        try await withPipeline { h in
            let gate = routePaced(h, "/i.jpg")
            let hourly = ImageProgressive(isBlur: false, isFastestScan: false, scanInterval: 3600)
            let flight = start(h, "/i.jpg", options: [.progressiveJPEG(hourly)])
            #expect(await eventually { flight.previews.values.count == 1 })
            for index in 1..<sample.scanCount { gate.open(index) }
            #expect((try? await flight.finish()?.get()) != nil)
            #expect(flight.previews.values.count == 1)
            #expect(flight.previews.values.first == (try? sample.referenceDecode(throughScan: 1)))
        }
    }

    @Test("a bound target shows the placeholder, each preview, then the final image")
    func bindingShowsPreviewsThenFinal() async throws {
        let sample = Self.sample
        try await withPipeline { h in
            let gate = routePaced(h, "/t.jpg")
            let placeholder = TestImages.image(width: 2, height: 2, seed: 3)
            let target = RecordingTarget()
            let results = Collected<Result<RetrieveImageResult, AlcedoError>>()
            target.setImage(with: h.server.url("/t.jpg"), placeholder: placeholder, options: [.progressiveJPEG(Self.sharp)],
                            manager: h.manager) { results.append($0) }
            for index in 1..<sample.scanCount {
                #expect(await eventually { target.history.count == 1 + index }, "preview \(index)")
                gate.open(index)
            }
            #expect(await eventually { results.values.count == 1 })
            let history = target.history
            let plain = try JPEGDecoder().decode(sample.data)
            #expect(history.count == sample.scanCount + 1)
            #expect(history.first == placeholder)
            #expect(history.last == plain)
            for index in 1..<sample.scanCount {
                #expect(history[index] == (try? sample.referenceDecode(throughScan: index)), "preview \(index)")
            }
        }
    }

    @Test("the KF builder's progressiveJPEG() turns previews on for its target")
    func builder() async throws {
        try await withPipeline { h in
            let gate = routePaced(h, "/k.jpg")
            let target = RecordingTarget()
            let results = Collected<Result<RetrieveImageResult, AlcedoError>>()
            KF.url(h.server.url("/k.jpg")).progressiveJPEG().manager(h.manager)
                .onSuccess { results.append(.success($0)) }.onFailure { results.append(.failure($0)) }
                .set(to: target)
            #expect(await eventually { target.history.count == 2 })  // nothing (no placeholder), then a preview
            gate.openAll()
            #expect(await eventually { results.values.count == 1 })
            #expect(target.history.last == (try? JPEGDecoder().decode(Self.sample.data)))
            #expect(target.history[1]?.pixelSize == PixelSize(width: 96, height: 64))
        }
    }

    @Test("previews obey the decoding limits; a body cut mid-stream fails cleanly")
    func hostile() async throws {
        let sample = Self.sample
        try await withPipeline { h in
            h.server.route("/l.jpg", TestHTTPServer.Response.ok(sample.data).chunked(100, every: .milliseconds(1)))
            let limited = start(h, "/l.jpg", options: [.progressiveJPEG(Self.sharp),
                                                       .decodingLimits(DecodingLimits(maxPixelCount: 1000))])
            let outcome = await limited.finish()
            #expect(limited.previews.values.isEmpty)
            guard case .failure(let error) = outcome, case .decodingFailed(.tooManyPixels)? = error.processorCause else {
                Issue.record("expected tooManyPixels, got \(String(describing: outcome))")
                return
            }

            var cut = TestHTTPServer.Response.ok(sample.data).chunked(100, every: .milliseconds(1))
            cut.closeAfter = sample.scanStarts[3] + 10
            h.server.route("/cut.jpg", cut)
            let partial = start(h, "/cut.jpg", options: [.progressiveJPEG(Self.sharp)])
            #expect(await partial.finish()?.failureValue != nil)
            #expect(partial.previews.values.allSatisfy { $0.pixelSize == PixelSize(width: 96, height: 64) })
        }
    }
}

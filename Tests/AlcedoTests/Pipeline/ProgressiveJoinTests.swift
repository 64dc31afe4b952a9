import Foundation
import Synchronization
import Testing
@testable import Alcedo

/// Progressive previews for a caller that joins a download already under way, and through
/// the `async` form's preview handler. A real server sends a progressive JPEG one scan at a
/// time, the next piece only when the test opens it.
@Suite("Progressive JPEG previews: joining callers and the async form")
struct ProgressiveJoinTests {
    private static let sample = ProgressiveSample.make()
    private static let sharp = ImageProgressive(isBlur: false, isFastestScan: false, scanInterval: 0)

    private func routePaced(_ h: PipelineHarness, _ path: String) -> PieceGate {
        h.routePaced(path, Self.sample)
    }

    /// Routes `path`, starts a first request and, once it has shown its first preview, a
    /// joiner with `joinerOptions` (default: the same options), waiting until it has joined.
    private func startWithJoiner(_ h: PipelineHarness, _ path: String, joinerOptions: AlcedoOptionsInfo? = nil,
                                 joined: () -> Bool) async
        -> (gate: PieceGate, first: ProgressiveFlight, joiner: ProgressiveFlight) {
        let gate = routePaced(h, path)
        let options: AlcedoOptionsInfo = [.progressiveJPEG(Self.sharp)]
        let first = h.startProgressive(path, options: options)
        #expect(await eventually { first.previews.values.count == 1 })
        let joiner = h.startProgressive(path, options: joinerOptions ?? options)
        #expect(await eventually(joined))
        return (gate, first, joiner)
    }

    /// Lets the scans go one at a time, each once `previews()` counts the one before.
    private func openScanByScan(_ gate: PieceGate, previews: () -> Int) async {
        for index in 1..<Self.sample.scanCount {
            #expect(await eventually { previews() == index }, "preview \(index)")
            gate.open(index)
        }
    }

    /// The previews a caller present from the start gets: one per scan but the last.
    private static func referencePreviews() throws -> [AlcedoImage] {
        try (1..<sample.scanCount).map { try sample.referenceDecode(throughScan: $0) }
    }

    @Test("a caller joining after the first preview gets the previews from the bytes so far on, in order")
    func joinerGetsPreviews() async throws {
        let sample = Self.sample
        try await withPipeline { h in
            // Same URL and options: one pipeline run, one download, two callers.
            let (gate, first, joiner) = await startWithJoiner(h, "/j.jpg") { h.manager.pipelines.totalCallerCount == 2 }
            #expect(h.manager.pipelines.inFlightCount == 1)
            // The body so far (the first scan) gives the joiner its first preview at once.
            #expect(await eventually { joiner.previews.values.count == 1 })
            for index in 1..<sample.scanCount {
                #expect(await eventually {
                    first.previews.values.count == index && joiner.previews.values.count == index
                }, "preview \(index)")
                gate.open(index)
            }
            let final = try #require(try? await joiner.finish()?.get()).image
            let plain = try JPEGDecoder().decode(sample.data)
            #expect(final == plain)
            #expect((try? await first.finish()?.get())?.image == plain)
            let reference = try Self.referencePreviews()
            #expect(first.previews.values == reference)
            #expect(joiner.previews.values == reference)
            #expect(joiner.previews.values.allSatisfy { $0.pixelSize == plain.pixelSize })
            #expect(h.server.requestCount("/j.jpg") == 1)
        }
    }

    @Test("a joiner's progress block starts with the bytes so far and rises to the body length")
    func joinerProgress() async throws {
        let sample = Self.sample
        try await withPipeline { h in
            let (gate, first, joiner) = await startWithJoiner(h, "/q.jpg") { h.manager.pipelines.totalCallerCount == 2 }
            #expect(await eventually { !joiner.progress.values.isEmpty })
            #expect(joiner.progress.values.first.map { [$0.0, $0.1] } == [Int64(sample.scanStarts[0]), Int64(sample.data.count)])
            gate.openAll()
            #expect((try? await joiner.finish()?.get()) != nil)
            let received = joiner.progress.values.map(\.0)
            #expect(zip(received, received.dropFirst()).allSatisfy { $0 < $1 })
            #expect(received.last == Int64(sample.data.count))
            #expect(joiner.progress.values.allSatisfy { $0.1 == Int64(sample.data.count) })
            #expect(first.progress.values.map(\.0).last == Int64(sample.data.count))
        }
    }

    @Test("a caller with another processor joins the download itself and gets previews of its size")
    func joinerWithOtherProcessor() async throws {
        let sample = Self.sample
        try await withPipeline { h in
            let size = PixelSize(width: 48, height: 32)
            // Two pipeline runs, one download.
            let (gate, first, joiner) = await startWithJoiner(
                h, "/o.jpg", joinerOptions: [.progressiveJPEG(Self.sharp), .processor(DownsamplingImageProcessor(size: size))]
            ) { h.manager.pipelines.inFlightCount == 2 && h.downloader.dataFetches.totalCallerCount == 2 }
            await openScanByScan(gate) { joiner.previews.values.count }
            let final = try #require(try? await joiner.finish()?.get()).image
            #expect(final.pixelSize == size)
            #expect(joiner.previews.values.count == sample.scanCount - 1)
            #expect(joiner.previews.values.allSatisfy { $0.pixelSize == size })
            #expect(first.previews.values == (try Self.referencePreviews()))
            #expect(h.server.requestCount("/o.jpg") == 1)
        }
    }

    // MARK: The async form

    @Test("the async form calls its preview handler with each preview, in order, before it returns")
    func asyncFormDeliversPreviews() async throws {
        let sample = Self.sample
        try await withPipeline { h in
            let gate = routePaced(h, "/a.jpg")
            let previews = Collected<AlcedoImage>()
            let returned = Mutex(false)
            let late = Mutex(0)
            let request = Task {
                let result = try await h.manager.retrieveImage(with: h.server.url("/a.jpg"),
                                                               options: [.progressiveJPEG(Self.sharp)],
                                                               previewHandler: { image in
                                                                   if returned.withLock({ $0 }) { late.withLock { $0 += 1 } }
                                                                   previews.append(image)
                                                               })
                returned.withLock { $0 = true }
                return result
            }
            await openScanByScan(gate) { previews.values.count }
            let result = try await request.value
            #expect(result.image == (try JPEGDecoder().decode(sample.data)))
            #expect(previews.values == (try Self.referencePreviews()))
            #expect(late.withLock { $0 } == 0)
            // The resource form, labelled, on a cache hit: no download, no preview.
            let again = try await h.manager.retrieveImage(with: h.server.url("/a.jpg") as any Resource,
                                                          options: [.progressiveJPEG(Self.sharp)],
                                                          previewHandler: { previews.append($0) })
            #expect(again.cacheType == .memory)
            #expect(previews.values.count == sample.scanCount - 1)
        }
    }

    @Test("the async form gives no previews for a baseline JPEG, nor without the option")
    func asyncFormBaseline() async throws {
        try await withPipeline { h in
            let baseline = ProgressiveSample.make(progressive: false).data
            h.server.route("/b.jpg", TestHTTPServer.Response.ok(baseline).chunked(300, every: .milliseconds(1)))
            h.server.route("/n.jpg", TestHTTPServer.Response.ok(Self.sample.data).chunked(200, every: .milliseconds(1)))
            let previews = Collected<AlcedoImage>()
            let first = try await h.manager.retrieveImage(with: h.server.url("/b.jpg"), options: [.progressiveJPEG(Self.sharp)],
                                                          previewHandler: { previews.append($0) })
            #expect(first.image.pixelSize == PixelSize(width: 96, height: 64))
            let second = try await h.manager.retrieveImage(with: h.server.url("/n.jpg"), previewHandler: { previews.append($0) })
            #expect(second.image.pixelSize == PixelSize(width: 96, height: 64))
            #expect(previews.values.isEmpty)
        }
    }

    @Test("cancelling the calling task stops the async form's previews")
    func asyncFormCancellation() async throws {
        try await withPipeline { h in
            let gate = routePaced(h, "/c.jpg")
            let previews = Collected<AlcedoImage>()
            let request = Task {
                try await h.manager.retrieveImage(with: h.server.url("/c.jpg"), options: [.progressiveJPEG(Self.sharp)],
                                                  previewHandler: { previews.append($0) })
            }
            #expect(await eventually { previews.values.count == 1 })
            request.cancel()
            let outcome = await request.result
            // Nothing comes once the function has thrown, even with the rest of the body sent.
            gate.openAll()
            #expect((outcome.failureValue as? AlcedoError)?.isCancellation == true)
            #expect(await eventually { h.manager.pipelines.inFlightCount == 0 })
            #expect(previews.values.count == 1)
        }
    }

    @Test("KF.Builder.retrieve() passes previews to its onPreview handlers")
    func builderRetrieve() async throws {
        let sample = Self.sample
        try await withPipeline { h in
            let gate = routePaced(h, "/k.jpg")
            let previews = Collected<AlcedoImage>()
            let also = Collected<Int>()
            let request = Task {
                try await KF.url(h.server.url("/k.jpg")).progressiveJPEG(Self.sharp).manager(h.manager)
                    .onPreview { previews.append($0) }
                    .onPreview { also.append($0.pixelSize.width) }
                    .onPreview(nil)
                    .retrieve()
            }
            await openScanByScan(gate) { previews.values.count }
            let result = try await request.value
            #expect(result.image == (try JPEGDecoder().decode(sample.data)))
            #expect(previews.values == (try Self.referencePreviews()))
            #expect(also.values == Array(repeating: 96, count: sample.scanCount - 1))
        }
    }

    @Test("KF.Builder.set(to:) gives its onPreview handlers each preview the target showed")
    func builderSet() async throws {
        let sample = Self.sample
        try await withPipeline { h in
            let gate = routePaced(h, "/s.jpg")
            let target = RecordingTarget()
            let previews = Collected<AlcedoImage>()
            let shownBefore = Collected<Bool>()
            let results = Collected<Result<RetrieveImageResult, AlcedoError>>()
            KF.url(h.server.url("/s.jpg")).progressiveJPEG(Self.sharp).manager(h.manager)
                .onPreview { image in
                    shownBefore.append(target.current == image)
                    previews.append(image)
                }
                .onSuccess { results.append(.success($0)) }.onFailure { results.append(.failure($0)) }
                .set(to: target)
            await openScanByScan(gate) { previews.values.count }
            #expect(await eventually { results.values.count == 1 })
            let reference = try Self.referencePreviews()
            let plain = try JPEGDecoder().decode(sample.data)
            #expect(previews.values == reference)
            #expect(shownBefore.values.allSatisfy { $0 })
            #expect(target.current == plain)
        }
    }
}

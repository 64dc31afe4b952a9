import Foundation
import Synchronization
import Testing
@testable import Alcedo

/// A target that records every image it is asked to show.
final class RecordingTarget: ImageDisplaying {
    let imageBinding = ImageBinding()
    private let shown = Mutex<[AlcedoImage?]>([])
    private let overlapping = Mutex((inside: 0, maximum: 0))

    func display(_ image: AlcedoImage?) {
        overlapping.withLock { $0.inside += 1; $0.maximum = max($0.maximum, $0.inside) }
        shown.withLock { $0.append(image) }
        overlapping.withLock { $0.inside -= 1 }
    }

    var history: [AlcedoImage?] { shown.withLock { $0 } }
    var current: AlcedoImage? { shown.withLock { $0.last ?? nil } }
    var maximumConcurrentDisplays: Int { overlapping.withLock { $0.maximum } }
}

@Suite("Image binding")
struct ImageBindingTests {
    private let placeholder = TestImages.image(width: 2, height: 2, seed: 7)
    private let failureImage = TestImages.image(width: 3, height: 3, seed: 9)

    @Test func showsThePlaceholderThenTheImage() async throws {
        try await withPipeline { h in
            h.server.route("/a.jpg", .ok(TestImages.jpeg(width: 10, height: 10)))
            h.server.hold("/a.jpg")
            let target = RecordingTarget()
            let results = Collected<Result<RetrieveImageResult, AlcedoError>>()
            let task = target.setImage(with: h.server.url("/a.jpg"), placeholder: placeholder, manager: h.manager) { results.append($0) }
            #expect(task != nil)
            #expect(target.current == placeholder)
            #expect(target.imageBinding.currentSource?.cacheKey == h.server.url("/a.jpg").cacheKey)
            h.server.release("/a.jpg")
            #expect(await eventually { results.values.count == 1 })
            #expect(target.current?.pixelSize == PixelSize(width: 10, height: 10))
            #expect(target.history.count == 2)
        }
    }

    @Test func memoryHitIsShownAtOnceWithoutPlaceholder() async throws {
        try await withPipeline { h in
            h.server.route("/m.jpg", .ok(TestImages.jpeg()))
            let url = h.server.url("/m.jpg")
            _ = try await h.manager.retrieveImage(with: url)
            let target = RecordingTarget()
            let results = Collected<Result<RetrieveImageResult, AlcedoError>>()
            let task = target.setImage(with: url, placeholder: placeholder, manager: h.manager) { results.append($0) }
            #expect(task == nil)
            #expect(target.history.count == 1)
            #expect(target.current?.pixelSize == PixelSize(width: 16, height: 12))
            #expect((try? results.values.first?.get())?.cacheType == .memory)
        }
    }

    @Test func failureShowsTheFailureImage() async throws {
        try await withPipeline { h in
            h.server.route("/404.jpg", .status(404))
            let target = RecordingTarget()
            let results = Collected<Result<RetrieveImageResult, AlcedoError>>()
            target.setImage(with: h.server.url("/404.jpg"), placeholder: placeholder,
                            options: [.onFailureImage(failureImage)], manager: h.manager) { results.append($0) }
            #expect(await eventually { results.values.count == 1 })
            #expect(target.current == failureImage)
            guard case .failure(.responseError(.invalidHTTPStatusCode(let response))) = results.values.first, response.statusCode == 404 else {
                Issue.record("unexpected \(String(describing: results.values.first))")
                return
            }
        }
    }

    @Test func keepCurrentImageWhileLoading() async throws {
        try await withPipeline { h in
            h.server.route("/1.jpg", .ok(TestImages.jpeg(width: 4, height: 4)))
            h.server.route("/2.jpg", .ok(TestImages.jpeg(width: 5, height: 5)))
            let target = RecordingTarget()
            let done = Counter()
            target.setImage(with: h.server.url("/1.jpg"), manager: h.manager) { _ in done.increment() }
            #expect(await eventually { done.count == 1 })
            h.server.hold("/2.jpg")
            target.setImage(with: h.server.url("/2.jpg"), placeholder: placeholder, options: [.keepCurrentImageWhileLoading],
                            manager: h.manager) { _ in done.increment() }
            #expect(target.current?.pixelSize == PixelSize(width: 4, height: 4))
            h.server.release("/2.jpg")
            #expect(await eventually { done.count == 2 })
            #expect(target.current?.pixelSize == PixelSize(width: 5, height: 5))
            #expect(!target.history.contains { $0 == placeholder })
        }
    }

    @Test func latestRequestWinsAndThePreviousRunsToItsEnd() async throws {
        try await withPipeline { h in
            h.server.route("/old.jpg", .ok(TestImages.jpeg(width: 6, height: 6)))
            h.server.route("/new.jpg", .ok(TestImages.jpeg(width: 7, height: 7)))
            h.server.hold("/old.jpg")
            let target = RecordingTarget()
            let oldResults = Collected<Result<RetrieveImageResult, AlcedoError>>()
            let newResults = Collected<Result<RetrieveImageResult, AlcedoError>>()
            target.setImage(with: h.server.url("/old.jpg"), manager: h.manager) { oldResults.append($0) }
            #expect(await eventually { h.server.requestCount("/old.jpg") == 1 })
            target.setImage(with: h.server.url("/new.jpg"), manager: h.manager) { newResults.append($0) }
            #expect(await eventually { newResults.values.count == 1 })
            #expect(target.current?.pixelSize == PixelSize(width: 7, height: 7))
            // The superseded download goes on (as in Kingfisher): released, it ends and is cached.
            #expect(oldResults.values.isEmpty)
            h.server.release("/old.jpg")
            #expect(await eventually { oldResults.values.count == 1 })
            guard case .failure(let error) = oldResults.values.first,
                  case .notCurrentSourceTask(let result, let underlying, let source) = error.settingReason else {
                Issue.record("unexpected \(String(describing: oldResults.values.first))")
                return
            }
            #expect(result?.image.pixelSize == PixelSize(width: 6, height: 6))
            #expect(underlying == nil)
            #expect(source.url?.path == "/old.jpg")
            #expect(target.current?.pixelSize == PixelSize(width: 7, height: 7))
            #expect(h.server.abortedCount("/old.jpg") == 0)
            #expect(h.cache.isCached(forKey: h.server.url("/old.jpg").cacheKey))
        }
    }

    @Test func resultOfASupersededRequestIsNeverShownEvenWhenItSucceeded() {
        let target = RecordingTarget()
        let binding = target.imageBinding
        let old = binding.begin(URL(string: "http://127.0.0.1/old.jpg")!.convertToSource(), showing: nil, on: target)
        let new = binding.begin(URL(string: "http://127.0.0.1/new.jpg")!.convertToSource(), showing: .some(placeholder), on: target)
        #expect(!binding.isCurrent(old))
        #expect(binding.finish(old, showing: .some(failureImage), on: target) == false)
        #expect(target.current == placeholder)
        #expect(binding.finish(new, showing: .some(failureImage), on: target))
        #expect(target.current == failureImage)
        #expect(binding.currentSource?.url?.path == "/new.jpg")
    }

    @Test func nilSourceShowsThePlaceholderAndFails() async throws {
        let target = RecordingTarget()
        let results = Collected<Result<RetrieveImageResult, AlcedoError>>()
        let task = target.setImage(with: nil as URL?, placeholder: placeholder) { results.append($0) }
        #expect(task == nil)
        #expect(target.current == placeholder)
        #expect(target.imageBinding.currentSource == nil)
        guard case .failure(let error) = results.values.first, case .emptySource = error.settingReason else {
            Issue.record("unexpected \(String(describing: results.values.first))")
            return
        }
    }

    @Test func cancellingKeepsWhatIsShown() async throws {
        try await withPipeline { h in
            h.server.route("/c.jpg", .ok(TestImages.jpeg()))
            h.server.hold("/c.jpg")
            let target = RecordingTarget()
            let results = Collected<Result<RetrieveImageResult, AlcedoError>>()
            target.setImage(with: h.server.url("/c.jpg"), placeholder: placeholder, options: [.onFailureImage(failureImage)],
                            manager: h.manager) { results.append($0) }
            #expect(await eventually { h.server.requestCount("/c.jpg") == 1 })
            target.cancelImageDownloadTask()
            #expect(await eventually { results.values.count == 1 })
            #expect((results.values.first?.failureValue)?.isCancellation == true)
            #expect(target.current == placeholder)
            h.server.release("/c.jpg")
        }
    }

    @Test func rapidReassignmentShowsOnlyTheLast() async throws {
        try await withPipeline { h in
            for index in 0..<20 { h.server.route("/r\(index).jpg", .ok(TestImages.jpeg(width: 4 + index, height: 4))) }
            let target = RecordingTarget()
            let results = Collected<Result<RetrieveImageResult, AlcedoError>>()
            for index in 0..<20 {
                target.setImage(with: h.server.url("/r\(index).jpg"), manager: h.manager) { results.append($0) }
            }
            #expect(await eventually { results.values.count == 20 })
            #expect(target.current?.pixelSize == PixelSize(width: 23, height: 4))
            #expect(results.values.filter { (try? $0.get()) != nil }.count == 1)
            #expect(target.maximumConcurrentDisplays == 1)
        }
    }

    @Test func kfBuilderChainsProcessorsAndHandlers() async throws {
        try await withPipeline { h in
            h.server.route("/kf.jpg", .ok(TestImages.jpeg(width: 40, height: 20)))
            let target = RecordingTarget()
            let successes = Collected<RetrieveImageResult>()
            let failures = Collected<AlcedoError>()
            let builder = KF.url(h.server.url("/kf.jpg"))
                .placeholder(placeholder)
                .downsampling(size: PixelSize(width: 20, height: 20))
                .roundCorner(radius: .point(3))
                .manager(h.manager)
                .waitForCache()
                .onSuccess { successes.append($0) }
                .onFailure { failures.append($0) }
            guard case .processor(let processor) = builder.allOptions.last else {
                Issue.record("the chain should end the options")
                return
            }
            #expect(processor.identifier == (DownsamplingImageProcessor(size: PixelSize(width: 20, height: 20))
                |> RoundCornerImageProcessor(radius: .point(3))).identifier)
            builder.set(to: target)
            #expect(target.current == placeholder)
            #expect(await eventually { successes.values.count == 1 })
            #expect(failures.values.isEmpty)
            #expect(target.current?.pixelSize == PixelSize(width: 20, height: 10))
            #expect(target.current?.pixel(x: 0, y: 0).alpha == 0)

            let missing = KF.url(h.server.url("/nothing.jpg")).manager(h.manager).onFailure { failures.append($0) }
            await #expect(throws: AlcedoError.self) { try await missing.retrieve() }
            #expect(failures.values.count == 1)
            await #expect(throws: AlcedoError.self) { try await KF.url(nil).retrieve() }
        }
    }
}

import Foundation
import AlcedoTestSupport
import Testing
@testable import Alcedo

@Suite("Shared cache tier")
struct SharedCacheTierTests {
    let folder: TemporaryDirectory

    init() throws {
        folder = try TemporaryDirectory()
    }

    private func makeCache(_ name: String, tier: SharedCacheTier?) -> ImageCache {
        ImageCache(memoryStorage: MemoryStorage.Backend(config: .init(totalCostLimit: 10_000_000)),
                   diskStorage: DiskStorage.EntryStore(config: .init(name: name, directory: folder.url)),
                   codecs: BMPTestCodec.registry(), sharedTier: tier)
    }

    @Test func lookupGoesMemoryDiskSharedAndWritesBackToTheTiersThatMissed() async throws {
        let storage = InProcessSharedStorage()
        let tierA = SharedCacheTier(storage: storage)
        let tierB = SharedCacheTier(storage: storage)
        let a = makeCache("a", tier: tierA)
        let b = makeCache("b", tier: tierB)
        let image = AlcedoImage.testPattern(seed: 4, format: .bmp)
        try await a.store(image, forKey: "k", processorIdentifier: "p", diskExpiration: .seconds(600))

        let entry = try #require(storage.stored("k@p"))
        #expect(entry.metadata.key == "k@p")
        #expect(entry.metadata.format == .bmp)
        #expect(abs(entry.metadata.expirationDate.timeIntervalSinceNow - 600) < 60)
        #expect(tierA.statistics.stores == 1)

        // B has neither memory nor disk: the shared tier answers, and B's disk and memory are filled.
        #expect(try await b.diskMetadata(forKey: "k", processorIdentifier: "p") == nil)
        let found = try await b.retrieveImage(forKey: "k", processorIdentifier: "p")
        #expect(found.cacheType == .disk)
        #expect(found.image?.pixels == image.pixels)
        #expect(tierB.statistics.hits == 1)
        #expect(tierB.statistics.bytesRead == entry.data.count)
        #expect(try await b.diskMetadata(forKey: "k", processorIdentifier: "p") != nil, "written back to disk")
        #expect(b.retrieveImageInMemoryCache(forKey: "k", processorIdentifier: "p") != nil, "written back to memory")

        // From now on B answers from memory, then disk, without asking the shared tier.
        let before = storage.operations
        #expect(try await b.retrieveImage(forKey: "k", processorIdentifier: "p").cacheType == .memory)
        b.clearMemoryCache()
        #expect(try await b.retrieveImage(forKey: "k", processorIdentifier: "p").cacheType == .disk)
        #expect(storage.operations == before)

        // A miss everywhere is counted as a shared miss.
        #expect(try await b.retrieveImage(forKey: "other").cacheType == .none)
        #expect(tierB.statistics.misses == 1)

        // Removal reaches the shared tier.
        try await a.removeImage(forKey: "k", processorIdentifier: "p")
        #expect(storage.stored("k@p") == nil)
    }

    @Test func retrieveStoredDataFallsBackToTheSharedTierAndWritesToDisk() async throws {
        let storage = InProcessSharedStorage()
        let a = makeCache("a", tier: SharedCacheTier(storage: storage))
        let b = makeCache("b", tier: SharedCacheTier(storage: storage))
        let bytes = Data("not an image, but bytes".utf8)
        let info = HTTPCacheInfo(etag: "\"v1\"", maxAge: 60, contentType: "image/png")
        try await a.storeSerialized(bytes, forKey: "u", httpCacheInfo: info)
        let hit = try #require(try await b.retrieveStoredData(forKey: "u"))
        #expect(hit.data == bytes)
        #expect(hit.metadata.httpCacheInfo?.etag == "\"v1\"")
        let onDisk = try #require(try await b.retrieveDataInDiskCache(forKey: "u"))
        #expect(onDisk.data == bytes)
        #expect(onDisk.metadata.httpCacheInfo == info)
        #expect(try await b.retrieveStoredData(forKey: "missing") == nil)
    }

    @Test func aFailingTierIsAMissCountedAndLoggedOncePerChangeOfState() async throws {
        let storage = InProcessSharedStorage()
        let logs = CapturedLog()
        let tier = SharedCacheTier(storage: storage, config: .init(recoveryQuietPeriod: .zero, logger: logs.logger))
        let writer = makeCache("writer", tier: SharedCacheTier(storage: storage))
        let reader = makeCache("reader", tier: tier)
        let image = AlcedoImage.testPattern(seed: 9, format: .bmp)
        try await writer.store(image, forKey: "x")

        storage.failing = true
        for _ in 0..<5 {
            let result = try await reader.retrieveImage(forKey: "x")
            #expect(result.cacheType == .none, "a failing tier is a miss, never an error")
        }
        // A store with the tier down still stores on disk and does not throw.
        try await reader.store(image, forKey: "y")
        #expect(try await reader.diskMetadata(forKey: "y") != nil)
        #expect(tier.statistics.errors == 6)
        #expect(tier.statistics.misses == 5)
        #expect(tier.isFailing)
        #expect(logs.count(.error) == 1, "logged once when the tier started failing: \(logs.messages)")

        storage.failing = false
        let healed = try await reader.retrieveImage(forKey: "x")
        #expect(healed.cacheType == .disk)
        #expect(healed.image?.pixels == image.pixels)
        #expect(!tier.isFailing)
        #expect(logs.count(.notice) == 1)
        #expect(logs.messages.last?.contains("recovered after 6") == true)

        storage.failing = true
        _ = try await reader.retrieveImage(forKey: "z")
        #expect(logs.count(.error) == 2)
    }

    @Test func coalesceTakesTheLockOrWaitsForTheEntryWithinItsBound() async throws {
        let storage = InProcessSharedStorage()
        let tier = SharedCacheTier(storage: storage, config: .init(lockWaitLimit: .milliseconds(300)))
        let cache = makeCache("c", tier: tier)

        guard case .proceed(holdsLock: true) = await cache.coalesceWork(forKey: "v") else {
            Issue.record("the first miss takes the lock")
            return
        }
        // Someone else now finds the lock taken and waits; the holder stores the entry meanwhile.
        // A bound far above any scheduling delay: this part checks the hand-over, not the bound.
        let other = makeCache("other", tier: SharedCacheTier(storage: storage, config: .init(lockWaitLimit: .seconds(600))))
        async let waited = other.coalesceWork(forKey: "v")
        // The entry is stored only once the other cache is waiting (a loaded machine may start
        // the child task late; stored earlier, it would find the entry without waiting).
        #expect(await eventually { other.sharedTier?.statistics.lockWaits == 1 }, "the other cache waits for the lock")
        try await cache.storeSerialized(Data("made once".utf8), forKey: "v")
        await cache.releaseWorkLock(forKey: "v")
        guard case .found(let entry) = await waited else {
            Issue.record("the waiter gets the holder's entry")
            return
        }
        #expect(entry.data == Data("made once".utf8))
        #expect(other.sharedTier?.statistics.lockWaits == 1)
        #expect(other.sharedTier?.statistics.lockWaitHits == 1)
        #expect(try await other.retrieveDataInDiskCache(forKey: "v") != nil, "the waited-for entry is written to disk")

        // A holder that never stores: the waiter gives up after the bound and works itself.
        guard case .proceed(holdsLock: true) = await cache.coalesceWork(forKey: "w") else {
            Issue.record("lock on w")
            return
        }
        guard case .proceed(holdsLock: false) = await cache.coalesceWork(forKey: "w") else {
            Issue.record("the waiter proceeds without the lock after the bound")
            return
        }
        #expect(tier.statistics.lockWaitTimeouts == 1)
    }
}

@Suite("Shared cache tier in the pipeline")
struct SharedCacheTierPipelineTests {
    @Test func twoManagersSharingATierDownloadAndProcessEachVariantOnce() async throws {
        try await withPipeline { h in
            let storage = InProcessSharedStorage()
            let jpeg = TestImages.jpeg(width: 40, height: 20)
            h.server.route("/s.jpg", .ok(jpeg))
            h.server.hold("/s.jpg")
            let url = h.server.url("/s.jpg")
            let runs = Counter()
            let processor = InvertingCountingProcessor(name: "s", runs: runs)
            func manager(_ name: String) -> ImageManager {
                // The wait bound is far above any scheduling delay of a loaded test run.
                let cache = ImageCache(name: name, cacheDirectoryURL: h.folder.url,
                                       sharedTier: SharedCacheTier(storage: storage, config: .init(lockWaitLimit: .seconds(600))))
                return ImageManager(downloader: h.downloader, cache: cache)
            }
            let first = manager("node1"), second = manager("node2"), late = manager("node3")

            async let a = first.retrieveImage(with: url, options: [.processor(processor)])
            while h.server.requestCount("/s.jpg") == 0 { try await Task.sleep(for: .milliseconds(2)) }
            async let b = second.retrieveImage(with: url, options: [.processor(processor)])
            // The second manager finds the first one's lock and waits for its result.
            while second.cache.sharedTier?.statistics.lockWaits != 1 { try await Task.sleep(for: .milliseconds(2)) }
            h.server.release("/s.jpg")
            let (ra, rb) = try await (a, b)
            #expect(ra.cacheType == .none)
            #expect(rb.cacheType == .disk)
            #expect(ra.image.pixelSize == rb.image.pixelSize)
            #expect(second.cache.sharedTier?.statistics.lockWaitHits == 1)

            let rc = try await late.retrieveImage(with: url, options: [.processor(processor)])
            #expect(rc.cacheType == .disk)
            #expect(rc.image == rb.image, "both decoded from the same stored variant")
            #expect(h.server.requestCount("/s.jpg") == 1, "one download among the three managers")
            #expect(runs.count == 1, "one processing run among the three managers")
        }
    }
}

import Foundation
import Testing
@testable import Alcedo

/// Kingfisher's callback and synchronous forms of the cache.
@Suite("ImageCache callback forms")
struct ImageCacheCallbackTests {
    static func makeCache() throws -> (ImageCache, TemporaryDirectory) {
        let folder = try TemporaryDirectory()
        return (ImageCache(name: "callbacks", cacheDirectoryURL: folder.url), folder)
    }

    /// Waits for a callback form to call back once (a failed test, not a crash of the whole
    /// run, when it never does within the bound).
    static func waitFor<T: Sendable>(_ start: (@escaping @Sendable (T) -> Void) -> Void) async throws -> T {
        let values = Collected<T>()
        start { values.append($0) }
        _ = await eventually { !values.values.isEmpty }
        return try #require(values.values.first, "no callback within the bound")
    }

    @Test func storeRetrieveAndCachedTypeWithoutAsync() async throws {
        let (cache, folder) = try Self.makeCache()
        _ = folder
        let image = TestImages.image(width: 6, height: 4)
        #expect(cache.imageCachedType(forKey: "k") == .none)
        #expect(!cache.isCached(forKey: "k"))
        let stored: CacheStoreResult = try await Self.waitFor { done in
            cache.store(image, forKey: "k", completionHandler: done)
        }
        #expect((try? stored.diskCacheResult.get()) != nil)
        #expect(cache.imageCachedType(forKey: "k") == .memory)
        cache.clearMemoryCache()
        #expect(cache.imageCachedType(forKey: "k") == .disk)
        #expect(cache.isCached(forKey: "k"))

        let found: Result<ImageCacheResult, AlcedoError> = try await Self.waitFor { done in
            cache.retrieveImage(forKey: "k", completionHandler: done)
        }
        #expect(try found.get().cacheType == .disk)
        #expect(try found.get().image?.pixelSize == PixelSize(width: 6, height: 4))
        let missing: Result<ImageCacheResult, AlcedoError> = try await Self.waitFor { done in
            cache.retrieveImage(forKey: "nothing", options: [.processor(DefaultImageProcessor.default)], completionHandler: done)
        }
        #expect(try missing.get().cacheType == .none)
    }

    @Test func aFreshCacheSeesTheDiskWithoutLoadingItsIndex() async throws {
        let folder = try TemporaryDirectory()
        let first = ImageCache(name: "shared", cacheDirectoryURL: folder.url)
        try await first.store(TestImages.image(width: 2, height: 2), forKey: "on-disk")
        let second = ImageCache(name: "shared", cacheDirectoryURL: folder.url)
        #expect(second.imageCachedType(forKey: "on-disk") == .disk)
        #expect(second.imageCachedType(forKey: "absent") == .none)
    }

    @Test func removeClearCleanAndSize() async throws {
        let (cache, folder) = try Self.makeCache()
        _ = folder
        for key in ["a", "b", "c"] { try await cache.store(TestImages.image(width: 3, height: 3), forKey: key) }
        let size: Result<UInt, AlcedoError> = try await Self.waitFor { done in cache.calculateDiskStorageSize(completion: done) }
        #expect(try size.get() > 0)

        let _: Void = try await Self.waitFor { done in cache.removeImage(forKey: "a") { done(()) } }
        #expect(cache.imageCachedType(forKey: "a") == .none)
        #expect(cache.isCached(forKey: "b"))

        let _: Void = try await Self.waitFor { done in cache.cleanExpiredDiskCache { done(()) } }
        #expect(cache.isCached(forKey: "b"))

        let _: Void = try await Self.waitFor { done in cache.clearMemoryCache { done(()) } }
        #expect(cache.imageCachedType(forKey: "b") == .disk)
        let _: Void = try await Self.waitFor { done in cache.clearDiskCache { done(()) } }
        #expect(cache.imageCachedType(forKey: "b") == .none)
        let empty: Result<UInt, AlcedoError> = try await Self.waitFor { done in cache.calculateDiskStorageSize(completion: done) }
        #expect(try empty.get() == 0)
    }

    @Test func callbacksRunOnTheGivenQueue() async throws {
        let (cache, folder) = try Self.makeCache()
        _ = folder
        let queue = DispatchQueue(label: "alcedo.tests.callbacks")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let onQueue: Bool = try await Self.waitFor { done in
            cache.store(TestImages.image(width: 2, height: 2), forKey: "q", callbackQueue: .dispatch(queue)) { _ in
                done(DispatchQueue.getSpecific(key: key) == true)
            }
        }
        #expect(onQueue)
    }
}

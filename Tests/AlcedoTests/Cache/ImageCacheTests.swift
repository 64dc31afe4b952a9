import Foundation
import Testing
@testable import Alcedo

@Suite("ImageCache")
struct ImageCacheTests {
    let folder: TemporaryDirectory
    let clock = TestClock()

    init() throws {
        folder = try TemporaryDirectory()
    }

    private func makeCache(name: String = "images", diskSizeLimit: Int = 0,
                           codecs: ImageCodecRegistry = BMPTestCodec.registry()) -> ImageCache {
        ImageCache(
            memoryStorage: MemoryStorage.Backend(config: .init(totalCostLimit: 10_000_000, now: clock.function)),
            diskStorage: DiskStorage.EntryStore(config: .init(name: name, directory: folder.url, sizeLimit: diskSizeLimit,
                                                           now: clock.function)),
            codecs: codecs)
    }

    @Test func memoryFirstThenDiskThenMemoryAgain() async throws {
        let cache = makeCache()
        let image = AlcedoImage.testPattern(format: .bmp)
        try await cache.store(image, forKey: "a")
        let first = try await cache.retrieveImage(forKey: "a")
        #expect(first.cacheType == .memory)
        #expect(first.image == image)

        cache.clearMemoryCache()
        let second = try await cache.retrieveImage(forKey: "a")
        #expect(second.cacheType == .disk)
        #expect(second.image?.pixels == image.pixels)
        #expect(cache.retrieveImageInMemoryCache(forKey: "a") != nil, "a disk hit is put in memory")
        #expect(try await cache.retrieveImage(forKey: "a").cacheType == .memory)
        #expect(try await cache.retrieveImage(forKey: "missing").cacheType == .none)
        #expect(try await cache.retrieveImage(forKey: "missing").image == nil)
    }

    @Test func aSecondCacheOnTheSameFolderFindsTheImages() async throws {
        let image = AlcedoImage.testPattern(seed: 3, format: .bmp)
        try await makeCache().store(image, forKey: "shared")
        let other = makeCache()
        let result = try await other.retrieveImage(forKey: "shared")
        #expect(result.cacheType == .disk)
        #expect(result.image?.pixels == image.pixels)
    }

    @Test func processedVariantsHaveTheirOwnKeys() async throws {
        let cache = makeCache()
        let original = AlcedoImage.testPattern(seed: 1, format: .bmp)
        let processed = AlcedoImage.testPattern(width: 4, height: 3, seed: 2, format: .bmp)
        try await cache.store(original, forKey: "url")
        try await cache.store(processed, forKey: "url", processorIdentifier: "resize(4x3)")
        #expect(ImageCache.cacheKey(forKey: "url", processorIdentifier: "resize(4x3)") == "url@resize(4x3)")
        #expect(ImageCache.cacheKey(forKey: "url", processorIdentifier: "") == "url")
        #expect(cache.hash(forKey: "url", processorIdentifier: "resize(4x3)") == cache.diskStorage.hash(forKey: "url@resize(4x3)"))
        #expect(cache.cachePath(forKey: "url") != cache.cachePath(forKey: "url", processorIdentifier: "resize(4x3)"))
        cache.clearMemoryCache()
        #expect(try await cache.retrieveImage(forKey: "url").image?.pixelSize == original.pixelSize)
        #expect(try await cache.retrieveImage(forKey: "url", processorIdentifier: "resize(4x3)").image?.pixelSize == processed.pixelSize)
        #expect(try await cache.retrieveImage(forKey: "url", processorIdentifier: "other").cacheType == .none)
    }

    @Test func originalBytesAreStoredAsTheyAreButNotForProcessedVariants() async throws {
        let cache = makeCache()
        let image = AlcedoImage.testPattern(format: .bmp)
        let original = BMPEncoder().encodeOrFail(image) + Data("trailing bytes the server sent".utf8)
        try await cache.store(image, original: original, forKey: "k")
        try await cache.store(image, original: original, forKey: "k", processorIdentifier: "p")
        #expect(try await cache.retrieveDataInDiskCache(forKey: "k")?.data == original)
        let processed = try #require(try await cache.retrieveDataInDiskCache(forKey: "k", processorIdentifier: "p")?.data)
        #expect(processed != original)
        #expect(processed == BMPEncoder().encodeOrFail(image))
    }

    @Test func toDiskFalseStoresInMemoryOnly() async throws {
        let cache = makeCache()
        try await cache.store(AlcedoImage.testPattern(format: .bmp), forKey: "k", toDisk: false)
        #expect(cache.imageCachedType(forKey: "k") == .memory)
        cache.clearMemoryCache()
        #expect(cache.imageCachedType(forKey: "k") == .none)
        #expect(!(cache.isCached(forKey: "k")))
    }

    @Test func cachedTypeAndRemoval() async throws {
        let cache = makeCache()
        try await cache.store(AlcedoImage.testPattern(format: .bmp), forKey: "k")
        #expect(cache.imageCachedType(forKey: "k") == .memory)
        try await cache.removeImage(forKey: "k", fromDisk: false)
        #expect(cache.imageCachedType(forKey: "k") == .disk)
        #expect(cache.isCached(forKey: "k"))
        _ = try await cache.retrieveImage(forKey: "k")
        try await cache.removeImage(forKey: "k", fromMemory: false)
        #expect(cache.imageCachedType(forKey: "k") == .memory)
        try await cache.removeImage(forKey: "k")
        #expect(cache.imageCachedType(forKey: "k") == .none)
        cache.storeToMemory(AlcedoImage.testPattern(), forKey: "m", processorIdentifier: "p")
        #expect(cache.imageCachedType(forKey: "m", processorIdentifier: "p") == .memory)
    }

    @Test func clearingAndSizes() async throws {
        let cache = makeCache()
        for index in 0..<5 {
            try await cache.store(AlcedoImage.testPattern(seed: UInt8(index), format: .bmp), forKey: "k\(index)")
        }
        let size = try await cache.diskStorageSize
        #expect(size > 5 * 8 * 6 * 4)
        await cache.clearDiskCache()
        #expect(try await cache.diskStorageSize == 0)
        #expect(cache.imageCachedType(forKey: "k0") == .memory)
        cache.clearMemoryCache()
        #expect(cache.imageCachedType(forKey: "k0") == .none)
        try await cache.store(AlcedoImage.testPattern(format: .bmp), forKey: "again")
        try await cache.clearCache()
        #expect(cache.imageCachedType(forKey: "again") == .none)
    }

    @Test func expiredEntriesAreCleanedFromBothStorages() async throws {
        let cache = makeCache()
        try await cache.store(AlcedoImage.testPattern(format: .bmp), forKey: "short",
                              memoryExpiration: .seconds(10), diskExpiration: .seconds(100))
        try await cache.store(AlcedoImage.testPattern(format: .bmp), forKey: "long",
                              memoryExpiration: .never, diskExpiration: .never)
        clock.advance(50)
        cache.cleanExpiredMemoryCache()
        #expect(cache.imageCachedType(forKey: "short") == .disk)
        clock.advance(60)
        let report = try await cache.cleanExpiredCache()
        #expect(report.expired == [cache.hash(forKey: "short")])
        #expect(cache.imageCachedType(forKey: "short") == .none)
        #expect(cache.imageCachedType(forKey: "long") == .memory)
    }

    @Test func httpMetadataRoundTripAndRefresh() async throws {
        let cache = makeCache()
        let image = AlcedoImage.testPattern(format: .bmp)
        let original = BMPEncoder().encodeOrFail(image)
        let info = HTTPCacheInfo(etag: "\"abc\"", lastModified: "Tue, 15 Nov 1994 12:45:26 GMT", maxAge: 60,
                                 contentType: "image/bmp", responseDate: clock.now)
        try await cache.store(image, original: original, forKey: "https://example.com/a.bmp", httpCacheInfo: info)
        let stored = try #require(try await cache.retrieveDataInDiskCache(forKey: "https://example.com/a.bmp"))
        #expect(stored.data == original)
        #expect(stored.metadata.httpCacheInfo == info)
        #expect(stored.metadata.dataSize == original.count)

        clock.advance(120)
        var refreshed = info
        refreshed.responseDate = clock.now
        #expect(try await cache.updateDiskMetadata(forKey: "https://example.com/a.bmp", httpCacheInfo: refreshed))
        let metadata = try #require(try await cache.diskMetadata(forKey: "https://example.com/a.bmp"))
        #expect(metadata.httpCacheInfo == refreshed)
        #expect(metadata.httpCacheInfo?.isStale(at: clock.now) == false)
        #expect(try await cache.updateDiskMetadata(forKey: "nothing", httpCacheInfo: info) == false)

        try await cache.storeToDisk(original, forKey: "raw", httpCacheInfo: info)
        #expect(try await cache.diskMetadata(forKey: "raw")?.httpCacheInfo == info)
    }

    @Test func diskLimitEvictionAfterRestart() async throws {
        let image = AlcedoImage.testPattern(format: .bmp)
        let first = makeCache()
        for index in 0..<4 {
            try await first.store(image, forKey: "k\(index)")
            clock.advance(100)
        }
        _ = try await first.retrieveImageInDiskCache(forKey: "k0")
        clock.advance(100)
        let fileSize = try #require(try await first.diskMetadata(forKey: "k0")?.fileSize)
        // Restart with a limit of four files: one more store trims to two, k0 (read last) and the new one.
        let second = makeCache(diskSizeLimit: fileSize * 4)
        try await second.store(image, forKey: "new")
        #expect(second.imageCachedType(forKey: "new") == .memory)
        second.clearMemoryCache()
        var onDisk: [String] = []
        for key in ["k0", "k1", "k2", "k3", "new"] where second.imageCachedType(forKey: key) == .disk {
            onDisk.append(key)
        }
        #expect(onDisk == ["k0", "new"])
    }

    @Test func diskFailureLeavesTheMemoryCacheWorking() async throws {
        let blocker = folder.url.appendingPathComponent("not-a-folder")
        try Data("file".utf8).write(to: blocker)
        let cache = ImageCache(name: "broken", cacheDirectoryURL: blocker, codecs: BMPTestCodec.registry())
        let image = AlcedoImage.testPattern(format: .bmp)
        await #expect(throws: AlcedoError.self) { try await cache.store(image, forKey: "k") }
        #expect(try await cache.retrieveImage(forKey: "k").cacheType == .memory)
        #expect(try await cache.retrieveImage(forKey: "k").image == image)
    }

    @Test func undecodableDiskEntryThrowsAndStays() async throws {
        let cache = makeCache()
        try await cache.storeToDisk(Data("not an image at all".utf8), forKey: "bad")
        await #expect(throws: AlcedoError.self) { _ = try await cache.retrieveImage(forKey: "bad") }
        #expect(cache.imageCachedType(forKey: "bad") == .disk)
    }

    @Test func formatIndicatedSerializerPerCall() async throws {
        let codecs = BMPTestCodec.registry()
        let cache = makeCache(codecs: codecs)
        let image = AlcedoImage.testPattern(format: .unknown)
        try await cache.store(image, original: Data("ignored".utf8), forKey: "k",
                              cacheSerializer: FormatIndicatedCacheSerializer(format: .bmp, codecs: codecs))
        let data = try #require(try await cache.retrieveDataInDiskCache(forKey: "k")?.data)
        #expect(ImageFormat.sniff(data) == .bmp)
    }

    static let builtInCodecs = ImageCodecRegistry.shared.decodableFormats.isSuperset(of: [.png, .jpeg])
        && ImageCodecRegistry.shared.encodableFormats.isSuperset(of: [.png, .jpeg])

    @Test(.enabled(if: builtInCodecs, "needs the PNG and JPEG codecs"))
    func realPNGIsCachedAsDownloadedAndDecodedFromDisk() async throws {
        let original = try Fixtures.data("libpng/testpngs/rgb-8.png")
        let image = try ImageCodecRegistry.shared.decode(original)
        let cache = makeCache(codecs: .shared)
        try await cache.store(image, original: original, forKey: "https://example.com/rgb-8.png")
        #expect(try await cache.retrieveDataInDiskCache(forKey: "https://example.com/rgb-8.png")?.data == original)
        let other = makeCache(codecs: .shared)
        let result = try await other.retrieveImage(forKey: "https://example.com/rgb-8.png")
        #expect(result.cacheType == .disk)
        #expect(result.image?.pixels == image.pixels)
        #expect(result.image?.sourceFormat == .png)
    }

    @Test(.enabled(if: builtInCodecs, "needs the PNG and JPEG codecs"))
    func processedJPEGIsEncodedAsJPEGAndIndicatedFormatsAreHonoured() async throws {
        let original = try Fixtures.data("libjpeg-turbo/testorig.jpg")
        let image = try ImageCodecRegistry.shared.decode(original)
        let half = try ImageCodecRegistry.shared.decode(original, options: DecodingOptions(
            targetSize: PixelSize(width: image.width / 2, height: image.height / 2)))
        let cache = makeCache(codecs: .shared)
        try await cache.store(half, original: original, forKey: "photo", processorIdentifier: "half")
        let stored = try #require(try await cache.retrieveDataInDiskCache(forKey: "photo", processorIdentifier: "half")?.data)
        #expect(ImageFormat.sniff(stored) == .jpeg)
        #expect(stored != original)
        cache.clearMemoryCache()
        #expect(try await cache.retrieveImage(forKey: "photo", processorIdentifier: "half").image?.pixelSize == half.pixelSize)

        try await cache.store(half, forKey: "photo", processorIdentifier: "png", cacheSerializer: FormatIndicatedCacheSerializer.png)
        let png = try #require(try await cache.retrieveDataInDiskCache(forKey: "photo", processorIdentifier: "png")?.data)
        #expect(ImageFormat.sniff(png) == .png)
        cache.clearMemoryCache()
        #expect(try await cache.retrieveImage(forKey: "photo", processorIdentifier: "png").image?.pixels == half.pixels)
    }

    @Test func tenThousandConcurrentOperationsLoseAndCorruptNothing() async throws {
        let cache = makeCache()
        let images = (0..<200).map { AlcedoImage.testPattern(width: 4, height: 3, seed: UInt8($0), format: .bmp) }
        // Keys 0..<100 are stored and read; keys 100..<200 are also removed.
        let (failures, stored) = await withTaskGroup(of: (Int, Int?).self) { group in
            for step in 0..<10_000 {
                group.addTask {
                    let number = (step / 4 + (step % 4) * 37) % 200
                    let key = "image-\(number)"
                    do {
                        switch step % 4 {
                        case 0:
                            try await cache.store(images[number], forKey: key)
                            return (0, number)
                        case 1, 2:
                            let found = try await cache.retrieveImage(forKey: key).image
                            return (found == nil || found?.pixels == images[number].pixels ? 0 : 1, nil)
                        default:
                            if number >= 100 { try await cache.removeImage(forKey: key) }
                            return (0, nil)
                        }
                    } catch {
                        return (1, nil)
                    }
                }
            }
            return await group.reduce(into: (0, Set<Int>())) { result, outcome in
                result.0 += outcome.0
                if let number = outcome.1 { result.1.insert(number) }
            }
        }
        #expect(failures == 0)
        let fresh = makeCache()
        for number in stored where number < 100 {
            let result = try await fresh.retrieveImage(forKey: "image-\(number)")
            #expect(result.cacheType == .disk, "image-\(number) was stored and never removed")
            #expect(result.image?.pixels == images[number].pixels)
        }
        #expect(stored.filter { $0 < 100 }.count == 100)
    }

    @Test func defaultCacheLivesUnderTheUserCacheFolder() {
        #expect(ImageCache.default.name == "default")
        let url = ImageCache.default.diskStorage.directoryURL
        #expect(url.lastPathComponent == "default")
        #expect(url.deletingLastPathComponent().lastPathComponent == "alcedo")
        #expect(ImageCache(name: "thumbs/../x").diskStorage.directoryURL.lastPathComponent == "thumbs_.._x")
    }
}

extension BMPEncoder {
    func encodeOrFail(_ image: AlcedoImage) -> Data {
        (try? encode(image, options: .default)) ?? Data()
    }
}

import Foundation
import Testing
@testable import Alcedo

/// The cache and the manager with a forced file extension, the Live Photo file lookups built
/// on it, and the serializer's Kingfisher-style quality.
@Suite("ImageCache forced extensions")
struct ImageCacheForcedExtensionTests {
    let folder: TemporaryDirectory
    let cache: ImageCache

    init() throws {
        folder = try TemporaryDirectory()
        cache = ImageCache(name: "forced", cacheDirectoryURL: folder.url)
    }

    private func jpeg() throws -> (data: Data, image: AlcedoImage) {
        let data = try Fixtures.data("jpeg-generated/orientation-1.jpg")
        return (data, try ImageCodecRegistry.shared.decode(data))
    }

    @Test func theDiskEntryDependsOnTheExtensionAndTheMemoryEntryDoesNot() async throws {
        let (data, image) = try jpeg()
        try await cache.store(image, original: data, forKey: "k", forcedExtension: "heic")
        #expect(cache.imageCachedType(forKey: "k") == .memory)
        cache.clearMemoryCache()
        #expect(cache.imageCachedType(forKey: "k") == .none)
        #expect(cache.imageCachedType(forKey: "k", forcedExtension: "heic") == .disk)
        #expect(await cache.imageCachedTypeAsync(forKey: "k", forcedExtension: "heic") == .disk)
        #expect(cache.cacheFileURLIfOnDisk(forKey: "k") == nil)
        let url = try #require(cache.cacheFileURLIfOnDisk(forKey: "k", forcedExtension: "heic"))
        #expect(url.path == cache.cachePath(forKey: "k", forcedExtension: "heic"))
        #expect(url.pathExtension == "heic")

        #expect(try await cache.retrieveImage(forKey: "k").image == nil)
        #expect(try await cache.retrieveImage(forKey: "k", forcedExtension: "heic").cacheType == .disk)
        #expect(try await cache.retrieveDataInDiskCache(forKey: "k", forcedExtension: "heic")?.data == data)

        try await cache.removeImage(forKey: "k", forcedExtension: "heic")
        #expect(cache.imageCachedType(forKey: "k", forcedExtension: "heic") == .none)
    }

    @Test func theManagerReadsAndWritesWithTheOptionsExtension() async throws {
        let (data, _) = try jpeg()
        let manager = ImageManager(downloader: ImageDownloader(name: "forced"), cache: cache)
        let provider = RawImageDataProvider(data: data, cacheKey: "raw")
        let processor = DownsamplingImageProcessor(size: PixelSize(width: 4, height: 4))
        let options: AlcedoOptionsInfo = [.forcedCacheFileExtension("jpg"), .processor(processor), .cacheOriginalImage, .waitForCache]
        let first = try await manager.retrieveImage(with: .provider(provider), options: options)
        #expect(first.cacheType == .none)
        // The processed image and the original are both on disk under the extension.
        #expect(cache.cacheFileURLIfOnDisk(forKey: "raw", processorIdentifier: processor.identifier, forcedExtension: "jpg") != nil)
        #expect(cache.cacheFileURLIfOnDisk(forKey: "raw", forcedExtension: "jpg") != nil)
        #expect(cache.cacheFileURLIfOnDisk(forKey: "raw", processorIdentifier: processor.identifier) == nil)

        cache.clearMemoryCache()
        let again = try await manager.retrieveImage(with: .provider(provider), options: options)
        #expect(again.cacheType == .disk)
        cache.clearMemoryCache()
        let withoutExtension = try? await manager.retrieveImage(with: .provider(provider),
                                                                options: [.processor(processor), .onlyFromCache])
        #expect(withoutExtension == nil, "an entry stored with another extension is not found")
    }

    @Test func livePhotoFilesAreLookedForUnderTheirTypesExtension() async throws {
        let identifier = LivePhotoImageProcessor.default.identifier
        let video = LivePhotoResource(downloadURL: URL(string: "https://example.com/clip.MOV")!)
        #expect(video.referenceFileType == .mov)
        #expect(LivePhotoResource(downloadURL: URL(string: "https://example.com/a.heic")!).referenceFileType == .heic)
        #expect(LivePhotoResource(downloadURL: URL(string: "https://example.com/a")!).referenceFileType == .other(""))
        #expect(LivePhotoResource(downloadURL: URL(string: "https://example.com/a.jpg")!, fileType: .heic).referenceFileType == .heic)

        try await cache.storeToDisk(Data("video".utf8), forKey: video.cacheKey, processorIdentifier: identifier, forcedExtension: "mov")
        let unknown = cache.possibleCacheFileURLIfOnDisk(forKey: video.cacheKey, processorIdentifier: identifier,
                                                         referenceFileType: .other(""))
        #expect(unknown?.pathExtension == "mov")
        #expect(cache.possibleCacheFileURLIfOnDisk(forKey: video.cacheKey, processorIdentifier: identifier,
                                                   referenceFileType: .heic) == nil)
        #expect(cache.possibleCacheFileURLIfOnDisk(forKey: video.cacheKey, processorIdentifier: "",
                                                   referenceFileType: .mov) == nil)
    }

    @Test func compressionQualityIsTheEncodingQualityOverAHundred() throws {
        var serializer = DefaultCacheSerializer()
        #expect(serializer.compressionQuality == 0.9)
        serializer.compressionQuality = 0.8
        #expect(serializer.encodingOptions.quality == 80)
        serializer.compressionQuality = 0
        #expect(serializer.encodingOptions.quality == 1)
        serializer.compressionQuality = 7
        #expect(serializer.encodingOptions.quality == 100)
        serializer.compressionQuality = .nan
        #expect(serializer.encodingOptions.quality == 100)

        let (data, image) = try jpeg()
        serializer.compressionQuality = 0.8
        serializer.preferCacheOriginalData = false
        let encoded = try serializer.serializedData(with: image, original: data)
        #expect(encoded == image.kf.jpegRepresentation(compressionQuality: 0.8))
        serializer.preferCacheOriginalData = true
        #expect(try serializer.serializedData(with: image, original: data) == data)
    }
}

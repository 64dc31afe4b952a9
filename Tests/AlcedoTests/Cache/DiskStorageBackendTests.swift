import Foundation
import Testing
@testable import Alcedo
#if canImport(Glibc)
import Glibc
#endif

/// Alcedo's side of Kingfisher's generic `DiskStorage.Backend`: what Kingfisher's own
/// `DiskStorageTests` (in the KingfisherTests target) do not pin down.
@Suite("DiskStorage.Backend (Kingfisher's)")
struct DiskStorageBackendTests {
    let folder: TemporaryDirectory

    init() throws {
        folder = try TemporaryDirectory()
    }

    private func makeStorage(sizeLimit: UInt = 0) throws -> DiskStorage.Backend<Data> {
        try DiskStorage.Backend<Data>(config: DiskStorage.Config(name: "b", sizeLimit: sizeLimit, directory: folder.url))
    }

    private static func names(in storage: DiskStorage.Backend<Data>) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: storage.directoryURL.path).sorted()
    }

    private static func errorOf(_ body: () throws(AlcedoError) -> Void) -> AlcedoError? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }

    @Test func theFolderIsKingfishersNameInTheDirectory() throws {
        let storage = try makeStorage()
        #expect(storage.directoryURL.lastPathComponent == "com.onevcat.Kingfisher.ImageCache.b")
        #expect(storage.directoryURL.deletingLastPathComponent().standardizedFileURL.path
                    == folder.url.standardizedFileURL.path)
        var config = DiskStorage.Config(name: "c", sizeLimit: 0, directory: folder.url)
        let custom = folder.url.appendingPathComponent("custom", isDirectory: true)
        config.cachePathBlock = { _, _ in custom }
        let placed = try DiskStorage.Backend<Data>(config: config)
        #expect(placed.directoryURL == custom)
        #expect(FileManager.default.fileExists(atPath: custom.path))
    }

    @Test func aFileHoldsTheValueAloneWithItsDatesInTheFileTimes() throws {
        let storage = try makeStorage()
        let before = Date()
        try storage.store(value: Data("hello".utf8), forKey: "k", expiration: .seconds(300))
        let url = storage.cacheFileURL(forKey: "k")
        // The dates first: with `relatime`, reading a file whose modification time (here its
        // expiration) is in the future moves its access time to the read.
        let meta = try DiskStorage.FileMeta(fileURL: url)
        let access = try #require(meta.lastAccessDate)
        let expiration = try #require(meta.estimatedExpirationDate)
        #expect(try Data(contentsOf: url) == Data("hello".utf8))
        #expect(try storage.totalSize() == 5)
        #expect(access >= before.addingTimeInterval(-0.001) && access <= Date())
        #expect(abs(expiration.timeIntervalSince(access) - 300) < 0.001)
        #expect(try Self.names(in: storage) == [url.lastPathComponent], "no temporary file is left")
    }

    @Test func keysThatAreNotPlainFileNamesAreHashedEvenWithoutHashing() throws {
        let storage = try makeStorage()
        storage.config.usesHashedFileName = false
        #expect(storage.cacheFileName(forKey: "plain.png") == "plain.png")
        for key in ["../../escape", "a/b", "..", ".", ".hidden", "", String(repeating: "x", count: 256), "nul\0byte"] {
            #expect(storage.cacheFileName(forKey: key) == key.kf.sha256, "\(key.prefix(20))")
        }
        try storage.store(value: Data("1".utf8), forKey: "../../escape")
        #expect(try Self.names(in: storage) == ["../../escape".kf.sha256])
        #expect(try storage.value(forKey: "../../escape") == Data("1".utf8))
    }

    @Test func anExtensionWithASlashIsNotUsed() throws {
        let storage = try makeStorage()
        #expect(storage.cacheFileName(forKey: "k", forcedExtension: "../x") == "k".kf.sha256)
        #expect(storage.cacheFileName(forKey: "k", forcedExtension: "jpg") == "k".kf.sha256 + ".jpg")
        storage.config.pathExtension = "png"
        #expect(storage.cacheFileName(forKey: "k") == "k".kf.sha256 + ".png")
        try storage.store(value: Data("1".utf8), forKey: "k", forcedExtension: "heic")
        #expect(storage.isCached(forKey: "k", forcedExtension: "heic"))
        #expect(!storage.isCached(forKey: "k"))
    }

    @Test func withoutOverwritingFailsOnAnExistingValueAndKeepsIt() throws {
        let storage = try makeStorage()
        try storage.store(value: Data("first".utf8), forKey: "k", writeOptions: .withoutOverwriting)
        let error = Self.errorOf { () throws(AlcedoError) in
            try storage.store(value: Data("second".utf8), forKey: "k", writeOptions: .withoutOverwriting)
        }
        guard case .cacheError(reason: .cannotCreateCacheFile(_, let key, _, _))? = error else {
            Issue.record("expected cannotCreateCacheFile, got \(String(describing: error))")
            return
        }
        #expect(key == "k")
        #expect(try storage.value(forKey: "k") == Data("first".utf8))
        #expect(try Self.names(in: storage) == ["k".kf.sha256], "no temporary file is left")
    }

    @Test func aStoreRecreatesAFolderDeletedUnderneath() throws {
        let storage = try makeStorage()
        try FileManager.default.removeItem(at: storage.directoryURL)
        try storage.store(value: Data("1".utf8), forKey: "k")
        #expect(try storage.value(forKey: "k") == Data("1".utf8))
    }

    @Test func removingAMissingValueOrFolderIsNotAnError() throws {
        let storage = try makeStorage()
        try storage.remove(forKey: "never stored")
        try storage.removeAll(skipCreatingDirectory: true)
        try storage.removeAll(skipCreatingDirectory: true)
        #expect(!FileManager.default.fileExists(atPath: storage.directoryURL.path))
        #expect(try storage.totalSize() == 0)
        #expect(try storage.removeExpiredValues().isEmpty)
        try storage.removeAll()
        #expect(FileManager.default.fileExists(atPath: storage.directoryURL.path))
    }

    @Test func aReadWithAnExpirationTimeSetsTheNewExpiration() throws {
        let storage = try makeStorage()
        try storage.store(value: Data("1".utf8), forKey: "k", expiration: .seconds(10))
        _ = try storage.value(forKey: "k", extendingExpiration: .expirationTime(.seconds(1000)))
        storage.metaChangingQueue.sync {}
        #expect(storage.isCached(forKey: "k", referenceDate: Date().addingTimeInterval(900)))
        _ = try storage.value(forKey: "k", extendingExpiration: .none)
        storage.metaChangingQueue.sync {}
        #expect(storage.isCached(forKey: "k", referenceDate: Date().addingTimeInterval(900)))
    }

    @Test func theSizeCleanUpRemovesTheLeastRecentlyUsedFirst() throws {
        let storage = try makeStorage(sizeLimit: 30)
        let now = Date()
        for (index, key) in ["old", "middle", "new"].enumerated() {
            try storage.store(value: Data(repeating: UInt8(index), count: 10), forKey: key)
            let path = storage.cacheFileURL(forKey: key).path
            #expect(FileTime.set(path: path, accessed: now.addingTimeInterval(Double(index - 10)),
                                 modified: now.addingTimeInterval(3600)) == nil)
        }
        #expect(try storage.totalSize() == 30)
        let removed = try storage.removeSizeExceededValues().map(\.lastPathComponent)
        #expect(removed == ["old".kf.sha256, "middle".kf.sha256], "down to half the limit, oldest access first")
        #expect(storage.isCached(forKey: "new"))
        #expect(try storage.removeSizeExceededValues().isEmpty, "under the limit")
    }

    @Test func theExpiredCleanUpRemovesTemporaryFilesOfInterruptedWritesOnlyWhenOld() throws {
        let storage = try makeStorage()
        let leftover = storage.directoryURL.appendingPathComponent(DiskStorage.Backend<Data>.temporaryPrefix + "1-1")
        try Data("partial".utf8).write(to: leftover)
        #expect(try storage.removeExpiredValues().isEmpty)
        #expect(FileManager.default.fileExists(atPath: leftover.path), "a fresh temporary file may be a write in progress")
        #expect(try storage.removeExpiredValues(referenceDate: Date().addingTimeInterval(700)).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: leftover.path))
    }

    @Test func aValueThatDoesNotConvertIsAnError() throws {
        let storage = try DiskStorage.Backend<Refusing>(
            config: DiskStorage.Config(name: "r", sizeLimit: 0, directory: folder.url))
        let error = Self.errorOf { () throws(AlcedoError) in try storage.store(value: Refusing(), forKey: "k") }
        guard case .cacheError(reason: .cannotConvertToData)? = error else {
            Issue.record("expected cannotConvertToData, got \(String(describing: error))")
            return
        }
        #expect(!storage.isCached(forKey: "k"))
    }

    @Test func dataIsItsOwnTransformation() throws {
        let bytes = Data([0, 1, 2, 255])
        #expect(try bytes.toData() == bytes)
        #expect(try Data.fromData(bytes) == bytes)
        #expect(Data.empty.isEmpty)
    }
}

/// A value that never turns into bytes.
private struct Refusing: DataTransformable, Sendable {
    struct Refusal: Error {}
    func toData() throws -> Data { throw Refusal() }
    static func fromData(_ data: Data) throws -> Refusing { Refusing() }
    static var empty: Refusing { Refusing() }
}

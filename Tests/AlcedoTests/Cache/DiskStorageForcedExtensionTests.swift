import Foundation
import Testing
@testable import Alcedo

/// Entries stored with a forced file extension (Kingfisher's `forcedExtension:`): a file of its
/// own beside the entry with the configured extension, found again by scans.
@Suite("DiskStorage forced extensions")
struct DiskStorageForcedExtensionTests {
    let folder: TemporaryDirectory

    init() throws {
        folder = try TemporaryDirectory()
    }

    private var cacheURL: URL { folder.url.appendingPathComponent("cache", isDirectory: true) }

    private func storage(pathExtension: String? = nil, sizeLimit: Int = 0) -> DiskStorage.EntryStore {
        DiskStorage.EntryStore(config: .init(folderURL: cacheURL, sizeLimit: sizeLimit, pathExtension: pathExtension))
    }

    private func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: cacheURL.path).filter { !$0.hasPrefix(".") }.sorted()
    }

    @Test func aForcedExtensionIsAnEntryOfItsOwn() throws {
        let store = storage()
        let hash = store.hash(forKey: "k")
        try store.store(value: Data("heic bytes".utf8), forKey: "k", forcedExtension: "heic")
        #expect(try files() == [hash + ".heic"])
        #expect(store.cacheFileURL(forKey: "k", forcedExtension: "heic").lastPathComponent == hash + ".heic")
        #expect(try store.value(forKey: "k") == nil)
        #expect(!store.isCached(forKey: "k"))
        #expect(store.isCached(forKey: "k", forcedExtension: "heic"))
        #expect(try store.value(forKey: "k", forcedExtension: "heic") == Data("heic bytes".utf8))

        try store.store(value: Data("plain".utf8), forKey: "k")
        #expect(try files() == [hash, hash + ".heic"])
        #expect(try store.value(forKey: "k") == Data("plain".utf8))
        #expect(try store.metadata(forKey: "k", forcedExtension: "heic")?.dataSize == 10)

        try store.remove(forKey: "k", forcedExtension: "heic")
        #expect(try files() == [hash])
        #expect(try store.value(forKey: "k") == Data("plain".utf8))
    }

    @Test func aForcedExtensionReplacesTheConfiguredOne() throws {
        let store = storage(pathExtension: "png")
        let hash = store.hash(forKey: "k")
        try store.store(value: Data("a".utf8), forKey: "k", forcedExtension: "mov")
        try store.store(value: Data("b".utf8), forKey: "k")
        #expect(try files() == [hash + ".mov", hash + ".png"])
        // Forcing the configured extension names the configured entry.
        #expect(try store.value(forKey: "k", forcedExtension: "png") == Data("b".utf8))
    }

    @Test func aForcedExtensionIsCleanedAsTheConfiguredOneIs() throws {
        let store = storage()
        let hash = store.hash(forKey: "k")
        #expect(store.cacheFileURL(forKey: "k", forcedExtension: "../../x.y").lastPathComponent == hash + ".xy")
        #expect(store.cacheFileURL(forKey: "k", forcedExtension: "/").lastPathComponent == hash)
        try store.store(value: Data("x".utf8), forKey: "k", forcedExtension: "../etc")
        #expect(try files() == [hash + ".etc"])
        #expect(store.isCached(forKey: "k", forcedExtension: "etc"))
    }

    @Test func scansKeepEntriesWithAnyExtension() throws {
        let first = storage(pathExtension: "png")
        try first.store(value: Data("one".utf8), forKey: "k")
        try first.store(value: Data("two".utf8), forKey: "k", forcedExtension: "heic")

        // Another store on the folder, another configured extension: both entries are found
        // with their extension, counted and cleaned up as entries, not removed as stale.
        let second = storage(pathExtension: "jpg")
        let stats = try second.statistics()
        #expect(stats.entryCount == 2)
        #expect(try second.cleanUp().corrupt.isEmpty)
        #expect(try second.value(forKey: "k") == nil)
        #expect(try second.value(forKey: "k", forcedExtension: "png") == Data("one".utf8))
        #expect(try second.value(forKey: "k", forcedExtension: "heic") == Data("two".utf8))

        try second.removeAll()
        #expect(try files().isEmpty)
    }

    @Test func aNameWhoseTailIsNoExtensionIsNotAnEntry() throws {
        let store = storage()
        try store.store(value: Data("x".utf8), forKey: "k", forcedExtension: "heic")
        let hash = store.hash(forKey: "k")
        let entry = cacheURL.appendingPathComponent(hash + ".heic")
        // Alcedo's own file under a name no entry can have: removed by a scan, as before.
        try FileManager.default.copyItem(at: entry, to: cacheURL.appendingPathComponent(hash + ".a-b"))
        let fresh = storage()
        #expect(try fresh.cleanUp().corrupt == [hash])
        #expect(try files() == [hash + ".heic"])
    }

    @Test func theSizeLimitCountsEveryExtension() throws {
        let store = storage(sizeLimit: 4_000)
        for index in 0..<4 {
            try store.store(value: Data(count: 1_500), forKey: "k\(index)", forcedExtension: index.isMultiple(of: 2) ? "heic" : nil)
        }
        let total = try store.totalSize()
        #expect(total <= 4_000)
        #expect(total == (try storage(sizeLimit: 4_000).statistics().totalSize))
    }
}

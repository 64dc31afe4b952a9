import Foundation
import Testing
@testable import Alcedo
#if canImport(Glibc)
import Glibc
#endif

/// The disk storage's less travelled paths: entries over 1 MiB (read in two steps), metadata
/// updates of entries that expired, broke or vanished, and the failures of rename, mkdir and
/// folder scans.
@Suite("DiskStorage edge cases")
struct DiskStorageEdgeCaseTests {
    let folder: TemporaryDirectory
    let clock = TestClock()

    init() throws {
        folder = try TemporaryDirectory()
    }

    private var cacheURL: URL { folder.url.appendingPathComponent("cache", isDirectory: true) }

    private func makeStorage(at url: URL? = nil) -> DiskStorage.EntryStore {
        DiskStorage.EntryStore(config: .init(folderURL: url ?? cacheURL, expiration: .seconds(100), now: clock.function))
    }

    private func temporaryFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: cacheURL.path).filter { $0.hasPrefix(DiskStorage.EntryStore.temporaryPrefix) }
    }

    // MARK: Entries over 1 MiB

    @Test("an entry of 3 MiB (header read first, then the data) reads back whole through every read call")
    func largeEntriesReadInTwoSteps() throws {
        #expect(3 << 20 > DiskEntryFile.wholeFileLimit)
        let storage = makeStorage()
        let data = EntryBytes.make(key: "big", count: 3 << 20)
        let info = HTTPCacheInfo(etag: "\"big\"", contentType: "image/jpeg")
        try storage.store(value: data, forKey: "big", httpCacheInfo: info)
        let fresh = makeStorage()
        #expect(try fresh.value(forKey: "big") == data)
        let entry = try #require(try fresh.entry(forKey: "big"))
        #expect(entry.data == data && entry.metadata.httpCacheInfo == info)
        #expect(entry.metadata.dataSize == data.count)
        #expect(try makeStorage().metadata(forKey: "big")?.httpCacheInfo == info)
        // A metadata update in its slot, and one that outgrows it (the file is rewritten), keep the data.
        #expect(try fresh.updateMetadata(forKey: "big", httpCacheInfo: HTTPCacheInfo(etag: "\"b2\"")))
        #expect(try fresh.value(forKey: "big") == data)
        let large = HTTPCacheInfo(etag: "\"" + String(repeating: "x", count: 3_000) + "\"")
        #expect(try fresh.updateMetadata(forKey: "big", httpCacheInfo: large))
        #expect(try makeStorage().entry(forKey: "big")?.data == data)
        #expect(try makeStorage().metadata(forKey: "big")?.httpCacheInfo == large)
    }

    @Test("a truncated entry over 1 MiB is corrupt: removed, never served")
    func truncatedLargeEntry() throws {
        let storage = makeStorage()
        try storage.store(value: EntryBytes.make(key: "big", count: 2 << 20), forKey: "big")
        let url = storage.cacheFileURL(forKey: "big")
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: UInt64(1 << 20) + 10)
        try handle.close()
        #expect(try storage.value(forKey: "big") == nil)
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    // MARK: updateMetadata on entries that are not there any more

    @Test("updateMetadata on an expired entry: false, and the entry is removed")
    func updateMetadataOnExpiredEntry() throws {
        let storage = makeStorage()
        try storage.store(value: Data("old".utf8), forKey: "k")
        clock.advance(101)
        #expect(try storage.updateMetadata(forKey: "k", httpCacheInfo: HTTPCacheInfo(etag: "\"e\"")) == false)
        #expect(!FileManager.default.fileExists(atPath: storage.cacheFileURL(forKey: "k").path))
        #expect(try storage.totalSize() == 0)
    }

    @Test("updateMetadata on a corrupt entry (Alcedo's magic, broken record): false, and the file is removed")
    func updateMetadataOnCorruptEntry() throws {
        let storage = makeStorage()
        try storage.store(value: Data("payload".utf8), forKey: "k")
        let url = storage.cacheFileURL(forKey: "k")
        var bytes = try [UInt8](Data(contentsOf: url))
        for index in 48..<(48 + 40) { bytes[index] ^= 0x5A }  // both record slots' headers
        let capacity = Int(bytes[12]) | Int(bytes[13]) << 8
        for index in (48 + 24 + capacity)..<(48 + 24 + capacity + 24) { bytes[index] ^= 0x5A }
        try Data(bytes).write(to: url)
        #expect(try storage.updateMetadata(forKey: "k", httpCacheInfo: nil) == false)
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    @Test("updateMetadata on an entry whose file vanished: false, and the index forgets it")
    func updateMetadataOnVanishedEntry() throws {
        let storage = makeStorage()
        try storage.store(value: Data("payload".utf8), forKey: "k")
        try FileManager.default.removeItem(at: storage.cacheFileURL(forKey: "k"))
        #expect(try storage.updateMetadata(forKey: "k", httpCacheInfo: nil) == false)
        #expect(try storage.totalSize() == 0)
        #expect(!storage.isCached(forKey: "k"))
    }

    // MARK: Failures of rename, mkdir and scans

    @Test("a rename that fails (a folder holds the entry's name) is a typed error and leaves no temporary file")
    func renameFailure() throws {
        let storage = makeStorage()
        try storage.store(value: Data("a".utf8), forKey: "a")
        let blocked = storage.cacheFileURL(forKey: "blocked")
        try FileManager.default.createDirectory(at: blocked, withIntermediateDirectories: false)
        try Data("x".utf8).write(to: blocked.appendingPathComponent("inside"))
        let error = #expect(throws: AlcedoError.self) { try storage.store(value: Data("b".utf8), forKey: "blocked") }
        guard case .cacheError(.cannotCreateCacheFile(_, _, _, .writeFailed(let path, let code))) = error else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(path == blocked.path)
        #expect(code == EISDIR || code == ENOTEMPTY || code == EEXIST)
        #expect(try temporaryFiles().isEmpty)
        #expect(try storage.value(forKey: "a") == Data("a".utf8))
    }

    @Test("a folder that cannot be made (a name too long) is a typed error naming the folder")
    func mkdirFailure() throws {
        let tooLong = folder.url.appendingPathComponent(String(repeating: "n", count: 300)).appendingPathComponent("cache")
        let storage = makeStorage(at: tooLong)
        #expect(throws: AlcedoError.self) { try storage.store(value: Data("a".utf8), forKey: "a") }
        let error = #expect(throws: AlcedoError.self) { try storage.prepareFolder() }
        guard case .cacheError(.cannotCreateDirectory(_, .cannotCreateDirectory(_, let code))) = error else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(code == ENAMETOOLONG)
    }

    @Test("a scan that fails (the folder is a symbolic link loop) throws, and the next use scans again")
    func abortedScanIsRetried() throws {
        try FileManager.default.createSymbolicLink(atPath: cacheURL.path, withDestinationPath: cacheURL.path)
        let storage = makeStorage()
        let error = #expect(throws: AlcedoError.self) { try storage.statistics() }
        guard case .cacheError(.cannotLoadDataFromDisk(_, .cannotListDirectory(_, let code))) = error else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(code == ELOOP)
        #expect(throws: AlcedoError.self) { try storage.value(forKey: "k") }
        // The loop is replaced by a folder holding an entry: the aborted scan left nothing behind.
        try FileManager.default.removeItem(atPath: cacheURL.path)
        try makeStorage().store(value: Data("there".utf8), forKey: "k")
        #expect(try storage.value(forKey: "k") == Data("there".utf8))
        #expect(try storage.statistics().entryCount == 1)
    }
}

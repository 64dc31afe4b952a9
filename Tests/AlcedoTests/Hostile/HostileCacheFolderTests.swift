import Foundation
import Testing
@_spi(Testing) @testable import Alcedo
#if canImport(Glibc)
import Glibc
#endif

/// A cache folder shared with other programs: files Alcedo did not write, symbolic links, FIFOs
/// and folders named like entries. Each generator below plants one kind; the disk cache must
/// never remove, follow, block on or write through any of them.
@Suite("Hostile cache folder")
struct HostileCacheFolderTests {
    let folder: TemporaryDirectory

    init() throws {
        folder = try TemporaryDirectory()
    }

    private var cacheURL: URL { folder.url.appendingPathComponent("cache", isDirectory: true) }

    private func makeStorage(granularity: TimeInterval = 60, temporaryFileLifetime: TimeInterval = 600,
                             pathExtension: String? = nil) -> DiskStorage.EntryStore {
        DiskStorage.EntryStore(config: .init(folderURL: cacheURL, pathExtension: pathExtension,
                                          accessTimeGranularity: granularity,
                                          temporaryFileLifetime: temporaryFileLifetime))
    }

    // MARK: Generators

    /// A content-addressed file of another program: named by the SHA-256 of its bytes, 64 hex digits.
    private func plantForeignHexFile(_ suffix: String = "") throws -> URL {
        let bytes = Data("somebody else's content \(suffix)".utf8)
        let url = cacheURL.appendingPathComponent(CacheKeyHash(key: String(decoding: bytes, as: UTF8.self)).hex + suffix)
        try bytes.write(to: url)
        return url
    }

    /// A FIFO at `url`, held open for reading and writing by the test so that opening it never
    /// blocks the test itself; returns that descriptor (close it at the end).
    private func plantFIFO(at url: URL) throws -> Int32 {
        try #require(mkfifo(url.path, 0o644) == 0, "mkfifo: \(String(cString: strerror(errno)))")
        let fd = open(url.path, O_RDWR | O_NONBLOCK)
        try #require(fd >= 0)
        return fd
    }

    private func plantOldFile(named name: String) throws -> URL {
        let url = cacheURL.appendingPathComponent(name)
        try Data(count: 100).write(to: url)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -86_400)], ofItemAtPath: url.path)
        return url
    }

    private func exists(_ url: URL) -> Bool {
        var info = stat()
        return lstat(url.path, &info) == 0
    }

    // MARK: Foreign files

    @Test("files named with 64 hex digits that Alcedo did not write survive lookups, stats, clean-ups and clear")
    func foreignHexFilesAreLeftAlone() throws {
        let storage = makeStorage()
        try storage.store(value: Data("mine".utf8), forKey: "mine")
        let plain = try plantForeignHexFile()
        let withExtension = try plantForeignHexFile(".bin")
        // Another program's file under the very name of a key Alcedo looks up.
        let underKey = storage.cacheFileURL(forKey: "wanted")
        try Data("not an entry".utf8).write(to: underKey)

        let fresh = makeStorage()
        #expect(try fresh.value(forKey: "wanted") == nil)
        #expect(try fresh.metadata(forKey: "wanted") == nil)
        #expect(!fresh.isCached(forKey: "wanted"))
        #expect(try fresh.updateMetadata(forKey: "wanted", httpCacheInfo: nil) == false)
        let stats = try fresh.statistics()
        #expect(stats.entryCount == 1, "only Alcedo's entry is counted")
        let report = try fresh.cleanUp()
        #expect(report.corrupt.isEmpty)
        try fresh.remove(forKey: "wanted")
        try fresh.removeAll()
        for url in [plain, withExtension, underKey] {
            #expect(exists(url), "\(url.lastPathComponent) was removed")
        }
        #expect(try Data(contentsOf: underKey) == Data("not an entry".utf8))
        #expect(try fresh.value(forKey: "mine") == nil, "Alcedo's own entry is cleared")
        #expect(!exists(storage.cacheFileURL(forKey: "mine")))
    }

    @Test("an Alcedo entry that fails its header check is still removed as corrupt")
    func corruptOwnEntriesAreStillRemoved() throws {
        let storage = makeStorage()
        try storage.store(value: Data(count: 5_000), forKey: "bad")
        let url = storage.cacheFileURL(forKey: "bad")
        let whole = try Data(contentsOf: url)
        try whole.prefix(whole.count - 100).write(to: url)  // magic intact, length wrong
        let report = try makeStorage().cleanUp()
        #expect(report.corrupt == [storage.hash(forKey: "bad")])
        #expect(!exists(url))
    }

    @Test("temporary files: only Alcedo's stale ones are removed; another program's old .tmp-* files stay")
    func onlyAlcedosTemporaryFilesAreRemoved() throws {
        let storage = makeStorage()
        try storage.store(value: Data("a".utf8), forKey: "a")
        let foreign = try plantOldFile(named: ".tmp-0123456789abcdef-99999-1")
        let otherTool = try plantOldFile(named: ".tmp-upload")
        let ours = try plantOldFile(named: DiskStorage.EntryStore.temporaryPrefix + "0123456789abcdef-99999-1")
        let fresh = try plantOldFile(named: DiskStorage.EntryStore.temporaryPrefix + "fedcba9876543210-99999-2")
        try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: fresh.path)
        #expect(try storage.cleanUp().temporaryFiles == 1)
        try storage.removeAll()
        #expect(exists(foreign) && exists(otherTool))
        #expect(!exists(ours))
        #expect(exists(fresh), "a fresh temporary file may be another process's write in progress")
    }

    @Test("a symbolic link to an old temporary file is not Alcedo's: neither it nor its target is removed")
    func symbolicLinkNamedLikeATemporaryFileStays() throws {
        try FileManager.default.createDirectory(at: cacheURL, withIntermediateDirectories: true)
        let target = folder.url.appendingPathComponent("precious")
        try Data("keep".utf8).write(to: target)
        let link = cacheURL.appendingPathComponent(DiskStorage.EntryStore.temporaryPrefix + "0123456789abcdef-1-1")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let storage = makeStorage(temporaryFileLifetime: -1_000)
        #expect(try storage.cleanUp().temporaryFiles == 0)
        #expect(exists(link) && exists(target))
    }

    // MARK: FIFOs, symbolic links, folders

    @Test("a FIFO named like an entry is skipped, never read or removed, by lookups, scans and clear")
    func fifoNamedLikeAnEntry() throws {
        let storage = makeStorage()
        try storage.store(value: Data("mine".utf8), forKey: "mine")
        let fifoURL = storage.cacheFileURL(forKey: "fifo")
        let holder = try plantFIFO(at: fifoURL)
        defer { close(holder) }
        // A key the index knows, whose file was then replaced by a FIFO.
        try storage.store(value: Data("x".utf8), forKey: "replaced")
        let replaced = storage.cacheFileURL(forKey: "replaced")
        try FileManager.default.removeItem(at: replaced)
        let holder2 = try plantFIFO(at: replaced)
        defer { close(holder2) }

        #expect(try storage.value(forKey: "replaced") == nil)
        let fresh = makeStorage()
        #expect(try fresh.value(forKey: "fifo") == nil)
        #expect(try fresh.statistics().entryCount == 1)
        #expect(try fresh.cleanUp().corrupt.isEmpty)
        try fresh.removeAll()
        #expect(exists(fifoURL) && exists(replaced))
    }

    @Test("a symbolic link to a FIFO named like an entry is skipped and left in place")
    func symbolicLinkToAFIFO() throws {
        try FileManager.default.createDirectory(at: cacheURL, withIntermediateDirectories: true)
        let fifoURL = folder.url.appendingPathComponent("fifo")
        let holder = try plantFIFO(at: fifoURL)
        defer { close(holder) }
        let storage = makeStorage()
        let link = storage.cacheFileURL(forKey: "k")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: fifoURL)
        #expect(try storage.value(forKey: "k") == nil)
        #expect(try storage.cleanUp().corrupt.isEmpty)
        try storage.removeAll()
        #expect(exists(link) && exists(fifoURL))
    }

    @Test("a symbolic link planted over an entry is never followed: nothing outside the folder is read or written")
    func symbolicLinkOverAnEntryIsNotFollowed() throws {
        let storage = makeStorage(granularity: 0)
        try storage.store(value: Data("inside".utf8), forKey: "k")
        #expect(try storage.value(forKey: "k") == Data("inside".utf8))
        // Move the valid entry outside the folder and point its name at it.
        let entryURL = storage.cacheFileURL(forKey: "k")
        let outside = folder.url.appendingPathComponent("outside-entry")
        try FileManager.default.moveItem(at: entryURL, to: outside)
        try FileManager.default.createSymbolicLink(at: entryURL, withDestinationURL: outside)
        let before = try Data(contentsOf: outside)

        #expect(try storage.value(forKey: "k") == nil, "a link is a miss, not a hit through the link")
        #expect(try storage.entry(forKey: "k") == nil)
        #expect(try storage.updateMetadata(forKey: "k", httpCacheInfo: nil) == false)
        #expect(try makeStorage(granularity: 0).value(forKey: "k") == nil)
        #expect(try Data(contentsOf: outside) == before, "the file outside the folder was written through the link")
        try makeStorage().removeAll()
        #expect(exists(entryURL) && exists(outside))
    }

    @Test("the access time is written through the descriptor that was read: a name swapped for a link meanwhile is not written through")
    func accessTimeGoesThroughTheVerifiedDescriptor() throws {
        let clock = TestClock()
        let storage = DiskStorage.EntryStore(config: .init(folderURL: cacheURL, accessTimeGranularity: 0, now: clock.function))
        try storage.store(value: Data("inside".utf8), forKey: "k")
        try storage.store(value: Data("other".utf8), forKey: "other")
        let entryURL = storage.cacheFileURL(forKey: "k")
        // A copy of another valid entry outside the folder: what a planted link would point to.
        let outside = folder.url.appendingPathComponent("outside-entry")
        try FileManager.default.copyItem(at: storage.cacheFileURL(forKey: "other"), to: outside)
        let outsideBefore = try Data(contentsOf: outside)
        let moved = folder.url.appendingPathComponent("moved-entry")
        storage.setBeforeAccessWriteHook { _ in
            // Between the verified read and the access write, the name becomes a link.
            try? FileManager.default.moveItem(at: entryURL, to: moved)
            try? FileManager.default.createSymbolicLink(at: entryURL, withDestinationURL: outside)
        }
        clock.advance(3_600)
        #expect(try storage.value(forKey: "k") == Data("inside".utf8))
        storage.setBeforeAccessWriteHook(nil)
        #expect(try Data(contentsOf: outside) == outsideBefore, "the access was written through the planted link")
        // The access went into the file that was read.
        try FileManager.default.removeItem(at: entryURL)
        try FileManager.default.moveItem(at: moved, to: entryURL)
        let reread = try #require(try DiskStorage.EntryStore(config: .init(folderURL: cacheURL, now: clock.function)).metadata(forKey: "k"))
        #expect(abs(reread.lastAccessDate.timeIntervalSince(clock.now)) < 0.01)
    }

    @Test("a folder named like an entry: clear succeeds and leaves it, lookups miss, stores fail with a typed error")
    func folderNamedLikeAnEntry() throws {
        let storage = makeStorage()
        try storage.store(value: Data("mine".utf8), forKey: "mine")
        let folderEntry = storage.cacheFileURL(forKey: "dir")
        try FileManager.default.createDirectory(at: folderEntry, withIntermediateDirectories: false)
        try Data("inside".utf8).write(to: folderEntry.appendingPathComponent("file"))

        let fresh = makeStorage()
        #expect(try fresh.value(forKey: "dir") == nil)
        #expect(try fresh.statistics().entryCount == 1)
        try fresh.removeAll()
        #expect(exists(folderEntry.appendingPathComponent("file")))
        #expect(throws: AlcedoError.self) { try fresh.store(value: Data("x".utf8), forKey: "dir") }
        #expect(exists(folderEntry.appendingPathComponent("file")))
    }
}

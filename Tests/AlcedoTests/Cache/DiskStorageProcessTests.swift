import Foundation
import Testing
@testable import Alcedo
#if canImport(Glibc)
import Glibc
#endif

/// Disk cache behaviour that needs other processes: a writer killed in the middle of a write,
/// two processes writing one folder, a process that may not write, a process out of space.
/// The child is the `alcedo` tool's hidden `cache debug-write` command.
@Suite("DiskStorage processes", .enabled(if: ChildProcess.isAvailable, "the alcedo executable was not found next to the tests"))
struct DiskStorageProcessTests {
    let folder: TemporaryDirectory

    init() throws {
        folder = try TemporaryDirectory()
    }

    private var cacheURL: URL { folder.url.appendingPathComponent("cache", isDirectory: true) }

    /// What `debug-write` stores for `key`: `key|writer|` repeated to `size` bytes.
    private func childBytes(key: String, writer: Int, size: Int) -> Data {
        let unit = Array("\(key)|\(writer)|".utf8)
        return Data((0..<size).map { unit[$0 % unit.count] })
    }

    private func temporaryFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: cacheURL.path).filter { $0.hasPrefix(DiskStorage.EntryStore.temporaryPrefix) }
    }

    @Test func writerKilledMidWriteLeavesThePreviousEntryWhole() async throws {
        let storage = DiskStorage.EntryStore(config: .init(folderURL: cacheURL))
        let previous = childBytes(key: "photo", writer: 0, size: 50_000)
        try storage.store(value: previous, forKey: "photo")

        for key in ["photo", "fresh"] {
            let child = try ChildProcess(["cache", "debug-write", "--cache-dir", cacheURL.path, "--key", key,
                                          "--size", "2000000", "--writer", "1", "--pause-mid-write"])
            let line = try #require(await child.nextLine())
            #expect(line.hasPrefix("PAUSED "))
            let temporaryPath = String(line.dropFirst("PAUSED ".count))
            let partial = try #require(try FileManager.default.attributesOfItem(atPath: temporaryPath)[.size] as? Int)
            #expect(partial > 0 && partial < 2_000_000, "the child is in the middle of the write")
            await child.kill()
        }

        // A new backend (as after a restart) sees the old entry, whole, and no trace of the new ones.
        let reopened = DiskStorage.EntryStore(config: .init(folderURL: cacheURL))
        #expect(try reopened.value(forKey: "photo") == previous)
        #expect(try reopened.value(forKey: "fresh") == nil)
        #expect(try temporaryFiles().count == 2)
        // The leftovers go once they are older than the temporary file lifetime.
        let later = DiskStorage.EntryStore(config: .init(folderURL: cacheURL, temporaryFileLifetime: 0,
                                                      now: { Date().addingTimeInterval(1) }))
        #expect(try later.cleanUp().temporaryFiles == 2)
        #expect(try temporaryFiles().isEmpty)
        #expect(try later.value(forKey: "photo") == previous)
    }

    @Test func twoProcessesWritingOneFolderCorruptNothing() async throws {
        let size = 3_000
        let count = 250
        let children = try [1, 2].map { writer in
            try ChildProcess(["cache", "debug-write", "--cache-dir", cacheURL.path, "--key-prefix", "shared-",
                              "--count", "\(count)", "--size", "\(size)", "--writer", "\(writer)"])
        }
        // Once both children are writing, this process writes the same keys too, as writer 0.
        var firstLines: [String] = []
        for child in children { firstLines.append(try #require(await child.nextLine())) }
        let storage = DiskStorage.EntryStore(config: .init(folderURL: cacheURL))
        for index in 0..<count {
            let key = "shared-\(index)"
            try storage.store(value: childBytes(key: key, writer: 0, size: size), forKey: key)
            _ = try storage.value(forKey: "shared-\((index * 7) % count)")
        }
        for (child, firstLine) in zip(children, firstLines) {
            let (lines, status) = await child.finish()
            #expect(status == 0)
            let records = ChildProcess.records([firstLine] + lines)
            #expect(records.count == count)
            #expect(records.allSatisfy { $0["stored"] == "true" })
        }
        let reopened = DiskStorage.EntryStore(config: .init(folderURL: cacheURL))
        var writers: Set<Int> = []
        for index in 0..<count {
            let key = "shared-\(index)"
            let data = try #require(try reopened.value(forKey: key), "\(key) is there")
            let writer = (0...2).first { data == childBytes(key: key, writer: $0, size: size) }
            #expect(writer != nil, "\(key) is one writer's entry, whole")
            if let writer { writers.insert(writer) }
        }
        #expect(try temporaryFiles().isEmpty)
        #expect(try reopened.statistics().entryCount == count)
        #expect(!writers.isEmpty)
    }

    /// `true` when every folder above the temporary directory lets other users through, so a
    /// child that gave up root can reach the test folders.
    static var temporaryDirectoryIsTraversable: Bool {
        var url = FileManager.default.temporaryDirectory.standardizedFileURL
        while url.path != "/" {
            var info = stat()
            guard stat(url.path, &info) == 0, info.st_mode & S_IXOTH != 0 else { return false }
            url.deleteLastPathComponent()
        }
        return true
    }

    @Test(.enabled(if: temporaryDirectoryIsTraversable, "the temporary directory is closed to other users"))
    func readOnlyFolderGivesATypedErrorAndMemoryKeepsWorking() async throws {
        let storage = DiskStorage.EntryStore(config: .init(folderURL: cacheURL))
        let existing = childBytes(key: "existing", writer: 0, size: 5_000)
        try storage.store(value: existing, forKey: "existing")
        #expect(chmod(cacheURL.path, 0o555) == 0)
        defer { _ = chmod(cacheURL.path, 0o755) }
        // Root writes anywhere: the child gives up root first (it needs a folder it may traverse).
        if geteuid() == 0 { #expect(chmod(folder.url.path, 0o755) == 0) }

        let child = try ChildProcess(["cache", "debug-write", "--cache-dir", cacheURL.path, "--drop-privileges",
                                      "--read", "existing", "--key", "new", "--size", "1000"])
        let (lines, status) = await child.finish()
        try #require(status != 3, "the child could not give up root privileges")
        #expect(status == 0)
        let records = ChildProcess.records(lines)
        #expect(records.first == ["read": "existing", "found": "true", "bytes": "5000"],
                "a read-only folder is still read")
        #expect(records.last?["key"] == "new")
        #expect(records.last?["stored"] == "false")
        #expect(records.last?["error"] == "readOnly")
        #expect(records.last?["inMemory"] == "true", "the memory cache keeps working")
        #expect(try storage.value(forKey: "new") == nil)
        #expect(try temporaryFiles().isEmpty)
    }

    @Test func fullDiskGivesATypedErrorAndLeavesNothingBehind() async throws {
        let storage = DiskStorage.EntryStore(config: .init(folderURL: cacheURL))
        try storage.store(value: childBytes(key: "big", writer: 0, size: 500), forKey: "big")
        // The child may not write files over 4,000 bytes: the write fails as on a full disk.
        let child = try ChildProcess(["cache", "debug-write", "--cache-dir", cacheURL.path, "--file-size-limit", "4000",
                                      "--key", "big", "--key", "small", "--size", "20000"],
                                     environment: ChildProcess.limitedFileSizeEnvironment(profileFolder: folder.url))
        let (lines, status) = await child.finish()
        #expect(status == 0)
        let records = ChildProcess.records(lines)
        #expect(records.count == 2)
        for record in records {
            #expect(record["stored"] == "false")
            #expect(record["error"] == "diskFull")
            #expect(record["inMemory"] == "true")
        }
        #expect(try temporaryFiles().isEmpty, "the partial temporary file is removed")
        let reopened = DiskStorage.EntryStore(config: .init(folderURL: cacheURL))
        #expect(try reopened.value(forKey: "big") == childBytes(key: "big", writer: 0, size: 500), "the old entry is intact")
        #expect(try reopened.value(forKey: "small") == nil)
    }

    @Test func cacheCommandReportsAndCleans() async throws {
        // Stored "10 s ago": k0, with a life of 1 s, has expired for the child.
        let clock = TestClock(Date().addingTimeInterval(-10))
        let storage = DiskStorage.EntryStore(config: .init(folderURL: cacheURL, now: clock.function))
        for index in 0..<4 {
            try storage.store(value: Data(count: 1_000), forKey: "k\(index)", expiration: index == 0 ? .seconds(1) : .never)
        }
        let stats = try await runJSON(["cache", "stats", "--cache-dir", cacheURL.path, "--size-limit", "3000", "--json"])
        #expect(stats["entryCount"] as? Int == 4)
        #expect(stats["expiredCount"] as? Int == 1)
        #expect(stats["totalSize"] as? Int == (try storage.totalSize()))
        #expect(stats["sizeLimit"] as? Int == 3_000)
        #expect(stats["lowWaterMark"] as? Int == 1_500)
        let path = try await runJSON(["cache", "path", "k1", "--cache-dir", cacheURL.path, "--json"])
        #expect(path["path"] as? String == storage.cacheFileURL(forKey: "k1").path)
        #expect(path["cached"] as? Bool == true)
        #expect(path["size"] as? Int == 1_000)
        let clean = try await runJSON(["cache", "clean", "--cache-dir", cacheURL.path, "--size-limit", "3000", "--json"])
        #expect(clean["expired"] as? [String] == [storage.hash(forKey: "k0")])
        #expect((clean["sizeLimit"] as? [String])?.count ?? 0 >= 1)
        let after = try await runJSON(["cache", "stats", "--cache-dir", cacheURL.path, "--json"])
        #expect((after["totalSize"] as? Int ?? .max) <= 1_500)
        _ = try await runJSON(["cache", "clear", "--cache-dir", cacheURL.path, "--json"])
        #expect(try await runJSON(["cache", "stats", "--cache-dir", cacheURL.path, "--json"])["entryCount"] as? Int == 0)
        let text = try ChildProcess(["cache", "path", "a/../b", "--cache-dir", cacheURL.path])
        let (lines, _) = await text.finish()
        #expect(lines == [storage.cacheFileURL(forKey: "a/../b").path])
    }

    private func runJSON(_ arguments: [String]) async throws -> [String: Any] {
        let (lines, status) = try await ChildProcess(arguments).finish()
        #expect(status == 0, "alcedo \(arguments.joined(separator: " "))")
        let object = try JSONSerialization.jsonObject(with: Data((lines.first ?? "{}").utf8))
        return object as? [String: Any] ?? [:]
    }
}

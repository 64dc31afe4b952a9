@testable import Alcedo
@testable import AlcedoServer
import AlcedoTestSupport
import Foundation
import Testing

/// The cache folder's disk fills up while the server is busy, on a real 2 MB tmpfs.
@Suite("Server: the cache disk fills up under load")
struct ServerDiskFullTests {
    static let notWarning = "disk cache not working"
    static let writableAgain = "disk cache writable again"

    @Test(.enabled(if: TinyDisk.canMount, "mounting a tmpfs is not permitted here (needs root or CAP_SYS_ADMIN)"))
    func requestsAreAnsweredWithoutCachingAndEachStateChangeIsLoggedOnce() async throws {
        let disk = try #require(await offPool { TinyDisk.mount(megabytes: 2) })
        defer { disk.unmount() }
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        for index in 0..<8 {
            origin.route("/p\(index).jpg", .ok(TestImages.jpeg(width: 320 + 8 * index, height: 240), contentType: "image/jpeg"))
        }
        let logs = CapturedLog()
        let cache = disk.folder.appendingPathComponent("cache")
        let harness = try await ServerHarness.start {
            $0.cacheDirectory = cache
            $0.logger = logs.logger
            // Every request goes through the pipeline and its disk writes.
            $0.resultCacheBytes = 0
        }
        defer { Task { await harness.stop() } }
        func entries() -> Int {
            (FileManager.default.enumerator(at: cache, includingPropertiesForKeys: nil)?.allObjects.count) ?? 0
        }
        func lines(_ text: String) -> Int { logs.messages.filter { $0.contains(text) }.count }
        func load(widths: ClosedRange<Int>) async throws -> [Int] {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<8 {
                    for width in widths {
                        group.addTask {
                            try await harness.request(harness.path(origin.url("/p\(index).jpg"), "w:\(width)")).status
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        // Caching works at first.
        #expect(try await harness.request(harness.path(origin.url("/p0.jpg"), "w:10")).status == 200)
        let cachedAtFirst = entries()
        #expect(cachedAtFirst >= 1)

        // The disk fills up: requests are still answered, and one line says so.
        let filler = await offPool { disk.fill() }
        let duringFull = try await load(widths: 20...22)
        #expect(duringFull.count == 24 && duringFull.allSatisfy { $0 == 200 }, "\(duringFull)")
        #expect(lines(Self.notWarning) == 1, "\(logs.all)")
        #expect(lines(Self.writableAgain) == 0)
        #expect(logs.all.contains { $0.hasPrefix("warning: \(Self.notWarning)") })

        // Space again: caching resumes, and one line says so.
        try FileManager.default.removeItem(at: filler)
        let afterFree = try await load(widths: 30...31)
        #expect(afterFree.allSatisfy { $0 == 200 })
        #expect(entries() > cachedAtFirst, "new entries are written again")
        #expect(lines(Self.writableAgain) == 1, "\(logs.all)")
        #expect(lines(Self.notWarning) == 1)
        // Nothing half-written was left behind by the failed writes.
        let names = FileManager.default.enumerator(at: cache, includingPropertiesForKeys: nil)?
            .compactMap { ($0 as? URL)?.lastPathComponent } ?? []
        #expect(!names.contains { $0.hasPrefix(DiskStorage.EntryStore.temporaryPrefix) }, "\(names)")
    }
}

import Alcedo
import Foundation
import Testing
@testable import AlcedoRedis
#if canImport(Glibc)
import Glibc
#endif

/// A PNG of `width` x `height` made by Alcedo's own encoder.
func testPNG(width: Int = 12, height: Int = 8, seed: Int = 0) throws -> (AlcedoImage, Data) {
    var pixels = [UInt8](repeating: 255, count: width * height * 4)
    for index in stride(from: 0, to: pixels.count, by: 4) {
        pixels[index] = UInt8(truncatingIfNeeded: index &* 7 &+ seed)
        pixels[index + 1] = UInt8(truncatingIfNeeded: index &* 3 &+ seed &* 5)
    }
    let image = AlcedoImage(width: width, height: height, pixels: pixels, sourceFormat: .png)
    return (image, try ImageCodecRegistry.shared.encode(image, as: .png))
}

final class TempFolder: Sendable {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-redis-cache-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
}

@Suite("Redis tier through ImageCache", .enabled(if: RedisTestServer.isAvailable, "redis-server is not installed"))
struct RedisTierThroughImageCacheTests {
    @Test func twoCachesWithTheirOwnDisksShareImagesThroughRedis() async throws {
        let server = try await RedisTestServer.start()
        let folder = try TempFolder()
        let storage = try testConfiguration([server])
        defer { storage.shutdown() }
        try await storage.start()
        let a = ImageCache(name: "node-a", cacheDirectoryURL: folder.url, sharedTier: SharedCacheTier(storage: storage))
        let b = ImageCache(name: "node-b", cacheDirectoryURL: folder.url, sharedTier: SharedCacheTier(storage: storage))
        let (image, png) = try testPNG()
        try await a.store(image, original: png, forKey: "https://origin/a.png")
        let found = try await b.retrieveImage(forKey: "https://origin/a.png")
        #expect(found.cacheType == .disk)
        #expect(found.image?.pixels == image.pixels)
        #expect(b.sharedTier?.statistics.hits == 1)
        #expect(try await b.retrieveDataInDiskCache(forKey: "https://origin/a.png")?.data == png, "written back to B's disk")
        try await b.removeImage(forKey: "https://origin/a.png")
        #expect(try await storage.entry(forKey: "https://origin/a.png") == nil)
    }

    /// kill -9 in the middle of a load, then a restart: no call fails, the tier's failures are
    /// misses, and once Redis is back the tier stores and serves again.
    @Test func redisKilledMidLoadAndRestartedFailsNoRequestAndResumes() async throws {
        let server = try await RedisTestServer.start()
        let folder = try TempFolder()
        let storage = try testConfiguration([server]) {
            $0.circuitBreaker = .init(failureThreshold: 3, openDuration: .milliseconds(200))
            $0.reconnectBackoff = .milliseconds(10)
            $0.maxReconnectBackoff = .milliseconds(100)
        }
        defer { storage.shutdown() }
        let tier = SharedCacheTier(storage: storage, config: .init(coalescesWork: false, recoveryQuietPeriod: .zero))
        let writer = ImageCache(name: "writer", cacheDirectoryURL: folder.url, sharedTier: tier)
        let reader = ImageCache(name: "reader", cacheDirectoryURL: folder.url, sharedTier: tier)
        let (image, png) = try testPNG()
        var failures = 0
        for index in 0..<150 {
            if index == 40 { server.kill9() }
            if index == 90 { try await server.launch() }
            do {
                try await writer.store(image, original: png, forKey: "k\(index)")
                _ = try await reader.retrieveImage(forKey: "k\(index)")
                _ = try await reader.retrieveImage(forKey: "k\(index - 1)")
            } catch {
                failures += 1
            }
        }
        #expect(failures == 0, "no request fails while Redis is down")
        #expect(tier.statistics.errors > 0, "the outage was seen and counted")

        // Resumed: wait for the breaker's probe, then a store from one cache is a hit in another.
        let fresh = ImageCache(name: "fresh", cacheDirectoryURL: folder.url, sharedTier: tier)
        var resumed = false
        let deadline = ContinuousClock.now + .seconds(300)
        var attempt = 0
        while !resumed, ContinuousClock.now < deadline {
            attempt += 1
            try await writer.store(image, original: png, forKey: "after\(attempt)")
            resumed = try await fresh.retrieveImage(forKey: "after\(attempt)").cacheType == .disk
            if !resumed { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(resumed, "the tier serves again after the restart")
        #expect(!tier.isFailing)
    }

    /// SIGSTOP: the node accepts connections but never answers. Each command waits at most the
    /// timeout, and after K failures the breaker skips the node, so requests stop waiting at all.
    @Test func aStalledRedisCostsAtMostKTimeoutsThenTheBreakerSkipsIt() async throws {
        let server = try await RedisTestServer.start()
        let folder = try TempFolder()
        let storage = try testConfiguration([server]) {
            $0.getTimeout = .milliseconds(50)
            $0.writeTimeout = .milliseconds(50)
            // A stopped process's kernel still accepts connections, so only the commands wait
            // for it; a generous connect deadline keeps a loaded machine from failing the
            // connection itself before any command is sent.
            $0.connectTimeout = .seconds(10)
            $0.circuitBreaker = .init(failureThreshold: 3, openDuration: .seconds(30))
        }
        defer { storage.shutdown() }
        let tier = SharedCacheTier(storage: storage, config: .init(coalescesWork: false))
        let cache = ImageCache(name: "stalled", cacheDirectoryURL: folder.url, sharedTier: tier)
        // The server works (checked with generous timeouts), then stalls.
        let check = try testConfiguration([server])
        defer { check.shutdown() }
        try await check.start()

        server.signal(SIGSTOP)
        defer { server.signal(SIGCONT) }
        for index in 0..<30 {
            let result = try await cache.retrieveImage(forKey: "cold\(index)")
            #expect(result.cacheType == .none)
        }
        let node = storage.nodeStatistics[0]
        #expect(node.breakerState == "open")
        #expect(node.failures == 3, "only K commands waited for the stalled node: \(node)")
        #expect(node.timeouts >= 1)
        #expect(node.skipped == 27, "the rest were skipped at once: \(node)")
        #expect(tier.statistics.misses == 30)
    }
}

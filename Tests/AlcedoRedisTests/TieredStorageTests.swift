import Alcedo
import AlcedoServer
import AlcedoTestSupport
import Foundation
import Testing
@testable import AlcedoRedis

/// Redis in front of a result store (a folder), both real: the store answers what Redis lost or
/// cannot give, and a store hit goes back to Redis.
@Suite("Redis in front of a result store", .serialized, .enabled(if: RedisTestServer.isAvailable, "redis-server is not installed"))
struct TieredStorageTests {
    @Test func theStoreAnswersWhatRedisLostOrCannotGiveAndRedisIsRefilled() async throws {
        let server = try await RedisTestServer.start()
        defer { server.kill9() }
        let redis = try testConfiguration([server]) { $0.getTimeout = .seconds(5) }
        defer { redis.shutdown() }
        try await redis.start()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-tiered-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let results = ObjectStoreTier(store: FolderObjectStore(root: folder), kind: .results)
        let storage = TieredSharedStorage(front: redis, results: results)
        let key = "http://example.com/a.jpg@com.alcedo.imgproxy(w100)|webp"
        let stored = entry(key)

        #expect(try await storage.store(stored, forKey: key))
        await results.flush()
        #expect(results.statistics.writes == 1)
        #expect(try await storage.entry(forKey: key)?.data == stored.data, "from Redis")
        #expect(results.statistics.hits == 0)

        // Redis forgets (a flush, an eviction): the store answers, and Redis has it again.
        try await redis.removeEntry(forKey: key)
        #expect(try await storage.entry(forKey: key)?.data == stored.data)
        #expect(results.statistics.hits == 1)
        var refilled: SharedCacheEntry?
        for _ in 0..<100 where refilled == nil {
            refilled = try await redis.entry(forKey: key)
            if refilled == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(refilled?.data == stored.data)

        // Redis down: the store still answers; a key neither has is Redis's error (a miss upstream).
        server.kill9()
        #expect(try await storage.entry(forKey: key)?.data == stored.data)
        await #expect(throws: AlcedoError.self) {
            _ = try await storage.entry(forKey: "http://example.com/b.jpg@com.alcedo.imgproxy(w100)|webp")
        }
        // An original's key goes to the source store, of which there is none.
        #expect(storage.store(forKey: "http://example.com/a.jpg") == nil)
    }

    @Test func eachLookupIsAStageOfTheRequestItServes() async throws {
        let server = try await RedisTestServer.start()
        defer { server.kill9() }
        let redis = try testConfiguration([server])
        defer { redis.shutdown() }
        try await redis.start()
        let store = FolderObjectStore(root: FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-tiers-\(UUID().uuidString)"))
        defer { try? FileManager.default.removeItem(at: store.root) }
        let results = ObjectStoreTier(store: store, kind: .results)
        let storage = TieredSharedStorage(front: redis, results: results)
        let key = "http://example.com/c.jpg@com.alcedo.imgproxy(w50)|png"
        #expect(try await storage.store(entry(key), forKey: key))
        await results.flush()

        let stages = RequestStages(requestID: "tiers")
        try await Self.lookUp(key, in: storage, recordingIn: stages)     // a Redis hit
        try await redis.removeEntry(forKey: key)
        try await Self.lookUp(key, in: storage, recordingIn: stages)     // a Redis miss, a store hit
        try await Self.lookUp(key, in: storage, recordingIn: nil)        // outside a request: nothing recorded
        let records = stages.records
        #expect(records.map(\.name) == [.cacheRedis, .cacheRedis, .cacheResultStore])
        #expect(records.map { Self.hit(of: $0) } == ["true", "false", "true"])
        #expect(records.allSatisfy { $0.end >= $0.start && $0.error == nil })
    }

    /// One lookup of `key`, inside the request `stages` when given.
    static func lookUp(_ key: String, in storage: TieredSharedStorage, recordingIn stages: RequestStages?) async throws {
        _ = try await RequestStages.$current.withValue(stages) { try await storage.entry(forKey: key) }
    }

    /// A record's `hit` attribute.
    static func hit(of record: StageRecord) -> String? {
        record.attributes.first { $0.0 == "hit" }?.1
    }
}

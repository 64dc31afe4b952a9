import Alcedo
import Foundation
import Testing
@testable import AlcedoRedis

@Suite("alcedo cache stats --redis", .enabled(if: RedisTestServer.isAvailable, "redis-server is not installed"))
struct CacheStatsCommandTests {
    @Test func showsKeysAndMemoryOfEveryNodeFromINFO() async throws {
        let one = try await RedisTestServer.start(["--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"])
        let two = try await RedisTestServer.start()
        let storage = try testConfiguration([one, two])
        defer { storage.shutdown() }
        for index in 0..<40 { #expect(try await storage.store(entry("k\(index)"), forKey: "k\(index)")) }
        var counts = [0, 0]
        for index in 0..<40 { counts[storage.nodeIndex(forKey: "k\(index)")] += 1 }
        let folder = try TempFolder()

        let text = try AlcedoExecutable.run(["cache", "stats", "--cache-dir", folder.url.path, "--redis", one.url, "--redis", two.url])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("redis:       \(one.url): \(counts[0]) keys"), "\(text.stdout)")
        #expect(text.stdout.contains("max 67.1 MB (67108864 bytes)"), "\(text.stdout)")
        #expect(text.stdout.contains("policy allkeys-lru"))
        #expect(text.stdout.contains("redis:       \(two.url): \(counts[1]) keys"))

        // The environment variable, JSON, and a node that is down reported, not fatal.
        let down = "redis://127.0.0.1:\(try RedisTestServer.freePort())"
        let json = try AlcedoExecutable.run(["cache", "stats", "--cache-dir", folder.url.path, "--json"],
                                            environment: ["ALCEDO_REDIS": "\(one.url), \(down)"])
        #expect(json.status == 0, "\(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let nodes = try #require(object["redis"] as? [[String: Any]])
        #expect(nodes.count == 2)
        #expect(nodes[0]["keys"] as? Int == counts[0])
        #expect(nodes[0]["maxMemoryPolicy"] as? String == "allkeys-lru")
        #expect((nodes[1]["error"] as? String)?.contains("cannot connect") == true)
        #expect(object["disk"] != nil)
    }
}

import Alcedo
import AlcedoTestSupport
import Foundation
import Logging
import NIOCore
import Synchronization
import Testing
@testable import AlcedoRedis
#if canImport(Glibc)
import Glibc
#endif

/// Settings for tests: timeouts generous enough for a loaded machine unless a test is about them.
func testConfiguration(_ servers: [RedisTestServer], path: String = "", logger: Logger = Logger(label: "test.redis"),
                       _ configure: (inout RedisConfiguration) -> Void = { _ in }) throws -> RedisSharedStorage {
    var configuration = try RedisConfiguration(urls: servers.map { $0.url + path })
    configuration.getTimeout = .seconds(20)
    configuration.writeTimeout = .seconds(20)
    configuration.connectTimeout = .seconds(20)
    configuration.logger = logger
    configure(&configuration)
    return try RedisSharedStorage(configuration: configuration)
}

func entry(_ key: String, size: Int = 100, expiresIn: TimeInterval = 600) -> SharedCacheEntry {
    SharedCacheEntry(data: Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ key.utf8.count) }),
                     metadata: .init(key: key, expirationDate: Date().addingTimeInterval(expiresIn),
                                     httpCacheInfo: HTTPCacheInfo(etag: "\"\(key)\""), format: .png))
}

@Suite("Redis shared storage", .enabled(if: RedisTestServer.isAvailable, "redis-server is not installed"))
struct RedisSharedStorageTests {
    @Test func storesReadsAndRemovesEntriesWithTheirMetadataAndExpiry() async throws {
        let server = try await RedisTestServer.start()
        let storage = try testConfiguration([server])
        defer { storage.shutdown() }
        try await storage.start()
        let stored = entry("a@p", expiresIn: 60)
        #expect(try await storage.store(stored, forKey: "a@p"))
        #expect(try await storage.entry(forKey: "a@p") == stored)
        #expect(try await storage.entry(forKey: "missing") == nil)

        let node = storage.nodes[0]
        let ttl = try await node.execute([["PTTL", .string(storage.redisKey(forKey: "a@p"))]], timeout: .seconds(2), name: "PTTL")[0]
        #expect((50_000...60_000).contains(ttl.integer ?? 0), "PX from the entry's expiration: \(ttl)")

        var forever = entry("f")
        forever.metadata.expirationDate = .distantFuture
        #expect(try await storage.store(forever, forKey: "f"))
        let noTTL = try await node.execute([["PTTL", .string(storage.redisKey(forKey: "f"))]], timeout: .seconds(2), name: "PTTL")[0]
        #expect(noTTL.integer == -1)
        #expect(try await storage.store(entry("old", expiresIn: -5), forKey: "old") == false, "an expired entry is not stored")

        try await storage.removeEntry(forKey: "a@p")
        #expect(try await storage.entry(forKey: "a@p") == nil)
    }

    @Test func valuesOverTheLimitAreNotStored() async throws {
        let server = try await RedisTestServer.start()
        let storage = try testConfiguration([server]) { $0.maxValueSize = 10_000 }
        defer { storage.shutdown() }
        #expect(try await storage.store(entry("big", size: 20_000), forKey: "big") == false)
        #expect(try await storage.entry(forKey: "big") == nil)
        #expect(try await storage.store(entry("small", size: 5_000), forKey: "small"))
    }

    @Test func aValueThatFailsItsChecksumIsAMissAndIsDeleted() async throws {
        let server = try await RedisTestServer.start()
        let storage = try testConfiguration([server])
        defer { storage.shutdown() }
        #expect(try await storage.store(entry("c"), forKey: "c"))
        let key = storage.redisKey(forKey: "c")
        let node = storage.nodes[0]
        guard case .bulkString(var value?) = try await node.execute([["GET", .string(key)]], timeout: .seconds(2), name: "GET")[0] else {
            Issue.record("stored value")
            return
        }
        var bytes = Array(value.readableBytesView)
        bytes[bytes.count - 3] ^= 0xFF
        value = ByteBuffer(bytes: bytes)
        _ = try await node.execute([["SET", .string(key), .bytes(value)]], timeout: .seconds(2), name: "SET")
        #expect(try await storage.entry(forKey: "c") == nil)
        #expect(storage.rejectedEntries == 1)
        let exists = try await node.execute([["EXISTS", .string(key)]], timeout: .seconds(2), name: "EXISTS")[0]
        #expect(exists.integer == 0, "the bad value is deleted")

        // Garbage that is not an Alcedo entry at all, too.
        _ = try await node.execute([["SET", .string(key), "hello"]], timeout: .seconds(2), name: "SET")
        #expect(try await storage.entry(forKey: "c") == nil)
        #expect(storage.rejectedEntries == 2)
    }

    @Test func manyCommandsArePipelinedOnOneConnection() async throws {
        let server = try await RedisTestServer.start()
        let storage = try testConfiguration([server]) { $0.connectionsPerNode = 1 }
        defer { storage.shutdown() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<300 {
                group.addTask { () async throws -> Void in
                    let key = "k\(index)"
                    let stored = try await storage.store(entry(key, size: index), forKey: key)
                    #expect(stored)
                    let read = try await storage.entry(forKey: key)
                    #expect(read?.data == entry(key, size: index).data)
                    #expect(read?.metadata.key == key)
                }
            }
            try await group.waitForAll()
        }
        #expect(storage.nodeStatistics[0].connects == 1)
        #expect(storage.nodeStatistics[0].commands == 600)
        let replies = try await storage.nodes[0].execute((0..<50).map { [RedisArgument.string("ECHO"), .string("m\($0)")] },
                                                         timeout: .seconds(2), name: "ECHO")
        #expect(replies.map(\.string) == (0..<50).map { "m\($0)" })
    }

    @Test func locksAreExclusiveAndReleasedOnlyByTheirHolder() async throws {
        let server = try await RedisTestServer.start()
        let one = try testConfiguration([server]), two = try testConfiguration([server])
        defer { one.shutdown(); two.shutdown() }
        // Locks long enough that a loaded machine cannot let one expire between the checks.
        #expect(try await one.acquireLock(forKey: "v", duration: .seconds(600)))
        #expect(try await two.acquireLock(forKey: "v", duration: .seconds(600)) == false)
        try await two.releaseLock(forKey: "v")  // not its lock: no effect
        #expect(try await two.acquireLock(forKey: "v", duration: .seconds(600)) == false)
        try await one.releaseLock(forKey: "v")
        #expect(try await two.acquireLock(forKey: "v", duration: .seconds(600)))
        #expect(try await one.acquireLock(forKey: "short", duration: .milliseconds(50)))
        try await Task.sleep(for: .milliseconds(120))
        #expect(try await two.acquireLock(forKey: "short", duration: .seconds(5)), "a lock expires with its PX")
    }

    @Test func authenticationFailureIsATypedErrorAtStartAndAClearLogLine() async throws {
        let server = try await RedisTestServer.start(["--requirepass", "s3cret"])
        let logs = CapturedLog()
        let wrong = try RedisSharedStorage(configuration: {
            var c = try RedisConfiguration(urls: ["redis://default:nope@127.0.0.1:\(server.port)"])
            c.connectTimeout = .seconds(2)
            c.logger = logs.logger
            return c
        }())
        defer { wrong.shutdown() }
        await #expect {
            try await wrong.start()
        } throws: { error in
            guard case .cacheError(.cannotLoadDataFromDisk(_, .sharedStorageError(.authenticationFailed(let node, let message)))) = error as? AlcedoError else { return false }
            return node == "redis://127.0.0.1:\(server.port)" && message.contains("WRONGPASS")
        }
        #expect(logs.all.contains { $0.hasPrefix("error:") && $0.contains("refused the configured login") && $0.contains("WRONGPASS") },
                "\(logs.all)")
        #expect(!logs.all.joined().contains("nope"), "the password is never logged")

        let none = try testConfiguration([server])
        defer { none.shutdown() }
        await #expect {
            try await none.start()
        } throws: { error in
            if case .cacheError(.cannotLoadDataFromDisk(_, .sharedStorageError(.authenticationFailed(_, let message)))) = error as? AlcedoError {
                return message.hasPrefix("NOAUTH")
            }
            return false
        }

        // Generous deadlines (the defaults are 500 ms to connect, 250 ms for a write): beside
        // the whole suite the connect, AUTH, SELECT and SET round trips can take longer, and this
        // part checks the login and the database, not speed.
        let right = try RedisSharedStorage(configuration: {
            var c = try RedisConfiguration(urls: ["redis://default:s3cret@127.0.0.1:\(server.port)/2"])
            c.connectTimeout = .seconds(60)
            c.writeTimeout = .seconds(60)
            c.getTimeout = .seconds(60)
            return c
        }())
        defer { right.shutdown() }
        try await right.start()
        #expect(try await right.store(entry("x"), forKey: "x"))
        let size = try await right.nodes[0].execute([["DBSIZE"]], timeout: .seconds(60), name: "DBSIZE")[0]
        #expect(size.integer == 1, "SELECT 2 put the key in database 2")
        let info = await right.serverInfo()
        let node = try info[0].get()
        #expect(node.keys == 1)
        #expect(node.usedMemory > 0)
    }

    @Test func threeNodesShareTheKeysAndLosingOneTurnsItsShareIntoMisses() async throws {
        let servers = [try await RedisTestServer.start(), try await RedisTestServer.start(), try await RedisTestServer.start()]
        // The breaker stays open and the tier is not declared recovered for longer than any loaded
        // runner takes over the loop below (the claim is about logging, not about recovery).
        let storage = try testConfiguration(servers) { $0.circuitBreaker = .init(failureThreshold: 1, openDuration: .seconds(600)) }
        defer { storage.shutdown() }
        let keys = (0..<300).map { "https://origin/\($0).jpg@v" }
        for key in keys { #expect(try await storage.store(entry(key), forKey: key)) }
        var expected = [0, 0, 0]
        for key in keys { expected[storage.nodeIndex(forKey: key)] += 1 }
        for (index, node) in storage.nodes.enumerated() {
            let size = try await node.execute([["DBSIZE"]], timeout: .seconds(2), name: "DBSIZE")[0]
            #expect(size.integer == Int64(expected[index]))
            #expect(expected[index] > 60, "each node holds a share: \(expected)")
        }

        servers[1].kill9()
        let logs = CapturedLog()
        let tier = SharedCacheTier(storage: storage, config: .init(coalescesWork: false, recoveryQuietPeriod: .seconds(600), logger: logs.logger))
        var hits = 0, misses = 0
        for key in keys {
            if await tier.entry(forKey: key) != nil { hits += 1 } else {
                misses += 1
                #expect(storage.nodeIndex(forKey: key) == 1)
            }
        }
        #expect(misses == expected[1])
        #expect(hits == expected[0] + expected[2])
        #expect(storage.nodeStatistics[1].breakerState == "open")
        #expect(logs.all.count == 1, "a partly failing tier logs once, not at every request: \(logs.all)")
    }
}

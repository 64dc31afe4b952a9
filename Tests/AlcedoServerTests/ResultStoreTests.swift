import Alcedo
@testable import AlcedoServer
import AlcedoTestSupport
import Foundation
import Testing

/// The result store and the source store: variants and originals kept in a folder or in S3
/// (moto, authentication on) outlive the server; a store that is down or slow costs no request.
@Suite("Result store: variants that outlive the server", .serialized)
struct ResultStoreTests {
    static let lastModified = "Wed, 21 Oct 2026 07:28:00 GMT"

    /// An origin with one JPEG that has validators and an hour of freshness.
    static func origin() async throws -> TestHTTPServer {
        let origin = try await TestHTTPServer.start()
        var response = TestHTTPServer.Response.ok(TestImages.jpeg(width: 320, height: 240), contentType: "image/jpeg")
            .header("Cache-Control", "max-age=3600")
        response.etag = "\"source-v1\""
        response.lastModified = lastModified
        origin.route("/p.jpg", response)
        return origin
    }

    static func temporaryFolder(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-\(name)-\(UUID().uuidString)")
    }

    /// Serves one variant from a server with `results` (and `sources`), then from a second
    /// server (a fresh disk cache) on new tiers over the same stores: the second processes
    /// nothing, downloads nothing, and answers with the same bytes, ETag, Last-Modified and 304s.
    func checkSurvivesRestart(results: @escaping @Sendable () -> ObjectStoreTier, sources: (@Sendable () -> ObjectStoreTier)? = nil) async throws {
        let origin = try await Self.origin()
        defer { origin.stop() }
        let firstResults = results(), firstSources = sources?()
        let first = try await ServerHarness.start {
            $0.resultStore = firstResults
            $0.sourceStore = firstSources
        }
        let path = first.path(origin.url("/p.jpg"), "rs:fit:100:100/q:70", ext: "webp")
        let fresh = try await first.request(path)
        #expect(fresh.status == 200 && fresh.format == .webp)
        #expect(first.service.metrics.processingRunCount == 1)
        await firstResults.flush()
        await firstSources?.flush()
        #expect(firstResults.statistics.writes == 1)
        if let firstSources { #expect(firstSources.statistics.writes == 1) }
        await first.stop()

        let secondResults = results(), secondSources = sources?()
        let second = try await ServerHarness.start {
            $0.resultStore = secondResults
            $0.sourceStore = secondSources
        }
        let stored = try await second.request(path)
        #expect(stored.status == 200)
        #expect(stored.body == fresh.body)
        #expect(stored.header("Content-Type") == "image/webp")
        #expect(stored.header("ETag") != nil && stored.header("ETag") == fresh.header("ETag"))
        #expect(stored.header("Last-Modified") == Self.lastModified)
        #expect(second.service.metrics.processingRunCount == 0, "the stored variant is not processed again")
        #expect(secondResults.statistics.hits == 1)
        #expect(origin.requestCount("/p.jpg") == 1, "the source is not downloaded again")
        let etag = try #require(fresh.header("ETag"))
        let revalidated = try await second.request(path, headers: [("If-None-Match", etag)])
        #expect(revalidated.status == 304)
        #expect(revalidated.header("ETag") == etag)
        await second.stop()

        // A third server, another variant of the same source: made from the stored original
        // when there is a source store, else downloaded again.
        let third = try await ServerHarness.start {
            $0.resultStore = results()
            $0.sourceStore = sources?()
        }
        let other = try await third.request(third.path(origin.url("/p.jpg"), "rs:fit:50:50", ext: "png"))
        #expect(other.status == 200 && other.format == .png)
        #expect(third.service.metrics.processingRunCount == 1)
        #expect(origin.requestCount("/p.jpg") == (sources == nil ? 2 : 1))
        await third.stop()
    }

    @Test func aFolderStoreServesVariantsAfterARestart() async throws {
        let folder = Self.temporaryFolder("results")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await checkSurvivesRestart(
            results: { ObjectStoreTier(store: FolderObjectStore(root: folder), kind: .results) },
            sources: { ObjectStoreTier(store: FolderObjectStore(root: folder), kind: .sources) })
    }

    @Test func anS3StoreServesVariantsAfterARestart() async throws {
        let moto = try await MotoS3Server.start(buckets: ["results"], objects: [])
        defer { moto.stop() }
        let client = S3ObjectClient(configuration: S3Configuration(endpoint: moto.endpoint),
                                    credentials: S3Credentials(accessKeyID: moto.accessKeyID, secretAccessKey: moto.secretAccessKey))
        let store = S3ObjectStore(bucket: "results", prefix: "alcedo/", client: client)
        try await checkSurvivesRestart(results: { ObjectStoreTier(store: store, kind: .results) },
                                       sources: { ObjectStoreTier(store: store, kind: .sources) })
        // The objects carry their content type and metadata, and list and purge by source.
        let listed = try await store.list(prefix: "results/", limit: nil)
        #expect(listed.count == 2)
        let object = try #require(try await client.getObject(bucket: "results", key: "alcedo/" + listed[0].name))
        #expect(object.headers["Content-Type"]?.hasPrefix("image/") == true)
        #expect(object.headers["x-amz-meta-alcedo-expires"].flatMap { Double($0) }.map { $0 > Date().timeIntervalSince1970 } == true)
        #expect(object.headers["x-amz-meta-source-etag"] == "\"source-v1\"")
        #expect(object.headers["x-amz-meta-source-last-modified"] == Self.lastModified)
        #expect(try await store.list(prefix: "sources/", limit: nil).count == 1)
        let tier = ObjectStoreTier(store: store, kind: .results)
        let source = "http://127.0.0.1:1/unrelated.jpg"
        #expect(try await tier.purge(prefix: ObjectStoreTier.namePrefix(.results, forSource: source)) == 0)
        #expect(try await tier.purge() == 2)
        #expect(try await store.list(prefix: "results/", limit: nil).isEmpty)
        #expect(try await store.list(prefix: "sources/", limit: nil).count == 1, "purging results leaves the sources")
        // A wrong secret is an error, counted, not a hit.
        let wrong = S3ObjectStore(bucket: "results", prefix: "alcedo/", client: S3ObjectClient(
            configuration: S3Configuration(endpoint: moto.endpoint),
            credentials: S3Credentials(accessKeyID: moto.accessKeyID, secretAccessKey: "not-the-secret")))
        let refused = ObjectStoreTier(store: wrong, kind: .sources)
        #expect(await refused.entry(forKey: "http://example.com/a.jpg") == nil)
        #expect(refused.statistics.errors == 1)
    }

    @Test func storedEntriesExpireAfterTheTTL() async throws {
        let folder = Self.temporaryFolder("ttl")
        defer { try? FileManager.default.removeItem(at: folder) }
        let origin = try await Self.origin()
        defer { origin.stop() }
        let config = ObjectStoreTier.Config(ttl: .seconds(1))
        let first = ObjectStoreTier(store: FolderObjectStore(root: folder), kind: .results, config: config)
        let one = try await ServerHarness.start { $0.resultStore = first }
        let path = one.path(origin.url("/p.jpg"), "rs:fit:80:80")
        #expect(try await one.request(path).status == 200)
        await first.flush()
        await one.stop()
        try await Task.sleep(for: .milliseconds(1500))
        let second = ObjectStoreTier(store: FolderObjectStore(root: folder), kind: .results, config: config)
        let two = try await ServerHarness.start { $0.resultStore = second }
        #expect(try await two.request(path).status == 200)
        #expect(second.statistics.expired == 1 && second.statistics.hits == 0)
        #expect(two.service.metrics.processingRunCount == 1, "an expired entry is made again")
        await two.stop()
    }

    @Test func aStoreThatIsDownCostsNoRequestAndOpensItsBreaker() async throws {
        let origin = try await Self.origin()
        defer { origin.stop() }
        // Nothing listens on this port: every store request fails at once.
        let closed = try MotoS3Server.freePort()
        let client = S3ObjectClient(configuration: S3Configuration(endpoint: URL(string: "http://127.0.0.1:\(closed)")!),
                                    credentials: S3Credentials(accessKeyID: "AKIA", secretAccessKey: "secret"))
        let config = ObjectStoreTier.Config(readTimeout: .milliseconds(300),
                                            breaker: CircuitBreaker.Config(failureThreshold: 3, openDuration: .seconds(30)))
        let tier = ObjectStoreTier(store: S3ObjectStore(bucket: "results", prefix: "", client: client), kind: .results, config: config)
        let server = try await ServerHarness.start { $0.resultStore = tier }
        let clock = ContinuousClock()
        var slowest: Duration = .zero
        for width in 20..<30 {
            let start = clock.now
            let reply = try await server.request(server.path(origin.url("/p.jpg"), "rs:fit:\(width):\(width)"))
            slowest = max(slowest, clock.now - start)
            #expect(reply.status == 200)
        }
        await tier.flush()
        // A bound for a hang, not a timing claim (a loaded runner can take seconds a request).
        #expect(slowest < .seconds(60))
        if case .open = tier.breakerState {} else { Issue.record("the breaker is \(tier.breakerState), not open") }
        #expect(tier.statistics.errors >= 3)
        #expect(tier.statistics.skipped > 0, "once open, the store is not asked")
        let metrics = server.service.metrics.text()
        #expect(metrics.contains("alcedo_store_breaker_state{store=\"results\"} 1"))
        #expect(metrics.contains("alcedo_store_errors_total{store=\"results\"}"))
        await server.stop()
    }

    @Test func aStoreThatHangsIsBoundedAndItsQueueDropsWrites() async throws {
        // A listener that accepts and never answers.
        let listening = try LoopbackPort.listen()
        defer { close(listening.fd) }
        let client = S3ObjectClient(configuration: S3Configuration(endpoint: URL(string: "http://127.0.0.1:\(listening.port)")!),
                                    credentials: S3Credentials(accessKeyID: "AKIA", secretAccessKey: "secret"))
        let config = ObjectStoreTier.Config(readTimeout: .milliseconds(200), writeTimeout: .milliseconds(500),
                                            queueCapacity: 2, writers: 1)
        let tier = ObjectStoreTier(store: S3ObjectStore(bucket: "results", prefix: "", client: client), kind: .results, config: config)
        let clock = ContinuousClock()
        let start = clock.now
        #expect(await tier.entry(forKey: "http://example.com/a.jpg@com.alcedo.imgproxy(x)") == nil)
        #expect(clock.now - start < .seconds(30), "a read waits at most the read timeout (with room for a loaded runner), not for the silent store")
        var queued = 0
        for index in 0..<10 {
            let entry = SharedCacheEntry(data: Data(repeating: UInt8(index), count: 10), metadata: .init(key: "k\(index)"))
            if tier.enqueue(entry, forKey: "http://example.com/\(index).jpg") { queued += 1 }
        }
        #expect(queued <= 3, "one write runs, two wait")
        #expect(tier.statistics.droppedWrites >= 7)
        #expect(tier.queuedWrites <= 2)
        await tier.flush(limit: .seconds(10))
        #expect(tier.statistics.writes == 0)
        #expect(tier.heldBackWrites <= 3, "only the writes that were tried are held back")
    }

    /// The queue is bounded by bytes as well as by count: large results waiting for a slow
    /// store cannot hold more memory than ``ObjectStoreTier/Config/queueBytes``.
    @Test func aSlowStoresQueueHoldsAtMostItsBytes() async throws {
        let listening = try LoopbackPort.listen()
        defer { close(listening.fd) }
        let client = S3ObjectClient(configuration: S3Configuration(endpoint: URL(string: "http://127.0.0.1:\(listening.port)")!),
                                    credentials: S3Credentials(accessKeyID: "AKIA", secretAccessKey: "secret"))
        let config = ObjectStoreTier.Config(writeTimeout: .milliseconds(500), queueCapacity: 256, queueBytes: 1 << 20, writers: 1)
        let tier = ObjectStoreTier(store: S3ObjectStore(bucket: "results", prefix: "", client: client), kind: .results, config: config)
        var queued = 0
        for index in 0..<20 {
            let entry = SharedCacheEntry(data: Data(repeating: UInt8(index), count: 300_000), metadata: .init(key: "k\(index)"))
            if tier.enqueue(entry, forKey: "http://example.com/\(index).jpg") { queued += 1 }
        }
        // 1 MiB holds three 300 kB writes waiting (and the one running has left the queue).
        #expect(queued <= 4, "queued \(queued)")
        #expect(tier.statistics.droppedWrites >= 16)
        #expect(tier.queuedWrites <= 3)
        await tier.flush(limit: .seconds(10))
    }

    @Test func writesThatFailedReachTheStoreOnceItAnswers() async throws {
        let folder = Self.temporaryFolder("held-back")
        defer { try? FileManager.default.removeItem(at: folder) }
        // A file where the store's folder should be: every write fails.
        try Data("in the way".utf8).write(to: folder)
        let tier = ObjectStoreTier(store: FolderObjectStore(root: folder.appendingPathComponent("store")), kind: .results)
        for index in 0..<3 {
            let key = "http://example.com/\(index).jpg@com.alcedo.imgproxy(w1)"
            tier.enqueue(SharedCacheEntry(data: Data(repeating: UInt8(index), count: 100), metadata: .init(key: key)), forKey: key)
        }
        await tier.flush()
        #expect(tier.statistics.errors == 3 && tier.statistics.writes == 0)
        #expect(tier.heldBackWrites == 3)
        // The way is cleared; the next answer of the store sends the held-back writes again.
        try FileManager.default.removeItem(at: folder)
        #expect(await tier.entry(forKey: "http://example.com/other.jpg@com.alcedo.imgproxy(w1)") == nil)
        await tier.flush()
        #expect(tier.statistics.writes == 3 && tier.statistics.retriedWrites == 3)
        #expect(tier.heldBackWrites == 0)
        #expect(await tier.entry(forKey: "http://example.com/1.jpg@com.alcedo.imgproxy(w1)")?.data == Data(repeating: 1, count: 100))
    }

    @Test func aFolderStoreTouchesOnlyItsOwnFiles() async throws {
        let folder = Self.temporaryFolder("own-files")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = FolderObjectStore(root: folder)
        let tier = ObjectStoreTier(store: store, kind: .results)
        let key = "http://example.com/a.jpg@com.alcedo.imgproxy(w100)|webp"
        let entry = SharedCacheEntry(data: Data("image bytes".utf8), metadata: .init(key: key, format: .webp))
        #expect(tier.enqueue(entry, forKey: key))
        await tier.flush()
        // Files the store did not write, one with its extension: never listed or deleted.
        let foreign = folder.appendingPathComponent("results/notes.txt")
        let impostor = folder.appendingPathComponent("results/impostor.alcedo")
        try Data("keep me".utf8).write(to: foreign)
        try Data("not an entry".utf8).write(to: impostor)
        let listed = try await store.list(prefix: "", limit: nil)
        #expect(listed.map(\.name) == [tier.name(forKey: key)])
        let read = try #require(await tier.entry(forKey: key))
        #expect(read.data == entry.data && read.metadata.format == .webp)
        // The store's TTL (30 days by default) sets the expiry, not the entry's own.
        let days = read.metadata.expirationDate.timeIntervalSinceNow / 86_400
        #expect(days > 29.9 && days <= 30)
        // No temporary file is left behind.
        let files = try FileManager.default.subpathsOfDirectory(atPath: folder.path)
        #expect(!files.contains { $0.hasSuffix(".tmp") })
        #expect(try await tier.purge(prefix: ObjectStoreTier.namePrefix(.results, forSource: "http://example.com/a.jpg")) == 1)
        #expect(FileManager.default.fileExists(atPath: foreign.path) && FileManager.default.fileExists(atPath: impostor.path))
        #expect(await tier.entry(forKey: key) == nil)
    }

    /// The value of the series `name` (with its labels) in a Prometheus text, or `nil`.
    static func metric(_ name: String, in text: String) -> Int? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return line.split(separator: " ").last.flatMap { Double($0) }.map { Int($0) }
        }
        return nil
    }

    @Test func theServeBinaryKeepsResultsInS3AcrossARestart() async throws {
        let moto = try await MotoS3Server.start(buckets: ["alcedo"], objects: [])
        defer { moto.stop() }
        let origin = try await Self.origin()
        defer { origin.stop() }
        // The S3 source's settings and credentials, S3 sources off.
        let environment = ["AWS_ACCESS_KEY_ID": moto.accessKeyID, "AWS_SECRET_ACCESS_KEY": moto.secretAccessKey,
                           "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "HOME": FileManager.default.temporaryDirectory.path,
                           "IMGPROXY_S3_ENDPOINT": moto.endpoint.absoluteString,
                           "ALCEDO_RESULT_STORAGE": "s3://alcedo/cache", "ALCEDO_SOURCE_STORAGE": "s3://alcedo/cache"]
        let client = OneShotClient()
        let path = "/insecure/rs:fit:100:100/plain/" + origin.url("/p.jpg").absoluteString + "@webp"
        let first = try await ServeProcess.start([], environment: environment)
        let fresh = try await client.get(first.baseURL + path)
        #expect(fresh.status == 200)
        var metrics = ""
        for _ in 0..<200 {
            metrics = String(decoding: try await client.get(first.baseURL + "/metrics").body, as: UTF8.self)
            if Self.metric("alcedo_store_writes_total{store=\"results\"}", in: metrics) == 1,
               Self.metric("alcedo_store_writes_total{store=\"sources\"}", in: metrics) == 1 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(Self.metric("alcedo_store_writes_total{store=\"results\"}", in: metrics) == 1)
        first.stop()

        let second = try await ServeProcess.start([], environment: environment)
        defer { second.stop() }
        let stored = try await client.get(second.baseURL + path)
        #expect(stored.status == 200 && stored.body == fresh.body)
        #expect(stored.headers["etag"] == fresh.headers["etag"])
        metrics = String(decoding: try await client.get(second.baseURL + "/metrics").body, as: UTF8.self)
        #expect(Self.metric("alcedo_store_hits_total{store=\"results\"}", in: metrics) == 1)
        #expect(Self.metric("alcedo_processing_runs_total", in: metrics) == 0)
        #expect(origin.requestCount("/p.jpg") == 1)
        // Another variant of the source: from the source store, not the origin.
        #expect(try await client.get(second.baseURL + "/insecure/rs:fit:40:40/plain/" + origin.url("/p.jpg").absoluteString).status == 200)
        #expect(origin.requestCount("/p.jpg") == 1)
    }

    @Test func theCacheCommandListsAndPurgesTheStore() async throws {
        let folder = Self.temporaryFolder("cli")
        defer { try? FileManager.default.removeItem(at: folder) }
        let tier = ObjectStoreTier(store: FolderObjectStore(root: folder), kind: .results)
        for source in ["http://example.com/a.jpg", "http://example.com/b.jpg"] {
            for width in [100, 200] {
                let key = source + "@com.alcedo.imgproxy(w\(width))"
                tier.enqueue(SharedCacheEntry(data: Data(repeating: 1, count: width), metadata: .init(key: key)), forKey: key)
            }
        }
        await tier.flush()
        let location = "local://" + folder.path
        let list = try await AlcedoBinary.runDetached(["cache", "result-store", "list", "--result-storage", location, "--json"])
        #expect(list.status == 0)
        let entries = try JSONDecoder().decode([ObjectStoreListing].self, from: Data(list.stdout.utf8))
        #expect(entries.count == 4)
        let purge = try await AlcedoBinary.runDetached(["cache", "result-store", "purge", "--result-storage", location,
                                          "--source", "http://example.com/a.jpg"])
        #expect(purge.status == 0 && purge.stdout.contains("deleted 2 entries"))
        let after = try await AlcedoBinary.runDetached(["cache", "result-store", "list", "--result-storage", location, "--json"])
        #expect(try JSONDecoder().decode([ObjectStoreListing].self, from: Data(after.stdout.utf8)).count == 2)
        let bad = try await AlcedoBinary.runDetached(["cache", "result-store", "list", "--result-storage", "ftp://nowhere"])
        #expect(bad.status != 0)
    }
}

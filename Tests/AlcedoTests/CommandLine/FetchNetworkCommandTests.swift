import Foundation
import Testing
@testable import Alcedo

/// `alcedo fetch` against a real HTTP server on 127.0.0.1, run as a process.
@Suite("alcedo fetch over HTTP, run as a process")
struct FetchNetworkCommandTests {
    static let jpeg = FetchCommandTests.jpeg

    static func withServer(_ body: (TestHTTPServer, TemporaryDirectory) async throws -> Void) async throws {
        let server = try await TestHTTPServer.start()
        let dir = try TemporaryDirectory()
        do {
            try await body(server, dir)
            try await server.shutdown()
        } catch {
            server.stop()
            throw error
        }
    }

    @Test("a 404, a non-image, a corrupt image and a good image: exit 1, each error in its line")
    func httpFailures() async throws {
        try await Self.withServer { server, dir in
            let bytes = try Data(contentsOf: Self.jpeg)
            server.route("/good.jpg", .ok(bytes, contentType: "image/jpeg"))
            server.route("/page.jpg", .ok(Data("<html><body>hello</body></html>".utf8), contentType: "text/html"))
            server.route("/cut.jpg", .ok(bytes.prefix(2000), contentType: "image/jpeg"))
            let urls = ["/missing.jpg", "/page.jpg", "/cut.jpg", "/good.jpg"].map { server.url($0).absoluteString }
            let result = try await FetchCommandTests.run(["fetch"] + urls + ["--out", dir.url.path, "--cache-dir", dir.url.appendingPathComponent("c").path, "--json"], in: dir)
            #expect(result.status == 1)
            #expect(!result.crashed)
            let objects = try FetchCommandTests.reports(result.stdout)
            try #require(objects.count == 4)
            let errors = objects.map { $0["error"] as? String }
            #expect(errors[0]?.contains("404") == true, "\(errors)")
            #expect(errors[1]?.contains("not an image") == true, "\(errors)")
            #expect(errors[2]?.contains("truncated") == true, "\(errors)")
            #expect(objects[3]["error"] is NSNull)
            #expect(objects[3]["cacheType"] as? String == "none")
            #expect(objects[3]["width"] as? Int == 227)
        }
    }

    @Test("--max-memory counts download bodies too: a body that could never fit fails at its head, the others are fetched side by side")
    func downloadsShareTheMemoryBudget() async throws {
        try await Self.withServer { server, dir in
            // 24 MiB (under the 32 MiB body limit) after a PNG signature: more than the 19 MiB one
            // job may take under --max-memory 20 with a 1 MiB memory cache.
            server.route("/huge.png", .ok(Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + Data(count: 24 << 20),
                                          contentType: "image/png"))
            let bytes = try Data(contentsOf: Self.jpeg)
            for index in 0..<3 { server.route("/good-\(index).jpg", .ok(bytes, contentType: "image/jpeg")) }
            let urls = ["/huge.png", "/good-0.jpg", "/good-1.jpg", "/good-2.jpg"].map { server.url($0).absoluteString }
            let result = try await FetchCommandTests.run(["fetch"] + urls + ["--out", dir.url.path, "--memory-only", "--concurrency", "4",
                                                                             "--max-memory", "20", "--memory-limit", "1", "--json"], in: dir)
            #expect(result.status == 1 && !result.crashed)
            let objects = try FetchCommandTests.reports(result.stdout)
            try #require(objects.count == 4)
            let huge = try #require(objects.first { ($0["url"] as? String)?.hasSuffix("huge.png") == true })
            let error = huge["error"] as? String ?? ""
            // Refused by the downloader's reservation (not after the whole body was read, by the decode's).
            #expect(error.contains("memory budget") && error.contains("downloading"), "\(error)")
            #expect(objects.filter { $0["error"] is NSNull }.count == 3)
        }
    }

    @Test("cache types: none, then disk in a new process, memory for a repeat within one; the default folder follows XDG_CACHE_HOME")
    func cacheTypesAcrossRuns() async throws {
        try await Self.withServer { server, dir in
            server.route("/a.jpg", .ok(try Data(contentsOf: Self.jpeg), contentType: "image/jpeg"))
            let url = server.url("/a.jpg").absoluteString
            let first = try await FetchCommandTests.run(["fetch", url, "--out", dir.url.path, "--json", "--downsample", "64x64"], in: dir)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(try FetchCommandTests.reports(first.stdout).first?["cacheType"] as? String == "none")
            let folder = dir.url.appendingPathComponent("xdg/alcedo/default")
            #expect(try !FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "stored in the default cache")

            let second = try await FetchCommandTests.run(["fetch", url, url, "--out", dir.url.path, "--json", "--downsample", "64x64", "--concurrency", "1"], in: dir)
            #expect(second.status == 0, "\(second.stderr)")
            let objects = try FetchCommandTests.reports(second.stdout)
            #expect(objects.map { $0["cacheType"] as? String } == ["disk", "memory"])
            #expect(objects.map { $0["width"] as? Int } == [64, 64])
            #expect(server.requestCount("/a.jpg") == 1)
        }
    }

    @Test("--only-from-cache on a miss fails without a request; on a hit it succeeds")
    func onlyFromCache() async throws {
        try await Self.withServer { server, dir in
            server.route("/b.jpg", .ok(try Data(contentsOf: Self.jpeg), contentType: "image/jpeg"))
            let url = server.url("/b.jpg").absoluteString
            let cache = dir.url.appendingPathComponent("cache").path
            let miss = try await FetchCommandTests.run(["fetch", url, "--out", dir.url.path, "--cache-dir", cache, "--only-from-cache", "--json"], in: dir)
            #expect(miss.status == 1)
            let error = try #require(try FetchCommandTests.reports(miss.stdout).first?["error"] as? String)
            #expect(error.contains("nothing cached"), "\(error)")
            #expect(server.requestCount("/b.jpg") == 0)

            let load = try await FetchCommandTests.run(["fetch", url, "--out", dir.url.path, "--cache-dir", cache, "--json"], in: dir)
            #expect(load.status == 0, "\(load.stderr)")
            let hit = try await FetchCommandTests.run(["fetch", url, "--out", dir.url.path, "--cache-dir", cache, "--only-from-cache", "--json"], in: dir)
            #expect(hit.status == 0, "\(hit.stderr)")
            #expect(try FetchCommandTests.reports(hit.stdout).first?["cacheType"] as? String == "disk")
            #expect(server.requestCount("/b.jpg") == 1)
        }
    }

    @Test("--force-refresh revalidates what the disk holds: the server answers 304 and the disk entry serves")
    func forceRefreshRevalidates() async throws {
        try await Self.withServer { server, dir in
            var response = TestHTTPServer.Response.ok(try Data(contentsOf: Self.jpeg), contentType: "image/jpeg")
            response.etag = "\"v1\""
            server.route("/c.jpg", response)
            let url = server.url("/c.jpg").absoluteString
            let cache = dir.url.appendingPathComponent("cache").path
            let first = try await FetchCommandTests.run(["fetch", url, "--out", dir.url.path, "--cache-dir", cache, "--json"], in: dir)
            #expect(first.status == 0, "\(first.stderr)")
            let refreshed = try await FetchCommandTests.run(["fetch", url, "--out", dir.url.path, "--cache-dir", cache, "--force-refresh", "--json"], in: dir)
            #expect(refreshed.status == 0, "\(refreshed.stderr)")
            #expect(try FetchCommandTests.reports(refreshed.stdout).first?["cacheType"] as? String == "disk")
            let requests = server.requests("/c.jpg")
            try #require(requests.count == 2)
            #expect(requests[1].headers.first(name: "If-None-Match") == "\"v1\"")
        }
    }

    @Test("--memory-only touches no disk cache: nothing in the default folder, repeats are memory hits")
    func memoryOnly() async throws {
        try await Self.withServer { server, dir in
            server.route("/d.jpg", .ok(try Data(contentsOf: Self.jpeg), contentType: "image/jpeg"))
            let url = server.url("/d.jpg").absoluteString
            let result = try await FetchCommandTests.run(["fetch", url, url, "--out", dir.url.path, "--memory-only", "--concurrency", "1", "--json"], in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try FetchCommandTests.reports(result.stdout).map { $0["cacheType"] as? String } == ["none", "memory"])
            #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("xdg").path))
        }
    }
}

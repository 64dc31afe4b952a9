import Foundation
import Testing
@testable import Alcedo

/// `alcedo prefetch` against a real HTTP server on 127.0.0.1, run as a process.
@Suite("alcedo prefetch, run as a process")
struct PrefetchCommandTests {
    static func results(_ stdout: String) throws -> [String: String] {
        var results: [String: String] = [:]
        for object in try InfoAndConvertCommandTests.jsonLines(stdout) {
            #expect(Set(object.keys) == ["url", "result", "error"], "\(object)")
            let url = try #require(object["url"] as? String)
            results[url] = object["result"] as? String
        }
        return results
    }

    @Test("a list with comments, a 404 and a bad line: completed, failed, then skipped on a second run")
    func listThenSkipped() async throws {
        try await FetchNetworkCommandTests.withServer { server, dir in
            let bytes = try Data(contentsOf: FetchCommandTests.jpeg)
            server.route("/a.jpg", .ok(bytes, contentType: "image/jpeg"))
            server.route("/b.jpg", .ok(bytes, contentType: "image/jpeg"))
            let a = server.url("/a.jpg").absoluteString, b = server.url("/b.jpg").absoluteString
            let missing = server.url("/missing.jpg").absoluteString
            let list = dir.url.appendingPathComponent("urls.txt")
            try Data("# images\n\(a)\n\n  \(b)  \n\(missing)\nftp://example.com/x.jpg\n".utf8).write(to: list)
            let cache = dir.url.appendingPathComponent("cache").path

            let first = try await FetchCommandTests.run(["prefetch", "--from", list.path, "--cache-dir", cache, "--json"], in: dir)
            #expect(first.status == 1)
            #expect(!first.crashed)
            #expect(try Self.results(first.stdout) == [a: "completed", b: "completed", missing: "failed", "ftp://example.com/x.jpg": "failed"])
            #expect(first.stderr.contains("2 completed, 0 skipped (already cached), 2 failed"), "\(first.stderr)")

            // The same list on standard input: what is cached is skipped, nothing is downloaded again.
            let second = try await FetchCommandTests.run(["prefetch", "--from", "-", "--cache-dir", cache, "--json"], in: dir,
                                                   input: try Data(contentsOf: list))
            #expect(try Self.results(second.stdout)[a] == "skipped")
            #expect(try Self.results(second.stdout)[b] == "skipped")
            #expect(server.requestCount("/a.jpg") == 1)
            #expect(server.requestCount("/b.jpg") == 1)

            // And fetch finds them on disk.
            let fetched = try await FetchCommandTests.run(["fetch", a, "--out", dir.url.path, "--cache-dir", cache, "--only-from-cache", "--json"], in: dir)
            #expect(fetched.status == 0, "\(fetched.stderr)")
            #expect(try FetchCommandTests.reports(fetched.stdout).first?["cacheType"] as? String == "disk")
        }
    }

    @Test("each failed URL is printed with why it failed, on stderr and in --json")
    func failureReasons() async throws {
        try await FetchNetworkCommandTests.withServer { server, dir in
            server.route("/gone.jpg", .status(404))
            server.route("/page.jpg", .ok(Data("<html>".utf8), contentType: "text/html"))
            let gone = server.url("/gone.jpg").absoluteString, page = server.url("/page.jpg").absoluteString
            let list = dir.url.appendingPathComponent("urls.txt")
            try Data("\(gone)\n\(page)\n".utf8).write(to: list)
            let cache = dir.url.appendingPathComponent("cache").path

            let plain = try await FetchCommandTests.run(["prefetch", "--from", list.path, "--cache-dir", cache], in: dir)
            #expect(plain.status == 1)
            #expect(plain.stderr.contains("alcedo: \(gone): response error: unacceptable status code 404"), "\(plain.stderr)")
            #expect(plain.stderr.contains(#"alcedo: \#(page): processor error: DefaultImageProcessor gave no image for data (6 bytes, not an image: "<html>")"#), "\(plain.stderr)")

            let json = try await FetchCommandTests.run(["prefetch", "--from", list.path, "--cache-dir", cache, "--json"], in: dir)
            var errors: [String: String] = [:]
            for object in try InfoAndConvertCommandTests.jsonLines(json.stdout) {
                errors[try #require(object["url"] as? String)] = object["error"] as? String
            }
            #expect(errors[gone]?.hasPrefix("response error: unacceptable status code 404") == true, "\(errors)")
            #expect(errors[page]?.contains("not an image") == true, "\(errors)")
        }
    }

    @Test("not a terminal: no progress bar, a plain summary on stdout, exit 0 when nothing failed")
    func plainSummary() async throws {
        try await FetchNetworkCommandTests.withServer { server, dir in
            server.route("/c.png", .ok(try Data(contentsOf: Fixtures.url("libpng/testpngs/rgb-alpha-8.png")), contentType: "image/png"))
            let list = dir.url.appendingPathComponent("urls.txt")
            try Data((server.url("/c.png").absoluteString + "\n").utf8).write(to: list)
            let result = try await FetchCommandTests.run(["prefetch", "--from", list.path, "--cache-dir", dir.url.appendingPathComponent("cache").path], in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n")
            #expect(lines.count == 1)
            #expect(lines.first?.hasPrefix("prefetched 1 URLs in ") == true, "\(result.stdout)")
            #expect(lines.first?.contains("1 completed, 0 skipped (already cached), 0 failed") == true)
            #expect(!result.stdout.contains("\u{1B}") && !result.stderr.contains("\u{1B}"))
        }
    }

    @Test("a list that cannot be read: exit 1 and one line naming it")
    func unreadableList() async throws {
        let dir = try TemporaryDirectory()
        let result = try await FetchCommandTests.run(["prefetch", "--from", dir.url.appendingPathComponent("none.txt").path], in: dir)
        #expect(result.status == 1)
        #expect(!result.crashed)
        #expect(result.stderr.contains("none.txt") && result.stderr.contains("No such file"), "\(result.stderr)")
    }
}

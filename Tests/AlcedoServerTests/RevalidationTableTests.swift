import Alcedo
@testable import AlcedoServer
import Foundation
import Testing

@Suite("Server: revalidations answered before the path is parsed")
struct RevalidationTableTests {
    @Test("a path revalidated once is answered from the table with the same headers as the whole way")
    func repeatedRevalidation() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/p.jpg", .validatedJPEG(width: 300, height: 200, etag: "\"src-1\""))
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        let path = harness.path(origin.url("/p.jpg"), "rs:fit:100:100")
        let accept = ("Accept", "image/webp,image/*")

        let first = try await harness.request(path, headers: [accept])
        let etag = try #require(first.header("ETag"))
        #expect(first.header("Vary") == "Accept")
        #expect(harness.service.revalidations.count == 0, "an unconditional request records nothing")

        let wholeWay = try await harness.request(path, headers: [accept, ("If-None-Match", etag)])
        #expect(wholeWay.status == 304)
        let key = RevalidationTable.key(path: path, accept: [accept.1])
        let entry = try #require(harness.service.revalidations.entry(for: key))
        #expect(entry.negotiated)

        let fromTable = try await harness.request(path, headers: [accept, ("If-None-Match", etag)])
        #expect(fromTable.status == 304 && fromTable.body.isEmpty)
        for name in ["ETag", "Last-Modified", "Cache-Control", "Vary"] {
            #expect(fromTable.header(name) == wholeWay.header(name), "\(name)")
        }
        #expect(harness.service.metrics.producedCount == 1)

        // A validator that no longer matches, or another Accept, goes the whole way.
        let changed = try await harness.request(path, headers: [accept, ("If-None-Match", "\"old\"")])
        #expect(changed.status == 200 && changed.body == first.body)
        let jpegOnly = try await harness.request(path, headers: [("Accept", "image/jpeg"), ("If-None-Match", etag)])
        #expect(jpegOnly.status == 200, "another Accept is another variant, with another ETag")
        #expect(jpegOnly.format == .jpeg)
        #expect(harness.service.revalidations.count == 2)
    }

    @Test("a result gone from memory sends the revalidation the whole way again")
    func expiredResult() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/p.jpg", .ok(TestImages.jpeg(width: 120, height: 80), contentType: "image/jpeg"))
        // No room for results in memory: every table entry points at nothing.
        let harness = try await ServerHarness.start { $0.resultCacheBytes = 0 }
        defer { Task { await harness.stop() } }
        let path = harness.path(origin.url("/p.jpg"), "w:40", ext: "png")
        let etag = try #require(try await harness.request(path).header("ETag"))
        #expect(try await harness.request(path, headers: [("If-None-Match", etag)]).status == 304)
        #expect(harness.service.revalidations.count == 1)
        // Still a correct answer, from the source's validator or a new result.
        #expect(try await harness.request(path, headers: [("If-None-Match", etag)]).status == 304)
        #expect(try await harness.request(path, headers: [("If-None-Match", "\"other\"")]).status == 200)
    }

    @Test("only the exact signed path is in the table: another signature with a valid ETag is refused")
    func signaturesStillChecked() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/p.jpg", .ok(TestImages.jpeg(width: 120, height: 80), contentType: "image/jpeg"))
        let key = try SigningKey(hexKey: "736563726574", hexSalt: "68656C6C6F")
        let harness = try await ServerHarness.start { $0.keys = [key] }
        defer { Task { await harness.stop() } }
        var options = ProcessingOptions()
        options.width = 50
        let builder = ImgproxyURLBuilder(baseURL: "", key: key)
        let path = builder.url(for: origin.url("/p.jpg").absoluteString, options: options, format: .png)
        let etag = try #require(try await harness.request(path).header("ETag"))
        #expect(try await harness.request(path, headers: [("If-None-Match", etag)]).status == 304)
        #expect(try await harness.request(path, headers: [("If-None-Match", etag)]).status == 304)

        let signature = String(path.dropFirst().prefix { $0 != "/" })
        let forged = "/" + String(repeating: "A", count: signature.count) + path.dropFirst(1 + signature.count)
        #expect(try await harness.request(forged, headers: [("If-None-Match", etag)]).status == 403)
        #expect(harness.service.revalidations.count == 1)
    }

    @Test("the table keeps two generations within its byte bound, and a path read moves back to the current one")
    func bounded() {
        let table = RevalidationTable(generationBytes: 100)
        let entry = RevalidationTable.Entry(variantKey: "0123456789", negotiated: false)
        for index in 0..<30 { table.record("path-\(index)-xxxxxxxxxx", entry) }  // 30 bytes each
        // 3 fit in a generation: the current one and the previous one.
        #expect(table.count <= 6)
        #expect(table.entry(for: "path-29-xxxxxxxxxx") != nil)
        #expect(table.entry(for: "path-0-xxxxxxxxxx") == nil)
        let previous = (0..<30).map { "path-\($0)-xxxxxxxxxx" }.filter { table.entry(for: $0) != nil }
        #expect(previous.count >= 3)
        // A key larger than a generation is never kept.
        table.record(String(repeating: "p", count: 200), entry)
        #expect(table.entry(for: String(repeating: "p", count: 200)) == nil)
        #expect(RevalidationTable.key(path: "/a", accept: ["x", "y"]) == "/a\nx\ny")
    }
}

import Alcedo
@testable import AlcedoServer
import Foundation
import Testing

@Suite("Server: responses, negotiation, caching headers")
struct ServerHTTPTests {
    @Test("If-None-Match lists: *, the tag, its weak form, among others, with spaces; never a prefix or a part")
    func entityTagLists() {
        let tag = "\"abc\""
        for field in [tag, "*", " W/\"abc\" ", "\"x\", \"abc\"", "\"x\",\t\"abc\"\t", "W/\"y\", *"] {
            #expect(ImageService.entityTags(field, match: tag), "\(field)")
        }
        for field in ["", ",", "\"abcd\"", "\"ab\"", "W/\"ab\"", "\"x\", \"ab c\"", "**", "W/", "abc", "\"abc"] {
            #expect(!ImageService.entityTags(field, match: tag), "\(field)")
        }
    }

    @Test func servesAResizedImageWithCachingHeaders() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/photo.jpg", .validatedJPEG(width: 400, height: 300, etag: "\"v1\""))
        let harness = try await ServerHarness.start { $0.ttl = 600 }
        defer { Task { await harness.stop() } }

        let reply = try await harness.request(harness.path(origin.url("/photo.jpg"), "rs:fill:100:50", ext: "png"))
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type") == "image/png")
        #expect(reply.header("Content-Length") == String(reply.body.count))
        #expect(reply.header("Cache-Control") == "public, max-age=600")
        #expect(reply.header("Last-Modified") == "Wed, 21 Oct 2015 07:28:00 GMT")
        #expect(reply.header("ETag")?.hasPrefix("\"") == true)
        #expect(reply.header("Vary") == nil, "the extension chose the format: nothing negotiated")
        #expect(try reply.image().pixelSize == PixelSize(width: 100, height: 50))

        let health = try await harness.request("/health")
        #expect(health.status == 200)
    }

    @Test func negotiatesWebPAndVariesOnAccept() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 200, height: 100), contentType: "image/jpeg"))
        origin.route("/b.png", .ok(TestImages.png(width: 200, height: 100), contentType: "image/png"))
        origin.route("/c.gif", .ok(TestImages.animatedGIF(width: 40, height: 40), contentType: "image/gif"))
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }

        let webp = try await harness.request(harness.path(origin.url("/a.jpg"), "w:50"), headers: [("Accept", "image/avif,image/webp,*/*")])
        #expect(webp.format == .webp && webp.header("Content-Type") == "image/webp")
        #expect(webp.header("Vary") == "Accept")
        let jpeg = try await harness.request(harness.path(origin.url("/a.jpg"), "w:50"), headers: [("Accept", "image/jpeg")])
        #expect(jpeg.format == .jpeg && jpeg.header("Vary") == "Accept")
        #expect(webp.header("ETag") != jpeg.header("ETag"))
        let png = try await harness.request(harness.path(origin.url("/b.png"), "w:50"))
        #expect(png.format == .png && png.header("Vary") == "Accept")
        let forced = try await harness.request(harness.path(origin.url("/a.jpg"), "w:50/f:png"), headers: [("Accept", "image/webp")])
        #expect(forced.format == .png && forced.header("Vary") == nil)

        // Animated sources stay animated unless the format or page says otherwise.
        let gif = try await harness.request(harness.path(origin.url("/c.gif"), "w:20"), headers: [("Accept", "image/png")])
        #expect(gif.format == .gif)
        #expect(try gif.image().frames.count == 2)
        let page = try await harness.request(harness.path(origin.url("/c.gif"), "pg:1"))
        #expect(try page.image().frames.count == 1)
        let still = try await harness.request(harness.path(origin.url("/c.gif"), "w:20", ext: "png"))
        #expect(try still.image().frames.count == 1)

        // WebP negotiation can be turned off.
        let plain = try await ServerHarness.start { $0.autoWebP = false }
        defer { Task { await plain.stop() } }
        let noWebP = try await plain.request(plain.path(origin.url("/a.jpg"), "w:50"), headers: [("Accept", "image/webp")])
        #expect(noWebP.format == .jpeg)
    }

    @Test("an animated GIF asked for by a client that accepts WebP is an animated WebP with every frame, as imgproxy 4")
    func animatedGIFBecomesAnimatedWebP() async throws {
        let spinner = try Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/alcedo/Demo/Samples/spinner.gif").standardizedFileURL)
        let source = try ImageCodecRegistry.shared.decode(spinner)
        #expect(source.frames.count == 12)
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/s.gif", .ok(spinner, contentType: "image/gif"))
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }

        let reply = try await harness.request(harness.path(origin.url("/s.gif"), ""), headers: [("Accept", "image/webp,*/*")])
        #expect(reply.status == 200 && reply.format == .webp && reply.header("Vary") == "Accept")
        let webp = try reply.image()
        #expect(webp.pixelSize == source.pixelSize && webp.frames.count == source.frames.count && webp.loopCount == source.loopCount)
        for (index, frame) in webp.frames.enumerated() {
            #expect(abs(frame.duration - source.frames[index].duration) < 0.005, "frame \(index)")
            // Lossy WebP: each frame close to the GIF's, transparency kept (a transparent
            // pixel's colour is free).
            for (x, y) in [(0, 0), (64, 10), (20, 64), (100, 100)] {
                let expected = source.pixel(x: x, y: y, frame: index), actual = webp.pixel(x: x, y: y, frame: index)
                let close = expected.alpha == 0 ? actual.alpha < 40 : actual.isClose(to: expected, tolerance: 60)
                #expect(close, "frame \(index) at \(x),\(y): \(actual) for \(expected)")
            }
        }
        // Without WebP in Accept the GIF stays GIF (a preferred format).
        let gif = try await harness.request(harness.path(origin.url("/s.gif"), ""), headers: [("Accept", "image/avif,*/*")])
        #expect(try gif.format == .gif && gif.image().frames.count == 12)
    }

    @Test func conditionalRequestsGet304WithoutProcessing() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/p.jpg", .validatedJPEG(width: 300, height: 200, etag: "\"src-1\""))
        origin.route("/noval.jpg", .ok(TestImages.jpeg(width: 300, height: 200), contentType: "image/jpeg"))
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        let path = harness.path(origin.url("/p.jpg"), "rs:fit:100:100")

        let first = try await harness.request(path)
        let etag = try #require(first.header("ETag"))
        let produced = harness.service.metrics.producedCount
        let again = try await harness.request(path, headers: [("If-None-Match", etag)])
        #expect(again.status == 304 && again.body.isEmpty)
        #expect(again.header("ETag") == etag)
        let since = try await harness.request(path, headers: [("If-Modified-Since", "Thu, 22 Oct 2015 07:28:00 GMT")])
        #expect(since.status == 304)
        let older = try await harness.request(path, headers: [("If-Modified-Since", "Tue, 20 Oct 2015 07:28:00 GMT")])
        #expect(older.status == 200)
        let other = try await harness.request(path, headers: [("If-None-Match", "\"something-else\"")])
        #expect(other.status == 200)

        // A variant never produced, asked conditionally with the ETag it would have: 304 from
        // the source's validator, without processing.
        let cold = harness.path(origin.url("/p.jpg"), "rs:fit:60:60")
        var canonical = try ImgproxyPath.parse(cold).path
        canonical.signature = ""
        let predicted = harness.service.etag(for: canonical, validator: "\"src-1\"", format: .jpeg)
        let producedBefore = harness.service.metrics.producedCount
        let coldReply = try await harness.request(cold, headers: [("If-None-Match", predicted), ("Accept", "image/jpeg")])
        #expect(coldReply.status == 304)
        #expect(harness.service.metrics.producedCount == producedBefore)
        #expect(producedBefore == produced)
        #expect(origin.requestCount("/p.jpg") == 1)

        // Without a validator at the source, the ETag comes from the bytes and still works.
        let noValidator = harness.path(origin.url("/noval.jpg"), "w:50")
        let fresh = try await harness.request(noValidator)
        let bytesTag = try #require(fresh.header("ETag"))
        #expect(fresh.header("Last-Modified") == nil)
        #expect(try await harness.request(noValidator, headers: [("If-None-Match", bytesTag)]).status == 304)

        // The cache buster changes the ETag.
        let busted = try await harness.request(harness.path(origin.url("/p.jpg"), "rs:fit:100:100/cb:2"))
        #expect(busted.header("ETag") != etag)
    }

    @Test func aStaleSourceIsRevalidatedNotDownloadedAgain() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        var source = TestHTTPServer.Response.ok(TestImages.jpeg(width: 200, height: 100), contentType: "image/jpeg")
            .header("Cache-Control", "max-age=0")
        source.etag = "\"r1\""
        origin.route("/r.jpg", source)
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        #expect(try await harness.request(harness.path(origin.url("/r.jpg"), "w:50", ext: "png")).status == 200)
        let second = try await harness.request(harness.path(origin.url("/r.jpg"), "w:60", ext: "png"))
        #expect(second.status == 200)
        #expect(try second.image().width == 60)
        let requests = origin.requests("/r.jpg")
        #expect(requests.count == 2)
        #expect(requests.last?.headers.first(name: "If-None-Match") == "\"r1\"", "the second is conditional (answered 304)")
    }

    @Test func headAnswersLikeGetWithoutABody() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/h.jpg", .ok(TestImages.jpeg(width: 120, height: 80), contentType: "image/jpeg"))
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        let path = harness.path(origin.url("/h.jpg"), "w:60", ext: "jpg")
        let head = try await harness.request(path, method: .HEAD)
        let get = try await harness.request(path)
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(head.header("Content-Length") == String(get.body.count))
        #expect(head.header("Content-Type") == "image/jpeg")
        #expect(head.header("ETag") == get.header("ETag"))
    }

    @Test func metricsAndInfo() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/m.gif", .ok(TestImages.animatedGIF(width: 30, height: 20), contentType: "image/gif"))
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        _ = try await harness.request(harness.path(origin.url("/m.gif"), "w:10"))
        _ = try await harness.request(harness.path(origin.url("/m.gif"), "w:10"))
        _ = try await harness.request(harness.path(origin.url("/m.gif"), "bogus:1"))

        let metrics = try await harness.request("/metrics")
        #expect(metrics.status == 200)
        let text = metrics.text
        #expect(text.contains("alcedo_requests_total{status=\"200\"} 2"))
        #expect(text.contains("alcedo_requests_total{status=\"400\"} 1"))
        #expect(text.contains("alcedo_processing_duration_seconds_bucket"))
        #expect(text.contains("alcedo_cache_hits_total{tier=\"source\"} 1"))
        #expect(text.contains("alcedo_cache_hits_total{tier=\"result\"} 1"))
        #expect(text.contains("alcedo_requests_in_flight"))
        #expect(text.contains("alcedo_requests_queued"))
        #expect(text.contains("alcedo_source_bytes_total"))

        let info = try await harness.request("/info/insecure/plain/" + origin.url("/m.gif").absoluteString)
        #expect(info.status == 200 && info.header("Content-Type") == "application/json")
        let object = try #require(try JSONSerialization.jsonObject(with: info.body) as? [String: Any])
        #expect(object["format"] as? String == "gif")
        #expect(object["width"] as? Int == 30 && object["height"] as? Int == 20)
        #expect(object["frames"] as? Int == 2)
    }
}

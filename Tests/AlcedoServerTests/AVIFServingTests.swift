import Alcedo
@testable import AlcedoServer
import Foundation
import Testing

/// AVIF results from the server: asked for by format or extension, and negotiated from
/// `Accept` with `autoAVIF`.
@Suite("Server: AVIF output and negotiation")
struct AVIFServingTests {
    static let avifAndWebP = ("Accept", "image/avif,image/webp,image/apng,image/*,*/*;q=0.8")

    /// A two-frame animated WebP.
    static func animatedWebP(width: Int, height: Int) -> Data {
        let first = TestImages.halves(width: width, height: height)
        let second = TestImages.halves(width: width, height: height, markTop: true)
        let image = AlcedoImage(width: width, height: height, frames: [
            .init(pixels: first.pixels, duration: 0.1), .init(pixels: second.pixels, duration: 0.1),
        ])
        return try! ImageCodecRegistry.shared.encode(image, as: .webp)
    }

    @Test func everyWayOfAskingForAVIFGivesAVIF() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/p.jpg", .ok(TestImages.jpeg(width: 400, height: 300), contentType: "image/jpeg"))
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        let source = origin.url("/p.jpg")

        var bodies: [Data] = []
        let base64 = Base64URL.encode(Array(source.absoluteString.utf8))
        for path in [harness.path(source, "rs:fit:100:100/f:avif"), harness.path(source, "rs:fit:100:100/format:avif"),
                     harness.path(source, "rs:fit:100:100/ext:avif"), harness.path(source, "rs:fit:100:100", ext: "avif"),
                     "/insecure/rs:fit:100:100/\(base64).avif"] {
            let reply = try await harness.request(path, headers: [("Accept", "image/jpeg")])
            #expect(reply.status == 200, "\(path): \(reply.text)")
            #expect(reply.header("Content-Type") == "image/avif", "\(path)")
            #expect(reply.format == .avif, "\(path)")
            #expect(reply.header("Vary") == nil, "\(path): the URL chose the format")
            let image = try reply.image()
            #expect(image.pixelSize == PixelSize(width: 100, height: 75))
            // Left half red, right half blue survive the encode.
            #expect(image.pixel(x: 20, y: 37).isClose(to: RGBA(red: 220, green: 0, blue: 0)))
            #expect(image.pixel(x: 80, y: 37).isClose(to: RGBA(red: 0, green: 0, blue: 220)))
            bodies.append(reply.body)
        }
        #expect(Set(bodies).count == 1, "the same variant however it is asked for")

        // The ETag names the format: the AVIF and JPEG variants of the same options differ, and
        // the AVIF one revalidates with a 304.
        let avif = try await harness.request(harness.path(source, "rs:fit:100:100", ext: "avif"))
        let jpeg = try await harness.request(harness.path(source, "rs:fit:100:100", ext: "jpg"))
        let tag = try #require(avif.header("ETag"))
        #expect(tag != jpeg.header("ETag"))
        let revalidated = try await harness.request(harness.path(source, "rs:fit:100:100", ext: "avif"), headers: [("If-None-Match", tag)])
        #expect(revalidated.status == 304)
        // HEAD says the same without a body.
        let head = try await harness.request(harness.path(source, "rs:fit:100:100", ext: "avif"), method: .HEAD)
        #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == String(avif.body.count))
    }

    @Test func qualityFollowsQAndThePerFormatDefaults() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        // Noise, so that the quality shows in the size.
        origin.route("/n.png", .ok(TestImages.noisePNG(width: 160, height: 120), contentType: "image/png"))
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        let source = origin.url("/n.png")
        func body(_ options: String, _ ext: String) async throws -> Data {
            let reply = try await harness.request(harness.path(source, options, ext: ext))
            #expect(reply.status == 200, "\(options)@\(ext): \(reply.text)")
            return reply.body
        }
        // No q: AVIF at 63, WebP at 79, JPEG at 80 (imgproxy's IMGPROXY_FORMAT_QUALITY defaults).
        #expect(try await body("cb:1", "avif") == body("q:63", "avif"))
        #expect(try await body("cb:1", "avif") != body("q:80", "avif"))
        #expect(try await body("cb:1", "webp") == body("q:79", "webp"))
        #expect(try await body("cb:1", "jpg") == body("q:80", "jpg"))
        // q sets the AVIF quality.
        let low = try await body("q:20", "avif"), high = try await body("q:95", "avif")
        #expect(low.count < high.count)

        // The per-format defaults are configurable, and change the ETag.
        let tuned = try await ServerHarness.start { try! $0.setFormatQuality("avif=30") }
        defer { Task { await tuned.stop() } }
        let tunedReply = try await tuned.request(tuned.path(source, "cb:1", ext: "avif"))
        #expect(try await tunedReply.body == body("q:30", "avif"))
        let defaultReply = try await harness.request(harness.path(source, "cb:1", ext: "avif"))
        #expect(tunedReply.header("ETag") != defaultReply.header("ETag"))
    }

    @Test func configuredQualitiesOutOfRangeAreKeptWithin1To100() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/p.png", .ok(TestImages.png(width: 40, height: 30), contentType: "image/png"))
        let harness = try await ServerHarness.start {
            $0.formatQuality[.avif] = 0
            $0.defaultQuality = 500
        }
        defer { Task { await harness.stop() } }
        #expect(harness.service.configuration.quality(for: .avif) == 1)
        #expect(harness.service.configuration.quality(for: .jpeg) == 100)
        let low = try await harness.request(harness.path(origin.url("/p.png"), "", ext: "avif"))
        let high = try await harness.request(harness.path(origin.url("/p.png"), "", ext: "jpg"))
        #expect(low.status == 200 && low.format == .avif, "\(low.text)")
        #expect(high.status == 200 && high.format == .jpeg, "\(high.text)")
    }

    @Test func alphaSurvivesAndMaxBytesLowersTheQuality() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.png", .ok(TestImages.png(width: 64, height: 64, alpha: 128), contentType: "image/png"))
        origin.route("/n.png", .ok(TestImages.noisePNG(width: 200, height: 200), contentType: "image/png"))
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        let alpha = try await harness.request(harness.path(origin.url("/a.png"), "", ext: "avif"))
        #expect(alpha.format == .avif)
        #expect(abs(Int(try alpha.image().pixel(x: 10, y: 10).alpha) - 128) <= 3)

        let full = try await harness.request(harness.path(origin.url("/n.png"), "q:90", ext: "avif"))
        let bounded = try await harness.request(harness.path(origin.url("/n.png"), "q:90/mb:\(full.body.count / 2)", ext: "avif"))
        #expect(bounded.format == .avif)
        #expect(bounded.body.count <= full.body.count / 2, "\(bounded.body.count) of \(full.body.count)")
    }

    @Test func limitsApplyBeforeEncoding() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/small.png", .ok(TestImages.png(width: 300, height: 200), contentType: "image/png"))
        origin.route("/large.png", .ok(TestImages.png(width: 400, height: 300), contentType: "image/png"))
        let harness = try await ServerHarness.start {
            $0.maxResultSide = 256
            $0.maxSourceResolution = 0.1
        }
        defer { Task { await harness.stop() } }
        // Over the result side: refused by the processor before anything is encoded.
        let wide = try await harness.request(harness.path(origin.url("/small.png"), "rs:fit:1000:1000:1", ext: "avif"))
        #expect(wide.status == 422, "\(wide.text)")
        #expect(wide.text.contains("256"), "\(wide.text)")
        // Over the source resolution (120,000 px > 100,000): refused before decoding.
        let large = try await harness.request(harness.path(origin.url("/large.png"), "w:100", ext: "avif"))
        #expect(large.status == 422 && large.text.contains("source limit"), "\(large.text)")
        #expect(harness.service.metrics.responseEncodingCount == 0)
        #expect(harness.service.metrics.processingRunCount == 0)
        // Within both: served.
        #expect(try await harness.request(harness.path(origin.url("/small.png"), "w:100", ext: "avif")).format == .avif)
    }

    @Test func autoAVIFNegotiatesAVIFBeforeWebPAndVariesOnAccept() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 200, height: 100), contentType: "image/jpeg"))
        origin.route("/b.png", .ok(TestImages.png(width: 200, height: 100), contentType: "image/png"))
        origin.route("/c.webp", .ok(try ImageCodecRegistry.shared.encode(TestImages.halves(width: 200, height: 100), as: .webp),
                                    contentType: "image/webp"))
        origin.route("/d.gif", .ok(TestImages.animatedGIF(width: 40, height: 40), contentType: "image/gif"))
        origin.route("/e.webp", .ok(Self.animatedWebP(width: 40, height: 40), contentType: "image/webp"))
        let harness = try await ServerHarness.start { $0.autoAVIF = true }
        defer { Task { await harness.stop() } }
        func get(_ route: String, _ options: String = "w:50", accept: String?) async throws -> ServerHarness.Reply {
            try await harness.request(harness.path(origin.url(route), options), headers: accept.map { [("Accept", $0)] } ?? [])
        }

        let avif = try await get("/a.jpg", accept: Self.avifAndWebP.1)
        #expect(avif.format == .avif && avif.header("Content-Type") == "image/avif")
        #expect(avif.header("Vary") == "Accept")
        #expect(try avif.image().pixelSize == PixelSize(width: 50, height: 25))
        #expect(try await get("/b.png", accept: "image/avif").format == .avif)
        #expect(try await get("/c.webp", accept: "image/avif").format == .avif, "a still WebP source")
        // Without AVIF in Accept: WebP, then the source's format; every answer varies on Accept.
        let webp = try await get("/a.jpg", accept: "image/webp,*/*")
        #expect(webp.format == .webp && webp.header("Vary") == "Accept")
        let jpeg = try await get("/a.jpg", accept: "*/*")
        #expect(jpeg.format == .jpeg && jpeg.header("Vary") == "Accept")
        #expect(try await get("/a.jpg", accept: nil).format == .jpeg)
        // q=0 means "not this one", for AVIF and for WebP alike.
        #expect(try await get("/a.jpg", accept: "image/avif;q=0, image/webp").format == .webp)
        #expect(try await get("/a.jpg", accept: "image/avif; q=0.0, image/webp;q=0,*/*").format == .jpeg)
        #expect(try await get("/a.jpg", accept: "image/avif;q=0.5").format == .avif)

        // The three answers for the same URL are three variants with three ETags; asked again,
        // each client gets its own format back (from the result cache), never another's.
        let tags = [avif, webp, jpeg].map { $0.header("ETag") }
        #expect(Set(tags).count == 3)
        for (accept, format, tag) in [(Self.avifAndWebP.1, ImageFormat.avif, tags[0]), ("image/webp", .webp, tags[1]), ("*/*", .jpeg, tags[2])] {
            let again = try await get("/a.jpg", accept: accept)
            #expect(again.format == format && again.header("ETag") == tag, "\(accept)")
            // A revalidation with another client's ETag is not a match.
            let crossed = try await get("/a.jpg", accept: accept == "*/*" ? "image/avif" : "*/*").header("ETag")
            #expect(crossed != tag)
        }
        // A revalidation with its own ETag: 304 without producing anything.
        let produced = harness.service.metrics.producedCount
        let notModified = try await harness.request(harness.path(origin.url("/a.jpg"), "w:50"),
                                                    headers: [("Accept", "image/avif"), ("If-None-Match", tags[0] ?? "")])
        #expect(notModified.status == 304 && notModified.header("Vary") == "Accept")
        #expect(harness.service.metrics.producedCount == produced)

        // Animated results are not negotiated to AVIF: a GIF becomes an animated WebP, an
        // animated WebP stays WebP, both with their frames; a single page of them may be AVIF.
        let gif = try await get("/d.gif", "w:20", accept: "image/avif,image/webp")
        #expect(try gif.format == .webp && gif.image().frames.count == 2)
        let animated = try await get("/e.webp", "w:20", accept: "image/avif,image/webp")
        #expect(try animated.format == .webp && animated.image().frames.count == 2)
        let page = try await get("/e.webp", "w:20/pg:1", accept: "image/avif")
        #expect(try page.format == .avif && page.image().frames.count == 1)
        // Known to be animated now: its revalidation is answered without producing.
        let animatedTag = try #require(animated.header("ETag"))
        let producedBefore = harness.service.metrics.producedCount
        let again = try await harness.request(harness.path(origin.url("/e.webp"), "w:20"),
                                              headers: [("Accept", "image/avif,image/webp"), ("If-None-Match", animatedTag)])
        #expect(again.status == 304)
        #expect(harness.service.metrics.producedCount == producedBefore)
    }

    @Test func anAnimationAskedForAsAVIFIsAnAVIFSequence() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/d.gif", .ok(TestImages.animatedGIF(width: 40, height: 40), contentType: "image/gif"))
        // Speed 7 too, which libaom 3.6 cannot encode sequences at (the encoder uses 8 then).
        for speed in [8, 7] {
            let harness = try await ServerHarness.start { $0.avifSpeed = speed }
            let reply = try await harness.request(harness.path(origin.url("/d.gif"), "w:20", ext: "avif"))
            #expect(reply.status == 200 && reply.format == .avif, "speed \(speed): \(reply.text)")
            let image = try reply.image()
            #expect(image.frames.count == 2 && image.pixelSize == PixelSize(width: 20, height: 20))
            #expect(abs(image.frames[1].duration - 0.1) < 0.01)
            // pg picks one frame instead.
            let page = try await harness.request(harness.path(origin.url("/d.gif"), "w:20/pg:1", ext: "avif"))
            #expect(try page.image().frames.count == 1)
            await harness.stop()
        }
    }

    @Test func autoAVIFIsOffByDefault() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 200, height: 100), contentType: "image/jpeg"))
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        #expect(ImageServerConfiguration().autoAVIF == false)
        let reply = try await harness.request(harness.path(origin.url("/a.jpg"), "w:50"), headers: [Self.avifAndWebP])
        #expect(reply.format == .webp && reply.header("Vary") == "Accept")
        let onlyAVIF = try await harness.request(harness.path(origin.url("/a.jpg"), "w:50"), headers: [("Accept", "image/avif")])
        #expect(onlyAVIF.format == .jpeg)
    }

    @Test func acceptParsing() {
        let browser = AcceptedImageFormats(acceptHeaders: ["image/avif,image/webp,image/apng,image/*,*/*;q=0.8"])
        #expect(browser == AcceptedImageFormats(webP: true, avif: true))
        #expect(AcceptedImageFormats(acceptHeaders: ["image/*", "*/*"]) == AcceptedImageFormats())
        #expect(AcceptedImageFormats(acceptHeaders: ["IMAGE/AVIF ; Q=0.9", "image/webp;q=0"]) == AcceptedImageFormats(avif: true))
        #expect(AcceptedImageFormats(acceptHeaders: ["image/webp;level=1;q=0.000"]) == AcceptedImageFormats())
        #expect(AcceptedImageFormats(acceptHeaders: ["text/html,image/webpx"]) == AcceptedImageFormats())

        let negotiation = FormatNegotiation(autoWebP: true, autoAVIF: true)
        let both = AcceptedImageFormats(webP: true, avif: true)
        #expect(negotiation.outputFormat(source: .jpeg, animated: nil, accepted: both) == .avif)
        #expect(negotiation.outputFormat(source: .webp, animated: nil, accepted: both) == nil, "depends on animation")
        #expect(negotiation.outputFormat(source: .webp, animated: true, accepted: both) == .webp)
        #expect(negotiation.outputFormat(source: .apng, animated: true, accepted: both) == .webp)
        #expect(negotiation.outputFormat(source: .apng, animated: true, accepted: AcceptedImageFormats(avif: true)) == .png)
        #expect(negotiation.outputFormat(source: .gif, animated: false, accepted: both) == .avif)
        #expect(negotiation.outputFormat(source: .gif, animated: true, accepted: both) == .webp)
        #expect(negotiation.outputFormat(source: .avif, animated: false, accepted: both) == .avif)
        // WebP for any source when the client accepts it, as imgproxy 4.
        for source: ImageFormat in [.jpeg, .png, .gif, .webp, .avif, .heic, .tiff, .bmp, .ico, .jxl] {
            #expect(negotiation.outputFormat(source: source, animated: nil, accepted: AcceptedImageFormats(webP: true)) == .webp)
        }
        #expect(negotiation.outputFormat(source: .svg, animated: false, accepted: both) == .svg)
        // Not negotiated: imgproxy's preferred formats, JPEG unless the result has alpha.
        #expect(negotiation.outputFormat(source: .avif, animated: false, accepted: AcceptedImageFormats()) == nil,
                "depends on alpha")
        #expect(negotiation.outputFormat(source: .avif, animated: false, alpha: false, accepted: AcceptedImageFormats()) == .jpeg)
        #expect(negotiation.outputFormat(source: .webp, animated: true, accepted: AcceptedImageFormats()) == .gif)
        #expect(FormatNegotiation(preferredFormats: [.avif, .gif]).outputFormat(source: .webp, animated: true,
                                                                                accepted: AcceptedImageFormats()) == .gif,
                "AVIF holds no animation in imgproxy's choice")
        #expect(negotiation.outputFormat(source: .avif, animated: false, alpha: true, accepted: AcceptedImageFormats()) == .png)
        #expect(FormatNegotiation().outputFormat(source: .png, animated: nil, accepted: both) == .webp, "AVIF off by default")
        #expect(FormatNegotiation(autoWebP: false).outputFormat(source: .png, animated: nil, accepted: both) == .png)
    }
}

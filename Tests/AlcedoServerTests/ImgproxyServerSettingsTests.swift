import Alcedo
import AlcedoTestSupport
@testable import AlcedoServer
import Foundation
import Testing

/// The server settings imgproxy has besides its processing options, through a real server.
@Suite("Server: imgproxy's server settings")
struct ImgproxyServerSettingsTests {
    // MARK: Source URLs

    @Test func urlReplacementsThenTheBaseURL() throws {
        var rewriter = SourceURLRewriter(baseURL: "http://cdn.test/images/")
        try rewriter.addReplacements("mys3://=http://bucket.test/images/;local://*/*/=http://${1}.test/$2/;")
        #expect(rewriter.replacements.count == 2)
        #expect(rewriter.rewrite("cat.jpg") == "http://cdn.test/images/cat.jpg")
        #expect(rewriter.rewrite("/cat.jpg") == "http://cdn.test/images//cat.jpg", "the base URL is put in front as it is")
        #expect(rewriter.rewrite("http://cdn.test/images/cat.jpg") == "http://cdn.test/images/cat.jpg", "not added twice")
        // mys3://x → http://bucket.test/images/x, which does not start with the base URL.
        #expect(rewriter.rewrite("mys3://x.jpg") == "http://cdn.test/images/http://bucket.test/images/x.jpg")
        rewriter.baseURL = ""
        #expect(rewriter.rewrite("mys3://x.jpg") == "http://bucket.test/images/x.jpg")
        #expect(rewriter.rewrite("local://assets/v2/a/b.png") == "http://assets.test/v2/a/b.png")
        #expect(rewriter.rewrite("local://assets/b.png") == "local://assets/b.png", "two wildcards need two segments")
        #expect(rewriter.rewrite("xmys3://x.jpg") == "xmys3://x.jpg", "patterns match prefixes only")
        #expect(throws: ServerConfigurationError.self) { try rewriter.addReplacements("no-equals-sign") }
    }

    @Test func wildcardAllowedSourcesStopAtSlashes() throws {
        #expect(SourceGuard.prefix("https://*.example.com/", matches: "https://cdn.example.com/a.jpg"))
        #expect(SourceGuard.prefix("https://*.example.com/", matches: "https://a.b.example.com/a.jpg"))
        #expect(!SourceGuard.prefix("https://*.example.com/", matches: "https://evil.test/.example.com/a.jpg"))
        #expect(!SourceGuard.prefix("https://*.example.com/", matches: "https://example.com/a.jpg"))
        #expect(SourceGuard.prefix("http://host/*/img/", matches: "http://host/v1/img/a.jpg"))
        let sourceGuard = SourceGuard(allowedSources: ["https://*.example.com/"])
        #expect(throws: SourceRefusal.self) { try sourceGuard.checkSource("https://example.org/a.jpg") }
        _ = try sourceGuard.checkSource("https://img.example.com/a.jpg")
    }

    @Test func addressKindsAreAllowedOneByOne() throws {
        let loopbackOnly = SourceGuard(allowedAddressKinds: [.loopback])
        try loopbackOnly.checkAddress(IPAddress("127.0.0.1")!, host: "a")
        try loopbackOnly.checkAddress(IPAddress("::1")!, host: "a")
        #expect(throws: SourceRefusal.self) { try loopbackOnly.checkAddress(IPAddress("10.0.0.1")!, host: "a") }
        #expect(throws: SourceRefusal.self) { try loopbackOnly.checkAddress(IPAddress("169.254.169.254")!, host: "a") }
        let privateOnly = SourceGuard(allowedAddressKinds: [.private])
        try privateOnly.checkAddress(IPAddress("192.168.1.2")!, host: "a")
        try privateOnly.checkAddress(IPAddress("100.64.0.1")!, host: "a")
        try privateOnly.checkAddress(IPAddress("fd00::1")!, host: "a")
        #expect(throws: SourceRefusal.self) { try privateOnly.checkAddress(IPAddress("127.0.0.1")!, host: "a") }
        let linkLocal = SourceGuard(allowedAddressKinds: [.linkLocal])
        try linkLocal.checkAddress(IPAddress("169.254.169.254")!, host: "a")
        try linkLocal.checkAddress(IPAddress("fe80::1")!, host: "a")
        #expect(throws: SourceRefusal.self) { try linkLocal.checkAddress(IPAddress("239.1.1.1")!, host: "a") }
    }

    @Test func bindAddresses() throws {
        #expect(try BindAddress(parsing: ":8080") == BindAddress(host: "0.0.0.0", port: 8080))
        #expect(try BindAddress(parsing: "127.0.0.1:9000") == BindAddress(host: "127.0.0.1", port: 9000))
        #expect(try BindAddress(parsing: "[::1]:81") == BindAddress(host: "::1", port: 81))
        #expect(try BindAddress(parsing: "[::1]:81").description == "[::1]:81")
        #expect(throws: ServerConfigurationError.self) { try BindAddress(parsing: "localhost") }
        #expect(throws: ServerConfigurationError.self) { try BindAddress(parsing: "host:70000") }
        #expect(throws: ServerConfigurationError.self) { try BindAddress(parsing: "::1:80") }
    }

    @Test func defaultOptionsAreWhatURLsStartFrom() throws {
        var defaults = ProcessingOptions()
        defaults.autoRotate = false
        let (parsed, _) = try ImgproxyPath.parse("/insecure/w:10/plain/http://a.test/a.jpg", defaults: defaults)
        #expect(!parsed.options.autoRotate)
        #expect(parsed.options.width == 10)
        let (overridden, _) = try ImgproxyPath.parse("/insecure/ar:1/plain/http://a.test/a.jpg", defaults: defaults)
        #expect(overridden.options.autoRotate)
    }

    // MARK: Through the server

    @Test func truncatedSignaturesAndTrustedSignatures() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 32, height: 24), contentType: "image/jpeg"))
        let key = SigningKey(key: Array("secret".utf8), salt: Array("salt".utf8))
        let server = try await ServerHarness.start {
            $0.keys = [key]
            $0.signatureSize = 4
            $0.trustedSignatures = ["let-me-in"]
        }
        defer { Task { await server.stop() } }
        let source = origin.url("/a.jpg").absoluteString
        let short = ImgproxyURLBuilder(baseURL: server.baseURL, key: key, signatureSize: 4).url(for: source, format: .png)
        #expect(try await server.request(short).status == 200)
        let full = ImgproxyURLBuilder(baseURL: server.baseURL, key: key).url(for: source, format: .png)
        #expect(try await server.request(full).status == 403)
        #expect(try await server.request("/let-me-in/plain/\(source)@png").status == 200)
        #expect(try await server.request("/insecure/plain/\(source)@png").status == 403)
    }

    @Test func pathPrefixBaseURLAndUserAgent() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/pics/a.jpg", .ok(TestImages.jpeg(width: 32, height: 24), contentType: "image/jpeg"))
        origin.route("/elsewhere/a.jpg", .redirect(to: "/pics/a.jpg"))
        let server = try await ServerHarness.start {
            $0.pathPrefix = "images/"
            $0.sourceURLRewriter = SourceURLRewriter(baseURL: origin.url("/").absoluteString,
                                                     replacements: [.init(pattern: "pics:", replacement: "pics/")])
            $0.userAgent = "imgproxy-compatible/1"
            $0.maxRedirects = 0
        }
        defer { Task { await server.stop() } }
        #expect(server.service.configuration.pathPrefix == "/images")
        let ok = try await server.request("/images/insecure/w:16/plain/pics:a.jpg@png")
        #expect(ok.status == 200)
        #expect(try ok.image().width == 16)
        #expect(origin.requests("/pics/a.jpg").first?.headers.first(name: "User-Agent") == "imgproxy-compatible/1")
        #expect(try await server.request("/insecure/w:16/plain/pics:a.jpg@png").status == 404)
        #expect(try await server.request("/images/health").status == 200)
        #expect(try await server.request("/health").status == 404)
        #expect(try await server.request("/images/metrics").status == 200)
        // No redirect is followed with maxRedirects 0.
        #expect(try await server.request("/images/insecure/w:16/plain/elsewhere/a.jpg@png").status == 502)
    }

    @Test func etagAndLastModifiedCanBeTurnedOff() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 32, height: 24), contentType: "image/jpeg")
            .header("Last-Modified", "Tue, 01 Jan 2030 00:00:00 GMT"))
        let on = try await ServerHarness.start()
        let path = on.path(origin.url("/a.jpg"), "w:8", ext: "png")
        let first = try await on.request(path)
        let etag = try #require(first.header("ETag"))
        #expect(first.header("Last-Modified") == "Tue, 01 Jan 2030 00:00:00 GMT")
        #expect(try await on.request(path, headers: [("If-None-Match", etag)]).status == 304)
        await on.stop()

        let off = try await ServerHarness.start {
            $0.useETag = false
            $0.useLastModified = false
        }
        defer { Task { await off.stop() } }
        let reply = try await off.request(path)
        #expect(reply.status == 200)
        #expect(reply.header("ETag") == nil && reply.header("Last-Modified") == nil)
        #expect(try await off.request(path, headers: [("If-None-Match", etag)]).status == 200)
        #expect(try await off.request(path, headers: [("If-Modified-Since", "Tue, 01 Jan 2030 00:00:00 GMT")]).status == 200)
    }

    @Test func debugHeadersGiveTheOriginAndResultSizes() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        let jpeg = TestImages.jpeg(width: 64, height: 48)
        origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
        let server = try await ServerHarness.start { $0.debugHeaders = true }
        defer { Task { await server.stop() } }
        let path = server.path(origin.url("/a.jpg"), "rs:fit:32:32", ext: "png")
        for _ in 0..<2 {  // produced, then from the result cache
            let reply = try await server.request(path)
            #expect(reply.status == 200)
            #expect(reply.header("X-Origin-Width") == "64" && reply.header("X-Origin-Height") == "48")
            #expect(reply.header("X-Origin-Content-Length") == String(jpeg.count))
            #expect(reply.header("X-Result-Width") == "32" && reply.header("X-Result-Height") == "24")
        }
        let plain = try await ServerHarness.start()
        defer { Task { await plain.stop() } }
        #expect(try await plain.request(path).header("X-Result-Width") == nil)
    }

    @Test func enforcedWebPReplacesTheRequestedFormatForClientsThatAcceptIt() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 32, height: 24), contentType: "image/jpeg"))
        origin.route("/anim.gif", .ok(TestImages.animatedGIF(width: 16, height: 16), contentType: "image/gif"))
        let server = try await ServerHarness.start {
            $0.enforceWebP = true
            $0.autoWebP = false
        }
        defer { Task { await server.stop() } }
        let path = server.path(origin.url("/a.jpg"), "w:16", ext: "png")
        let webp = try await server.request(path, headers: [("Accept", "image/webp,*/*")])
        #expect(webp.format == .webp)
        #expect(webp.header("Vary") == "Accept")
        let png = try await server.request(path, headers: [("Accept", "*/*")])
        #expect(png.format == .png)
        #expect(png.header("Vary") == "Accept")
        #expect(webp.header("ETag") != png.header("ETag"))
        // Enforcement implies auto-WebP for URLs without a format.
        #expect(try await server.request(server.path(origin.url("/a.jpg"), "w:16"), headers: [("Accept", "image/webp")]).format == .webp)

        let avif = try await ServerHarness.start { $0.enforceAVIF = true }
        defer { Task { await avif.stop() } }
        let still = try await avif.request(path, headers: [("Accept", "image/avif,image/webp")])
        #expect(still.format == .avif)
        // An animated result is not made AVIF: the GIF asked for stays GIF.
        let animated = try await avif.request(avif.path(origin.url("/anim.gif"), "", ext: "gif"), headers: [("Accept", "image/avif")])
        #expect(animated.format == .gif)
    }

    @Test func metricsOnASeparateAddress() async throws {
        // A port the system says is free (a random one could be another test's server).
        let port = try LoopbackPort.free()
        let server = try await ServerHarness.start { $0.metricsAddress = BindAddress(host: "127.0.0.1", port: port) }
        defer { Task { await server.stop() } }
        #expect(try await server.request("/metrics").status == 404)
        var metrics: ServerHarness.Reply?
        let deadline = ContinuousClock.now + .seconds(300)
        while metrics == nil, ContinuousClock.now < deadline {
            metrics = try? await server.request("http://127.0.0.1:\(port)/metrics")
            if metrics == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let reply = try #require(metrics)
        #expect(reply.status == 200)
        #expect(reply.text.contains("alcedo_"))
        // The pooled connection may have been closed by the server meanwhile: asked again once.
        var health = try? await server.request("http://127.0.0.1:\(port)/health")
        if health == nil { health = try await server.request("http://127.0.0.1:\(port)/health") }
        #expect(health?.status == 404)
    }
}

@Suite("Server: imgproxy's secret, CORS, health path and ETag buster")
struct ImgproxyAccessSettingsTests {
    @Test func secretCORSHealthPathAndETagBuster() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 32, height: 24), contentType: "image/jpeg"))
        let server = try await ServerHarness.start {
            $0.secret = "s3cret"
            $0.allowOrigin = "https://app.example.com"
            $0.healthCheckPath = "/ready"
            $0.etagBuster = "v2"
        }
        defer { Task { await server.stop() } }
        let path = server.path(origin.url("/a.jpg"), "w:8", ext: "png")
        let refused = try await server.request(path)
        #expect(refused.status == 403)
        #expect(refused.header("Access-Control-Allow-Origin") == "https://app.example.com")
        #expect(try await server.request(path, headers: [("Authorization", "Bearer wrong!")]).status == 403)
        let allowed = try await server.request(path, headers: [("Authorization", "Bearer s3cret")])
        #expect(allowed.status == 200)
        #expect(allowed.header("Access-Control-Allow-Origin") == "https://app.example.com")
        #expect(allowed.header("Access-Control-Allow-Methods") == "GET, OPTIONS")
        let preflight = try await server.request(path, method: .OPTIONS)
        #expect(preflight.status == 200)
        #expect(preflight.header("Access-Control-Allow-Origin") == "https://app.example.com")
        #expect(try await server.request("/ready").status == 200)
        #expect(try await server.request("/health").status == 200, "the health check needs no secret")

        let plain = try await ServerHarness.start()
        defer { Task { await plain.stop() } }
        let unbusted = try await plain.request(path)
        #expect(unbusted.header("Access-Control-Allow-Origin") == nil)
        #expect(try await plain.request(path, method: .OPTIONS).status != 200)
        #expect(unbusted.header("ETag") != nil && allowed.header("ETag") != nil)
        #expect(unbusted.header("ETag") != allowed.header("ETag"), "the buster changes the ETag")
    }
}

@Suite("Server: imgproxy's Last-Modified buster")
struct ImgproxyLastModifiedBusterTests {
    @Test func olderSourcesAreDatedTheBuster() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/old.jpg", .ok(TestImages.jpeg(width: 16, height: 16), contentType: "image/jpeg")
            .header("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT"))
        origin.route("/new.jpg", .ok(TestImages.jpeg(width: 16, height: 16), contentType: "image/jpeg")
            .header("Last-Modified", "Tue, 01 Jan 2030 00:00:00 GMT"))
        let server = try await ServerHarness.start {
            $0.lastModifiedBuster = HTTPDate.parse("Fri, 01 Mar 2024 00:00:00 GMT")
        }
        defer { Task { await server.stop() } }
        let old = server.path(origin.url("/old.jpg"), "w:8", ext: "png")
        #expect(try await server.request(old).header("Last-Modified") == "Fri, 01 Mar 2024 00:00:00 GMT")
        // A CDN's copy dated by the source alone is stale now.
        let stale = try await server.request(old, headers: [("If-Modified-Since", "Mon, 01 Jan 2024 00:00:00 GMT")])
        #expect(stale.status == 200)
        let fresh = try await server.request(old, headers: [("If-Modified-Since", "Fri, 01 Mar 2024 00:00:00 GMT")])
        #expect(fresh.status == 304)
        let new = server.path(origin.url("/new.jpg"), "w:8", ext: "png")
        #expect(try await server.request(new).header("Last-Modified") == "Tue, 01 Jan 2030 00:00:00 GMT")
    }
}

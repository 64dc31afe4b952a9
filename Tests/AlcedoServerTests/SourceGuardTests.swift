import Alcedo
@testable import AlcedoServer
import Foundation
import Testing

@Suite("Source guard")
struct SourceGuardTests {
    @Test(arguments: [
        ("127.0.0.1", true), ("127.255.0.9", true), ("10.1.2.3", true), ("172.16.0.1", true), ("172.31.255.255", true),
        ("172.32.0.1", false), ("192.168.1.1", true), ("169.254.169.254", true), ("100.64.0.1", true),
        ("100.127.255.255", true), ("100.128.0.1", false), ("224.0.0.1", true), ("239.1.1.1", true), ("0.0.0.0", true),
        ("255.255.255.255", true), ("8.8.8.8", false), ("93.184.216.34", false),
        ("::1", true), ("::", true), ("fc00::1", true), ("fd12:3456::1", true), ("fe80::1", true), ("febf::1", true),
        ("ff02::1", true), ("::ffff:127.0.0.1", true), ("::ffff:10.0.0.1", true), ("::ffff:8.8.8.8", false),
        ("2001:4860:4860::8888", false), ("[::1]", true),
    ])
    func forbiddenRanges(_ text: String, _ forbidden: Bool) throws {
        let address = try #require(IPAddress(text))
        #expect((SourceGuard.forbiddenRange(of: address) != nil) == forbidden, "\(text)")
    }

    @Test func schemesAndPrefixes() throws {
        let guardAll = SourceGuard()
        for refused in ["file:///etc/passwd", "data:image/png;base64,AAAA", "ftp://a.test/x.jpg", "gopher://a.test/", "/relative/x.jpg", "http:///nohost"] {
            #expect(throws: SourceRefusal.self, "\(refused)") { _ = try guardAll.checkSource(refused) }
        }
        #expect(try guardAll.checkSource("https://a.test/x.jpg").host == "a.test")
        let prefixed = SourceGuard(allowedSources: ["https://cdn.test/images/"])
        #expect(throws: SourceRefusal.self) { _ = try prefixed.checkSource("https://cdn.test/other/x.jpg") }
        #expect(throws: SourceRefusal.self) { _ = try prefixed.checkSource("https://cdn.test.evil/images/x.jpg") }
        _ = try prefixed.checkSource("https://cdn.test/images/x.jpg")
    }

    @Test func loopbackIsRefusedByDefaultAndAllowedWithTheFlag() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/s.jpg", .ok(TestImages.jpeg(width: 32, height: 32), contentType: "image/jpeg"))
        let guarded = try await ServerHarness.start { $0.allowPrivateNetworks = false }
        defer { Task { await guarded.stop() } }
        let refused = try await guarded.request(guarded.path(origin.url("/s.jpg"), "w:16"))
        #expect(refused.status == 403)
        #expect(refused.header("X-Alcedo-Error")?.contains("loopback") == true)
        // By name too: the resolved address is checked.
        let byName = try await guarded.request("/insecure/w:16/plain/http://localhost:\(origin.port)/s.jpg")
        #expect(byName.status == 403)
        #expect(origin.requestCount("/s.jpg") == 0)
        for scheme in ["file:///etc/passwd", "data:image/png;base64,iVBORw0KGgo="] {
            #expect(try await guarded.request("/insecure/plain/" + scheme).status == 403)
        }

        let open = try await ServerHarness.start { $0.allowPrivateNetworks = true }
        defer { Task { await open.stop() } }
        #expect(try await open.request(open.path(origin.url("/s.jpg"), "w:16")).status == 200)
    }

    @Test func aRedirectToLoopbackIsRefused() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/s.jpg", .ok(TestImages.jpeg(width: 32, height: 32), contentType: "image/jpeg"))
        origin.route("/direct.jpg", .ok(TestImages.jpeg(width: 32, height: 32), contentType: "image/jpeg"))
        origin.route("/hop", .redirect(to: origin.url("/s.jpg").absoluteString))
        // "localhost" stands for an allowed origin: trusted by name, so its first request passes;
        // the redirect goes to 127.0.0.1, which is checked like any other address.
        let harness = try await ServerHarness.start {
            $0.allowPrivateNetworks = false
            $0.trustedSourceHosts = ["localhost"]
        }
        defer { Task { await harness.stop() } }
        let allowed = try await harness.request("/insecure/w:16/plain/http://localhost:\(origin.port)/direct.jpg")
        #expect(allowed.status == 200, "the trusted host itself is served")
        let redirected = try await harness.request("/insecure/w:16/plain/http://localhost:\(origin.port)/hop")
        #expect(redirected.status == 403)
        #expect(redirected.header("X-Alcedo-Error")?.contains("127.0.0.1") == true)
        #expect(origin.requestCount("/hop") == 1)
        #expect(origin.requestCount("/s.jpg") == 0)
    }

    @Test func allowedSourcesRestrictByPrefix() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/ok/a.jpg", .ok(TestImages.jpeg(width: 32, height: 32), contentType: "image/jpeg"))
        origin.route("/no/a.jpg", .ok(TestImages.jpeg(width: 32, height: 32), contentType: "image/jpeg"))
        let harness = try await ServerHarness.start { $0.allowedSources = [origin.url("/ok/").absoluteString] }
        defer { Task { await harness.stop() } }
        #expect(try await harness.request(harness.path(origin.url("/ok/a.jpg"), "w:16")).status == 200)
        #expect(try await harness.request(harness.path(origin.url("/no/a.jpg"), "w:16")).status == 403)
        #expect(origin.requestCount("/no/a.jpg") == 0)
    }
}

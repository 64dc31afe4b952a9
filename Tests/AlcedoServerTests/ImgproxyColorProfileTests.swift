import Alcedo
@testable import AlcedoServer
import Foundation
import Testing

/// `strip_color_profile`: by default a result is converted to sRGB and carries no profile; with
/// `scp:0` it keeps the source's colour space and embeds its ICC profile, as imgproxy exports
/// the result back to the source's profile.
@Suite("Server: strip_color_profile")
struct ImgproxyColorProfileTests {
    static let tagged: Data = {
        let url = Bundle.module.url(forResource: "adobe-rgb", withExtension: "jpg", subdirectory: "Fixtures")!
        return try! Data(contentsOf: url)
    }()

    @Test func keepsTheSourceProfileWhenAsked() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/tagged.jpg", .ok(Self.tagged, contentType: "image/jpeg"))
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        let icc = Data("ICC_PROFILE".utf8)

        let converted = try await harness.request(harness.path(origin.url("/tagged.jpg"), "w:16"))
        #expect(converted.status == 200 && converted.format == .jpeg)
        #expect(converted.body.range(of: icc) == nil, "sRGB, no profile")
        let kept = try await harness.request(harness.path(origin.url("/tagged.jpg"), "w:16/scp:0"))
        #expect(kept.status == 200 && kept.format == .jpeg)
        #expect(kept.body.range(of: icc) != nil, "the Adobe RGB profile is embedded")
        // Read through its profile, the kept result shows the same colours as the converted one
        // (away from edges, where resampling in another colour space blends differently).
        let a = try converted.image(), b = try kept.image()
        #expect(a.pixelSize == b.pixelSize)
        for (x, y) in [(0, 0), (10, 6), (13, 9)] where y < a.height && x < a.width {
            #expect(a.pixel(x: x, y: y).isClose(to: b.pixel(x: x, y: y), tolerance: 12), "(\(x), \(y))")
        }
        // The stored pixels differ: they are Adobe RGB values, not sRGB ones.
        let raw = try ImageCodecRegistry.shared.decode(kept.body, options: DecodingOptions(colorManagement: .ignore))
        let differs = (0..<min(raw.width, a.width)).contains { x in
            !raw.pixel(x: x, y: 0).isClose(to: a.pixel(x: x, y: 0), tolerance: 2)
        }
        #expect(differs)
        // PNG embeds it too (iCCP); scp:1 converts, as the default.
        let png = try await harness.request(harness.path(origin.url("/tagged.jpg"), "w:16/scp:0", ext: "png"))
        #expect(png.body.range(of: Data("iCCP".utf8)) != nil)
        let stripped = try await harness.request(harness.path(origin.url("/tagged.jpg"), "w:16/scp:1"))
        #expect(stripped.body.range(of: icc) == nil)
    }

    /// `--no-strip-color-profile` (`IMGPROXY_STRIP_COLOR_PROFILE=false`) makes keeping the default.
    @Test func theServerDefaultKeepsTheProfile() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/tagged.jpg", .ok(Self.tagged, contentType: "image/jpeg"))
        let harness = try await ServerHarness.start { $0.defaultOptions.stripColorProfile = false }
        defer { Task { await harness.stop() } }
        let kept = try await harness.request(harness.path(origin.url("/tagged.jpg"), "w:16"))
        #expect(kept.body.range(of: Data("ICC_PROFILE".utf8)) != nil)
        let stripped = try await harness.request(harness.path(origin.url("/tagged.jpg"), "w:16/scp:1"))
        #expect(stripped.body.range(of: Data("ICC_PROFILE".utf8)) == nil)
    }
}

import Alcedo
@testable import AlcedoServer
import Foundation
import Testing

/// imgproxy 4's options through a real server on loopback: the preferred output formats,
/// `Content-Disposition`, `expires`, security options, `raw`, `skip_processing`, the watermark
/// and the result-dimension limit.
@Suite("Server: imgproxy options over HTTP")
struct ImgproxyServingTests {
    static func webp(alpha: Bool) -> Data {
        var pixels = [UInt8](repeating: 200, count: 60 * 40 * 4)
        for index in stride(from: 3, to: pixels.count, by: 4) { pixels[index] = alpha && index % 8 == 3 ? 0 : 255 }
        return try! ImageCodecRegistry.shared.encode(AlcedoImage(width: 60, height: 40, pixels: pixels), as: .webp,
                                                     options: EncodingOptions(quality: 90))
    }

    @Test func preferredFormatsAndHeaders() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/photo.webp", .ok(Self.webp(alpha: false), contentType: "image/webp"))
        origin.route("/clear.webp", .ok(Self.webp(alpha: true), contentType: "image/webp"))
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 200, height: 100), contentType: "image/jpeg"))
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }

        // A WebP source without negotiation: JPEG, or PNG when it has transparency.
        let photo = try await harness.request(harness.path(origin.url("/photo.webp"), "w:30"))
        #expect(photo.status == 200 && photo.format == .jpeg)
        #expect(photo.header("Content-Disposition") == "inline; filename=\"photo.jpg\"")
        let clear = try await harness.request(harness.path(origin.url("/clear.webp"), "w:30"))
        #expect(clear.format == .png)
        // Negotiated WebP still wins for clients that accept it.
        let negotiated = try await harness.request(harness.path(origin.url("/photo.webp"), "w:30"), headers: [("Accept", "image/webp")])
        #expect(negotiated.format == .webp)
        // File name and attachment.
        let named = try await harness.request(harness.path(origin.url("/a.jpg"), "w:20/fn:cat/att:1", ext: "png"))
        #expect(named.header("Content-Disposition") == "attachment; filename=\"cat.png\"")
        // Expired: 404, as imgproxy. Security options: 403 unless allowed.
        #expect(try await harness.request(harness.path(origin.url("/a.jpg"), "exp:1000")).status == 404)
        let refused = try await harness.request(harness.path(origin.url("/a.jpg"), "mrd:50"))
        #expect(refused.status == 403 && refused.header("X-Alcedo-Error")?.contains("security") == true)
        // Any signature segment without keys; %3A in the options.
        let unsafe = try await harness.request("/unsafe/rs%3Afit%3A40%3A40/plain/" + origin.url("/a.jpg").absoluteString)
        #expect(unsafe.status == 200)
        #expect(try unsafe.image().pixelSize == PixelSize(width: 40, height: 20))
        // raw: the source's bytes; skp for a matching format too.
        let raw = try await harness.request(harness.path(origin.url("/photo.webp"), "raw:1/w:10"))
        #expect(raw.status == 200 && raw.body == Self.webp(alpha: false))
        let skipped = try await harness.request(harness.path(origin.url("/photo.webp"), "skp:webp/w:10"))
        #expect(skipped.body == Self.webp(alpha: false))
        let notSkipped = try await harness.request(harness.path(origin.url("/a.jpg"), "skp:webp/w:10"))
        #expect(try notSkipped.image().width == 10)
    }

    @Test func securityOptionsWatermarkAndResultDimension() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 200, height: 100), contentType: "image/jpeg"))
        let mark = try ImageCodecRegistry.shared.encode(AlcedoImage(width: 10, height: 10,
                                                                    pixels: [UInt8](repeating: 255, count: 400).enumerated()
                                                                        .map { $0.offset % 4 == 1 || $0.offset % 4 == 3 ? 255 : 0 }),
                                                        as: .png)
        let harness = try await ServerHarness.start { configuration in
            configuration.allowSecurityOptions = true
            configuration.maxResultDimension = 150
            configuration.watermark = try? WatermarkImage(data: mark)
        }
        defer { Task { await harness.stop() } }
        // The server's result dimension scales results down; the URL's mrd replaces it.
        let limited = try await harness.request(harness.path(origin.url("/a.jpg"), "f:png"))
        #expect(try limited.image().pixelSize == PixelSize(width: 150, height: 75))
        let own = try await harness.request(harness.path(origin.url("/a.jpg"), "mrd:50/f:png"))
        #expect(try own.image().pixelSize == PixelSize(width: 50, height: 25))
        // msr below the source: refused before decoding.
        #expect(try await harness.request(harness.path(origin.url("/a.jpg"), "msr:0.001")).status == 422)
        // The watermark (green 10x10) in the south-east corner.
        let marked = try await harness.request(harness.path(origin.url("/a.jpg"), "w:100/wm:1:soea/f:png"))
        let image = try marked.image()
        #expect(image.pixel(x: 95, y: 45).isClose(to: RGBA(red: 0, green: 255, blue: 0), tolerance: 10))
        #expect(!image.pixel(x: 85, y: 45).isClose(to: RGBA(red: 0, green: 255, blue: 0), tolerance: 10))
    }
}

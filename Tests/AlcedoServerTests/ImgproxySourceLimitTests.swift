import Alcedo
@testable import AlcedoServer
import Foundation
import Testing

/// `raw` as imgproxy's stream handler answers it, `max_src_file_size` checked while the
/// source downloads, and `max_animation_frames` keeping the first frames: through a real
/// server and a loopback origin.
@Suite("Server: raw, max_src_file_size and max_animation_frames")
struct ImgproxySourceLimitTests {
    /// A large body that is not an image, sent in pieces without `Content-Length`.
    static let text = Data(String(repeating: "not an image, ", count: 4000).utf8)

    @Test func rawStreamsTheSourceResponseAsItIs() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        var document = TestHTTPServer.Response.ok(Self.text, contentType: "text/plain").chunked(1000)
        document.contentLength = .none
        origin.route("/notes.txt", document.header("ETag", "\"v1\""))
        origin.route("/big.txt", .ok(Self.text, contentType: "text/plain"))
        origin.route("/moved", .redirect(to: "/notes.txt"))
        let harness = try await ServerHarness.start { $0.allowSecurityOptions = true }
        defer { Task { await harness.stop() } }

        // Not an image, no Content-Length, after a redirect: passed on with its type and ETag.
        let raw = try await harness.request(harness.path(origin.url("/moved"), "raw:1"))
        #expect(raw.status == 200)
        #expect(raw.body == Self.text)
        #expect(raw.header("Content-Type") == "text/plain")
        #expect(raw.header("ETag") == "\"v1\"")
        // The origin's status stays.
        let missing = try await harness.request(harness.path(origin.url("/nowhere.png"), "raw:1"))
        #expect(missing.status == 404)
        // The source checks still apply.
        let refused = try await harness.request(harness.path(URL(string: "ftp://a.test/x.png")!, "raw:1"))
        #expect(refused.status == 403 || refused.status == 400)
        // max_src_file_size: a Content-Length over it is refused before anything is sent…
        let announced = try await harness.request(harness.path(origin.url("/big.txt"), "raw:1/msfs:1000"))
        #expect(announced.status == 422)
        // …and a body without one is cut off once it passes the limit.
        let cut = try? await harness.request(harness.path(origin.url("/notes.txt"), "raw:1/msfs:5000"))
        #expect(cut.map { $0.body.count <= 5000 + 1000 } ?? true, "the body stops near the limit")
    }

    @Test func maxSrcFileSizeStopsTheDownload() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        // Large enough (several seconds of chunks) that the origin is still sending when the
        // download is given up, however loaded the machine.
        let big = TestImages.noisePNG(width: 400, height: 400)
        var streamed = TestHTTPServer.Response.ok(big, contentType: "image/png").chunked(2000, every: .milliseconds(20))
        streamed.contentLength = .none
        origin.route("/streamed.png", streamed)
        origin.route("/announced.png", .ok(big, contentType: "image/png").chunked(2000, every: .milliseconds(20)))
        let png = TestImages.noisePNG(width: 120, height: 120)
        origin.route("/small.png", .ok(png, contentType: "image/png").chunked(2000, every: .milliseconds(20)))
        let harness = try await ServerHarness.start { $0.allowSecurityOptions = true }
        defer { Task { await harness.stop() } }

        let announced = try await harness.request(harness.path(origin.url("/announced.png"), "msfs:4000/w:10"))
        #expect(announced.status == 422)
        let streamedReply = try await harness.request(harness.path(origin.url("/streamed.png"), "msfs:4000/w:10"))
        #expect(streamedReply.status == 422)
        // The download was given up: the connection closed before the whole body went out.
        #expect(origin.abortedCount("/streamed.png") + origin.abortedCount("/announced.png") >= 1)
        // Within the limit: processed as usual.
        let fits = try await harness.request(harness.path(origin.url("/small.png"), "msfs:\(png.count)/w:10"))
        #expect(fits.status == 200)
    }

    @Test func maxAnimationFramesKeepsTheFirstFrames() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        let frames = (0..<3).map { index in
            AlcedoImage.Frame(pixels: [UInt8](repeating: 0, count: 16 * 16 * 4).enumerated().map { $0.offset % 4 == 3 ? 255 : UInt8(index * 100) },
                              duration: 0.1)
        }
        let gif = try ImageCodecRegistry.shared.encode(AlcedoImage(width: 16, height: 16, frames: frames), as: .gif)
        origin.route("/three.gif", .ok(gif, contentType: "image/gif"))
        let harness = try await ServerHarness.start { $0.allowSecurityOptions = true }
        defer { Task { await harness.stop() } }

        let all = try await harness.request(harness.path(origin.url("/three.gif")))
        #expect(try all.image().frames.count == 3)
        let two = try await harness.request(harness.path(origin.url("/three.gif"), "maf:2"))
        #expect(two.status == 200 && two.format == .gif)
        #expect(try two.image().frames.count == 2)
        let one = try await harness.request(harness.path(origin.url("/three.gif"), "maf:1"))
        #expect(one.status == 200)
        #expect(try one.image().frames.count == 1)
    }
}

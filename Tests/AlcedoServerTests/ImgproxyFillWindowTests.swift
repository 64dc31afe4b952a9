import Alcedo
@testable import AlcedoServer
import AlcedoTestSupport
import Foundation
import Testing

/// A resize followed by a crop of its result (`fill`, `fill-down`, a gravity crop, thumbor's
/// crop to fill) makes only the crop, as libvips' demand-driven resize does: the same pixels
/// as scaling the whole image and cutting the crop out, but an extreme aspect ratio no longer
/// needs the whole scaled image's memory.
@Suite("imgproxy: a fill makes only its crop")
struct ImgproxyFillWindowTests {
    /// A gradient with a patch of noise on its right, where content-aware cropping looks.
    static func picture(width: Int, height: Int, alpha: Bool = false) -> AlcedoImage {
        var random = SeededRandom(seed: 7)
        var pixels = TestImages.gradient(width: width, height: height).pixels
        for y in (height / 3)..<(height * 2 / 3) {
            for x in (width * 3 / 4)..<width {
                let value = random.next()
                let index = (y * width + x) * 4
                pixels[index] = UInt8(truncatingIfNeeded: value)
                pixels[index + 1] = UInt8(truncatingIfNeeded: value >> 8)
                pixels[index + 2] = UInt8(truncatingIfNeeded: value >> 16)
            }
        }
        if alpha {
            for y in 0..<(height / 5) {
                for x in 0..<width { pixels[(y * width + x) * 4 + 3] = UInt8(x * 255 / max(1, width - 1)) }
            }
        }
        return AlcedoImage(width: width, height: height, pixels: pixels)
    }

    static let gravities: [ProcessingOptions.Gravity] = [
        .center, .compass(.north, xOffset: 0, yOffset: 0), .compass(.southEast, xOffset: 7, yOffset: 3),
        .compass(.west, xOffset: 0.1, yOffset: 0), .focusPoint(x: 0.8, y: 0.3), .compass(.smart, xOffset: 0, yOffset: 0),
    ]

    /// The crop made alone equals the crop of the whole scaled image, for every gravity
    /// (smart included: it chooses on the pixels its analysis reads, made alone).
    @Test(arguments: [(PixelSize(width: 300, height: 225), 300, 200), (PixelSize(width: 300, height: 225), 120, 0),
                      (PixelSize(width: 1067, height: 800), 100, 800), (PixelSize(width: 600, height: 450), 0, 60)])
    func cropOfTheWindowEqualsTheWholeCut(_ scaled: PixelSize, _ width: Int, _ height: Int) {
        for alpha in [false, true] {
            let image = Self.picture(width: 400, height: 300, alpha: alpha)
            for gravity in Self.gravities {
                let whole = ImgproxyProcessor.crop(image.resized(to: scaled), width: width, height: height, gravity: gravity, dpr: 1)
                let window = ImgproxyProcessor.resize(image, to: scaled, croppingTo: width, height, gravity: gravity, dpr: 1)
                #expect(window.pixelSize == whole.pixelSize)
                #expect(window.frames[0].pixels == whole.frames[0].pixels, "\(scaled) crop \(width)x\(height) \(gravity) alpha \(alpha)")
            }
        }
    }

    private func options(_ path: String) throws -> ProcessingOptions {
        try ImgproxyPath.parse("/insecure/\(path)/plain/http://a.test/x").path.options
    }

    /// What the budget reserves besides the result follows the crop: an extreme fill reserves
    /// the resampler's rows for its crop, not its 341 MB scaled image.
    @Test func theReservationFollowsTheCrop() throws {
        let source = PixelSize(width: 2000, height: 1500)
        let extreme = ImgproxyProcessor(options: try options("rs:fill:100:8000:1"))
        #expect(extreme.outputSize(for: source) == PixelSize(width: 100, height: 8000))
        #expect(extreme.intermediateBytes(for: source) < 4 << 20)
        let smart = ImgproxyProcessor(options: try options("rs:fill:100:8000:1/g:sm"))
        #expect(smart.intermediateBytes(for: source) < 24 << 20)
        #expect(ImgproxyProcessor(options: try options("rs:fit:300:200")).intermediateBytes(for: source) == 0)
    }

    /// Process-level, with the shipped binary under a small budget (128 MiB, 80 of them for
    /// requests): fills whose scaled image alone would take 341 MB, 192 MB and 2 GB are served
    /// at imgproxy's sizes; the result-dimension limit scales them down as imgproxy does; the
    /// largest result side still refuses what is over it.
    @Test func extremeFillsAreServedUnderASmallBudget() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 2000, height: 1500), contentType: "image/jpeg"))
        let source = origin.url("/a.jpg").absoluteString
        let client = OneShotClient()

        let server = try await ServeProcess.start(["--max-memory", "128", "--result-cache-bytes", "0", "--max-result-side", "20000"])
        defer { server.stop() }
        for (options, expected) in [("rs:fill:100:8000:1", PixelSize(width: 100, height: 8000)),
                                    ("rs:fill:8000:50:1/g:sm", PixelSize(width: 8000, height: 50)),
                                    ("rs:fill:100:20000:1/g:so", PixelSize(width: 100, height: 20000)),
                                    ("rs:fill-down:100:8000:1", PixelSize(width: 100, height: 8000))] {
            let reply = try await client.get(server.baseURL + "/insecure/\(options)/plain/\(source)@png")
            #expect(reply.status == 200, "\(options): \(reply.status) \(String(decoding: reply.body, as: UTF8.self).prefix(300))")
            if reply.status == 200 {
                #expect(try ImageCodecRegistry.shared.decode(reply.body).pixelSize == expected, "\(options)")
            }
        }
        // thumbor's crop to fill (which enlarges) takes the same path.
        let thumborServer = try await ServeProcess.start(["--dialect", "thumbor", "--max-memory", "128", "--result-cache-bytes", "0"])
        defer { thumborServer.stop() }
        let thumbor = try await client.get(thumborServer.baseURL + "/unsafe/100x8000/" + source.dropFirst("http://".count))
        #expect(thumbor.status == 200, "thumbor: \(thumbor.status)")
        if thumbor.status == 200 {
            #expect(try ImageCodecRegistry.shared.decode(thumbor.body).pixelSize == PixelSize(width: 100, height: 8000))
        }

        let limited = try await ServeProcess.start(["--max-memory", "128", "--result-cache-bytes", "0"],
                                                   environment: ["IMGPROXY_MAX_RESULT_DIMENSION": "1000"])
        defer { limited.stop() }
        let scaledDown = try await client.get(limited.baseURL + "/insecure/rs:fill:100:8000:1/plain/\(source)@png")
        #expect(scaledDown.status == 200)
        if scaledDown.status == 200 {
            #expect(try ImageCodecRegistry.shared.decode(scaledDown.body).pixelSize == PixelSize(width: 13, height: 1000))
        }

        let defaults = try await ServeProcess.start(["--max-memory", "128", "--result-cache-bytes", "0"])
        defer { defaults.stop() }
        let tooTall = try await client.get(defaults.baseURL + "/insecure/rs:fill:100:20000:1/plain/\(source)")
        #expect(tooTall.status == 422, "over --max-result-side 8192: \(tooTall.status)")
    }

    /// An ordinary fill gives the pixels it gave before: the whole image scaled, then cut.
    @Test func anOrdinaryFillIsUnchanged() async throws {
        let image = Self.picture(width: 400, height: 300)
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/p.png", .ok(try ImageCodecRegistry.shared.encode(image, as: .png), contentType: "image/png"))
        let server = try await ServeProcess.start([])
        defer { server.stop() }
        let client = OneShotClient()
        let scaled = image.resized(to: PixelSize(width: 300, height: 225))
        for (gravity, name) in [(ProcessingOptions.Gravity.center, "ce"), (.compass(.smart, xOffset: 0, yOffset: 0), "sm"),
                                (.compass(.south, xOffset: 0, yOffset: 0), "so")] {
            let reply = try await client.get(server.baseURL + "/insecure/rs:fill:300:200/g:\(name)/plain/\(origin.url("/p.png").absoluteString)@png")
            #expect(reply.status == 200)
            guard reply.status == 200 else { continue }
            let served = try ImageCodecRegistry.shared.decode(reply.body)
            let expected = ImgproxyProcessor.crop(scaled, width: 300, height: 200, gravity: gravity, dpr: 1)
            #expect(served.pixelSize == PixelSize(width: 300, height: 200))
            #expect(served.frames[0].pixels == expected.frames[0].pixels, "g:\(name)")
        }
    }
}

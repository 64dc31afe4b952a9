import Alcedo
@testable import AlcedoServer
import Foundation
import Testing

/// `g:sm`: content-aware crops for `fill` and `crop`, through the real server.
@Suite("Server: smart gravity")
struct SmartGravityTests {
    static let background = RGBA(red: 200, green: 210, blue: 225)

    /// A flat background with one detailed object (random grey and colour noise) whose top-left
    /// corner is at (`x`, `y`), `side` pixels square.
    static func scene(width: Int, height: Int, objectX x: Int, objectY y: Int, side: Int = 80) -> AlcedoImage {
        var random = SeededRandom(seed: 7)
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for row in 0..<height {
            for column in 0..<width {
                let index = (row * width + column) * 4
                if (x..<(x + side)).contains(column), (y..<(y + side)).contains(row) {
                    let value = random.next()
                    pixels[index] = UInt8(truncatingIfNeeded: value)
                    pixels[index + 1] = UInt8(truncatingIfNeeded: value >> 8)
                    pixels[index + 2] = UInt8(truncatingIfNeeded: value >> 16)
                } else {
                    pixels[index] = background.red
                    pixels[index + 1] = background.green
                    pixels[index + 2] = background.blue
                }
            }
        }
        return AlcedoImage(width: width, height: height, pixels: pixels)
    }

    static func png(_ image: AlcedoImage) -> Data { try! ImageCodecRegistry.shared.encode(image, as: .png) }

    /// How many pixels of `image` are not the background (the object's pixels kept), and the
    /// mean x of those pixels.
    static func object(in image: AlcedoImage) -> (pixels: Int, meanX: Int) {
        var count = 0, sumX = 0
        for y in 0..<image.height {
            for x in 0..<image.width where !image.pixel(x: x, y: y).isClose(to: background, tolerance: 12) {
                count += 1
                sumX += x
            }
        }
        return (count, sumX / max(count, 1))
    }

    static func objectPixels(_ image: AlcedoImage) -> Int { object(in: image).pixels }

    @Test func fillKeepsTheObjectWhereCentreCutsItOnBothAxes() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        // Landscape, the object near the right edge; portrait, the object near the top.
        origin.route("/wide.png", .ok(Self.png(Self.scene(width: 600, height: 300, objectX: 460, objectY: 110)), contentType: "image/png"))
        origin.route("/tall.png", .ok(Self.png(Self.scene(width: 300, height: 600, objectX: 110, objectY: 30)), contentType: "image/png"))
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        let object = 80 * 80

        for route in ["/wide.png", "/tall.png"] {
            let smart = try await harness.request(harness.path(origin.url(route), "rs:fill:300:300/g:sm", ext: "png")).image()
            let centre = try await harness.request(harness.path(origin.url(route), "rs:fill:300:300/g:ce", ext: "png")).image()
            #expect(smart.pixelSize == PixelSize(width: 300, height: 300) && centre.pixelSize == smart.pixelSize)
            #expect(Self.objectPixels(smart) > object * 95 / 100, "\(route): g:sm keeps the object")
            #expect(Self.objectPixels(centre) < object / 2, "\(route): g:ce cuts it")
        }
        // Scaled down first (fill 150x150 of 600x300 is 300x150, then cropped): still kept.
        let small = try await harness.request(harness.path(origin.url("/wide.png"), "rs:fill:150:150/g:sm", ext: "png")).image()
        #expect(small.pixelSize == PixelSize(width: 150, height: 150))
        #expect(Self.objectPixels(small) > object / 4 * 90 / 100)
    }

    @Test func theObjectIsCentredInTheCropWhenThereIsRoom() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        // The object's centre at x = 600 of 900: the centre crop (300...600) halves it.
        origin.route("/pano.png", .ok(Self.png(Self.scene(width: 900, height: 300, objectX: 560, objectY: 110)), contentType: "image/png"))
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        let smart = try await harness.request(harness.path(origin.url("/pano.png"), "rs:fill:300:300/g:sm", ext: "png")).image()
        let centre = try await harness.request(harness.path(origin.url("/pano.png"), "rs:fill:300:300", ext: "png")).image()
        #expect(Self.objectPixels(centre) < 80 * 80 * 60 / 100)
        let kept = Self.object(in: smart)
        #expect(kept.pixels > 80 * 80 * 95 / 100)
        #expect(abs(kept.meanX - 150) <= 8, "object centred at x = \(kept.meanX)")
    }

    @Test func cropWithSmartGravityFindsTheObjectOnBothAxes() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/s.png", .ok(Self.png(Self.scene(width: 800, height: 600, objectX: 60, objectY: 470)), contentType: "image/png"))
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        let smart = try await harness.request(harness.path(origin.url("/s.png"), "c:300:300:sm", ext: "png")).image()
        #expect(smart.pixelSize == PixelSize(width: 300, height: 300))
        #expect(Self.objectPixels(smart) > 80 * 80 * 95 / 100)
        // `crop` without its own gravity takes the URL's.
        let inherited = try await harness.request(harness.path(origin.url("/s.png"), "c:300:300/g:sm", ext: "png")).image()
        #expect(Self.objectPixels(inherited) > 80 * 80 * 95 / 100)
        let centre = try await harness.request(harness.path(origin.url("/s.png"), "c:300:300", ext: "png")).image()
        #expect(Self.objectPixels(centre) == 0)
    }

    @Test func aUniformImageIsCroppedAtTheCentre() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        // A flat JPEG (with its compression noise) and a flat PNG with a faint gradient.
        let flat = AlcedoImage(width: 500, height: 250, pixels: [UInt8]((0..<(500 * 250)).flatMap { _ in [90, 140, 60, 255] as [UInt8] }))
        origin.route("/flat.jpg", .ok(try ImageCodecRegistry.shared.encode(flat, as: .jpeg, options: EncodingOptions(quality: 60)),
                                      contentType: "image/jpeg"))
        var gradient = [UInt8](repeating: 255, count: 500 * 250 * 4)
        for y in 0..<250 {
            for x in 0..<500 {
                let index = (y * 500 + x) * 4
                gradient[index] = UInt8(100 + x / 25)
                gradient[index + 1] = UInt8(100 + y / 25)
                gradient[index + 2] = 120
            }
        }
        origin.route("/gradient.png", .ok(Self.png(AlcedoImage(width: 500, height: 250, pixels: gradient)), contentType: "image/png"))
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        for route in ["/flat.jpg", "/gradient.png"] {
            let smart = try await harness.request(harness.path(origin.url(route), "rs:fill:200:200/g:sm", ext: "png"))
            let centre = try await harness.request(harness.path(origin.url(route), "rs:fill:200:200/g:ce", ext: "png"))
            #expect(smart.status == 200)
            #expect(smart.body == centre.body, "\(route): nothing stands out, so the centre")
        }
    }

    @Test func animatedSourcesAreCroppedAlikeInEveryFrame() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        let first = Self.scene(width: 300, height: 100, objectX: 220, objectY: 20, side: 60)
        let frames = AlcedoImage(width: 300, height: 100, frames: [.init(pixels: first.pixels, duration: 0.1),
                                                                   .init(pixels: first.pixels, duration: 0.1)])
        origin.route("/anim.gif", .ok(try ImageCodecRegistry.shared.encode(frames, as: .gif), contentType: "image/gif"))
        let harness = try await ServerHarness.start()
        defer { Task { await harness.stop() } }
        let reply = try await harness.request(harness.path(origin.url("/anim.gif"), "rs:fill:100:100/g:sm"))
        #expect(reply.format == .gif)
        let image = try reply.image()
        #expect(image.frames.count == 2 && image.pixelSize == PixelSize(width: 100, height: 100))
        #expect(image.frames[0].pixels == image.frames[1].pixels)
        #expect(Self.objectPixels(image) > 60 * 60 * 80 / 100)
    }
}

import Alcedo
import AlcedoTestSupport
import AsyncHTTPClient
import Foundation
import Testing

/// `alcedo serve`, run as a user runs it, with TIFF, BMP, ICO, SVG, JPEG XL and HEIC sources
/// and results: every answer is decoded and its size and pixels checked.
@Suite("alcedo serve TIFF, BMP, ICO, SVG, JPEG XL and HEIC end to end")
struct ServeFormatsEndToEndTests {
    /// The sources the origin serves: each a 64x48 image, red on the left and blue on the right
    /// (`halves`), made by Alcedo's encoders; the two-page TIFF is joined by libtiff's `tiffcp`.
    struct Origin {
        let server: TestHTTPServer
        let folder: URL

        static func start() async throws -> Origin {
            let server = try await TestHTTPServer.start()
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-serve-formats-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let opaque = TestImages.halves(width: 64, height: 48)
            let translucent = Self.withAlpha(opaque, 128)
            let registry = ImageCodecRegistry.shared
            let sources: [(String, Data, String)] = [
                ("/a.tif", try registry.encode(opaque, as: .tiff), "image/tiff"),
                ("/alpha.tif", try registry.encode(translucent, as: .tiff), "image/tiff"),
                ("/a.bmp", try registry.encode(opaque, as: .bmp), "image/bmp"),
                ("/alpha.ico", try registry.encode(translucent, as: .ico), "image/x-icon"),
                ("/a.jxl", try registry.encode(opaque, as: .jxl, options: EncodingOptions(quality: 90)), "image/jxl"),
                ("/a.heic", try registry.encode(opaque, as: .heic, options: EncodingOptions(quality: 90)), "image/heic"),
                // A camera's kind of file: the picture plus a 16x12 thumbnail of it.
                ("/thumb.heic", try HEICEncoder(speed: 9, thumbnailSize: 16).encode(opaque, options: EncodingOptions(quality: 90)),
                 "image/heic"),
                ("/a.png", try registry.encode(opaque, as: .png), "image/png"),
                ("/a.svg", Data(Self.svg.utf8), "image/svg+xml"),
                ("/pages.tif", try Self.twoPageTIFF(in: folder), "image/tiff"),
            ]
            for (path, body, type) in sources { server.route(path, .ok(body, contentType: type)) }
            return Origin(server: server, folder: folder)
        }

        func stop() {
            server.stop()
            try? FileManager.default.removeItem(at: folder)
        }

        /// `/insecure/OPTIONS/plain/ORIGIN/NAME` (with `@EXT` appended when given).
        func path(_ name: String, _ options: String, ext: String? = nil) -> String {
            "/insecure" + (options.isEmpty ? "" : "/" + options) + "/plain/" + server.url("/" + name).absoluteString + (ext.map { "@" + $0 } ?? "")
        }

        static func withAlpha(_ image: AlcedoImage, _ alpha: UInt8) -> AlcedoImage {
            var pixels = image.pixels
            for index in stride(from: 3, to: pixels.count, by: 4) { pixels[index] = alpha }
            return AlcedoImage(width: image.width, height: image.height, pixels: pixels)
        }

        /// Page 0 is `halves`, page 1 the same with a green band on top, joined by `tiffcp`.
        static func twoPageTIFF(in folder: URL) throws -> Data {
            let first = folder.appendingPathComponent("p0.tif"), second = folder.appendingPathComponent("p1.tif")
            let joined = folder.appendingPathComponent("pages.tif")
            try ImageCodecRegistry.shared.encode(TestImages.halves(width: 64, height: 48), as: .tiff).write(to: first)
            try ImageCodecRegistry.shared.encode(TestImages.halves(width: 64, height: 48, markTop: true), as: .tiff).write(to: second)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["tiffcp", first.path, second.path, joined.path]
            try ProcessLaunch.run(process)
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw OriginError.tiffcpFailed(process.terminationStatus) }
            return try Data(contentsOf: joined)
        }

        /// A 64x48 SVG drawn as `halves`, with a script, an event attribute and a `javascript:` link.
        static let svg = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="64" height="48" onload="alert(1)">
              <script type="text/javascript">alert(document.cookie)</script>
              <rect x="0" y="0" width="32" height="48" fill="rgb(220,0,0)" onclick="alert(2)"/>
              <a xlink:href="javascript:alert(3)"><rect x="32" y="0" width="32" height="48" fill="rgb(0,0,220)"/></a>
            </svg>
            """

        enum OriginError: Error { case tiffcpFailed(Int32) }
    }

    struct Answer {
        let status: Int
        let contentType: String?
        let vary: String?
        let body: Data
        var format: ImageFormat { ImageFormat.sniff(body) }
        func image() throws -> AlcedoImage { try ImageCodecRegistry.shared.decode(body) }
    }

    static func get(_ server: ServeProcess, _ path: String, accept: String = "*/*") async throws -> Answer {
        var request = HTTPClientRequest(url: server.baseURL + path)
        request.headers.add(name: "Accept", value: accept)
        let response = try await ServerHarness.sharedClient.execute(request, timeout: .seconds(300))
        var body = Data()
        for try await chunk in response.body { body.append(contentsOf: chunk.readableBytesView) }
        return Answer(status: Int(response.status.code), contentType: response.headers.first(name: "Content-Type"),
                      vary: response.headers.first(name: "Vary"), body: body)
    }

    /// Runs `body` with an origin and `alcedo serve` started with `arguments`.
    static func withServer<T>(_ arguments: [String] = [], _ body: (ServeProcess, Origin) async throws -> T) async throws -> T {
        let origin = try await Origin.start()
        defer { origin.stop() }
        let server = try await ServeProcess.start(arguments)
        defer { server.stop() }
        return try await body(server, origin)
    }

    /// Checks that `image` is `halves` scaled to `width` x `height`: red left, blue right,
    /// with `alpha` everywhere.
    static func expectHalves(_ image: AlcedoImage, width: Int = 32, height: Int = 24, alpha: UInt8 = 255,
                             tolerance: Int = 40, _ label: String) {
        #expect(image.width == width && image.height == height, "\(label): \(image.width)x\(image.height)")
        guard image.width == width, image.height == height else { return }
        let left = image.pixel(x: width / 8, y: height / 2), right = image.pixel(x: width - 1 - width / 8, y: height / 2)
        #expect(left.isClose(to: RGBA(red: 220, green: 0, blue: 0, alpha: alpha), tolerance: tolerance), "\(label): left \(left)")
        #expect(right.isClose(to: RGBA(red: 0, green: 0, blue: 220, alpha: alpha), tolerance: tolerance), "\(label): right \(right)")
    }

    @Test("TIFF, BMP, ICO, JPEG XL and HEIC sources are decoded and answered as JPEG, or PNG with alpha")
    func sourcesAnsweredInPreferredFormats() async throws {
        try await Self.withServer { server, origin in
            let cases: [(String, ImageFormat, UInt8, Int)] = [
                ("a.tif", .jpeg, 255, 40), ("alpha.tif", .png, 128, 2), ("a.bmp", .jpeg, 255, 40),
                ("alpha.ico", .png, 128, 2), ("a.jxl", .jpeg, 255, 40), ("a.heic", .jpeg, 255, 40),
            ]
            for (name, expected, alpha, tolerance) in cases {
                let answer = try await Self.get(server, origin.path(name, "rs:fit:32:32"))
                #expect(answer.status == 200, "\(name): \(answer.status) \(String(decoding: answer.body.prefix(300), as: UTF8.self))")
                #expect(answer.format == expected, "\(name) answered as \(answer.format)")
                #expect(answer.contentType == expected.mimeType, "\(name): \(answer.contentType ?? "none")")
                Self.expectHalves(try answer.image(), alpha: alpha, tolerance: tolerance, name)
            }
        }
    }

    @Test("@tiff, @bmp, @ico, @heic, @jxl and f: write each format, decoded back to the scaled image")
    func resultFormats() async throws {
        try await Self.withServer { server, origin in
            for format in [ImageFormat.tiff, .bmp, .ico, .heic, .jxl] {
                let ext = format.rawValue
                for path in [origin.path("a.png", "w:32", ext: ext), origin.path("a.png", "w:32/f:\(ext)")] {
                    let answer = try await Self.get(server, path)
                    #expect(answer.status == 200, "\(path): \(answer.status)")
                    #expect(answer.format == format, "\(path) answered as \(answer.format)")
                    #expect(answer.contentType == format.mimeType, "\(path): \(answer.contentType ?? "none")")
                    let lossless = format == .tiff || format == .bmp || format == .ico
                    Self.expectHalves(try answer.image(), tolerance: lossless ? 2 : 40, path)
                }
            }
            // A TIFF source answered as TIFF keeps its alpha.
            let alpha = try await Self.get(server, origin.path("alpha.tif", "w:32", ext: "tiff"))
            #expect(alpha.format == .tiff)
            Self.expectHalves(try alpha.image(), alpha: 128, tolerance: 2, "alpha.tif@tiff")
        }
    }

    @Test("pg: picks a page of a multi-page TIFF; the first by default; a page past the end is refused")
    func tiffPages() async throws {
        try await Self.withServer { server, origin in
            let first = try await Self.get(server, origin.path("pages.tif", "w:32", ext: "png"))
            #expect(first.status == 200)
            Self.expectHalves(try first.image(), tolerance: 2, "default page")
            let second = try await Self.get(server, origin.path("pages.tif", "w:32/pg:1", ext: "png"))
            #expect(second.status == 200)
            let image = try second.image()
            #expect(image.width == 32 && image.height == 24)
            #expect(image.pixel(x: 16, y: 2).isClose(to: RGBA(red: 0, green: 200, blue: 0), tolerance: 2), "page 1 has the green band")
            #expect(image.pixel(x: 28, y: 20).isClose(to: RGBA(red: 0, green: 0, blue: 220), tolerance: 2))
            let pageZero = try await Self.get(server, origin.path("pages.tif", "w:32/pg:0", ext: "png"))
            #expect(pageZero.body == first.body, "pg:0 is the default")
            let missing = try await Self.get(server, origin.path("pages.tif", "w:32/pg:2", ext: "png"))
            #expect((400..<500).contains(missing.status), "page 2 of 2: \(missing.status)")
        }
    }

    @Test("enforce_thumbnail (eth:1, --enforce-thumbnail, IMGPROXY_ENFORCE_THUMBNAIL) uses a HEIC's embedded thumbnail")
    func enforceThumbnail() async throws {
        try await Self.withServer { server, origin in
            // The main image: 64x48, unless eth:1 asks for the 16x12 thumbnail.
            let main = try await Self.get(server, origin.path("thumb.heic", "", ext: "png"))
            #expect(try main.image().pixelSize == PixelSize(width: 64, height: 48))
            let thumbnail = try await Self.get(server, origin.path("thumb.heic", "eth:1", ext: "png"))
            #expect(thumbnail.status == 200)
            Self.expectHalves(try thumbnail.image(), width: 16, height: 12, "the thumbnail")
            // Resized from the thumbnail (enlarged: no source pixels beyond it).
            let resized = try await Self.get(server, origin.path("thumb.heic", "eth:1/rs:fit:32:32:1", ext: "png"))
            Self.expectHalves(try resized.image(), width: 32, height: 24, "enlarged from the thumbnail")
            // A HEIC without a thumbnail, and other formats: the main image.
            let plain = try await Self.get(server, origin.path("a.heic", "eth:1", ext: "png"))
            #expect(try plain.image().pixelSize == PixelSize(width: 64, height: 48))
            let png = try await Self.get(server, origin.path("a.png", "eth:1", ext: "png"))
            #expect(try png.image().pixelSize == PixelSize(width: 64, height: 48))
        }
        let origin = try await Origin.start()
        defer { origin.stop() }
        for (arguments, environment) in [(["--enforce-thumbnail"], [String: String]()), ([], ["IMGPROXY_ENFORCE_THUMBNAIL": "true"])] {
            let server = try await ServeProcess.start(arguments, environment: environment)
            defer { server.stop() }
            let answer = try await Self.get(server, origin.path("thumb.heic", "", ext: "png"))
            #expect(try answer.image().pixelSize == PixelSize(width: 16, height: 12), "\(arguments) \(environment)")
            let main = try await Self.get(server, origin.path("thumb.heic", "eth:0", ext: "png"))
            #expect(try main.image().pixelSize == PixelSize(width: 64, height: 48), "eth:0 wins")
        }
    }

    @Test("Accept: image/jxl gets JPEG XL only with --auto-jxl")
    func autoJXL() async throws {
        let accept = "image/jxl,image/webp,*/*"
        try await Self.withServer { server, origin in
            // Off by default: every source gets WebP (imgproxy 4), or the preferred JPEG without it.
            let answer = try await Self.get(server, origin.path("a.png", "w:32"), accept: accept)
            #expect(answer.status == 200)
            #expect(answer.format == .webp, "PNG without --auto-jxl: \(answer.format)")
            Self.expectHalves(try answer.image(), "without --auto-jxl")
            for name in ["a.tif", "a.jxl"] {
                let plain = try await Self.get(server, origin.path(name, "w:32"), accept: accept)
                #expect(plain.format == .webp, "\(name) without --auto-jxl: \(plain.format)")
                let jpeg = try await Self.get(server, origin.path(name, "w:32"), accept: "image/jxl,*/*")
                #expect(jpeg.format == .jpeg, "\(name) without --auto-jxl nor WebP: \(jpeg.format)")
            }
        }
        try await Self.withServer(["--auto-jxl"]) { server, origin in
            for name in ["a.tif", "a.bmp", "a.png", "a.jxl"] {
                let answer = try await Self.get(server, origin.path(name, "w:32"), accept: accept)
                #expect(answer.status == 200)
                #expect(answer.format == .jxl, "\(name) with --auto-jxl: \(answer.format)")
                #expect(answer.contentType == "image/jxl")
                #expect(answer.vary == "Accept")
                Self.expectHalves(try answer.image(), "\(name) with --auto-jxl")
            }
            let withoutJXL = try await Self.get(server, origin.path("a.png", "w:32"), accept: "image/webp")
            #expect(withoutJXL.format == .webp, "a client that does not accept JPEG XL never gets it")
            let jxlSource = try await Self.get(server, origin.path("a.jxl", "w:32"), accept: "image/webp")
            #expect(jxlSource.format == .webp, "a JPEG XL source for such a client: \(jxlSource.format)")
            // An SVG source stays SVG even for a client that accepts JPEG XL.
            let svg = try await Self.get(server, origin.path("a.svg", "w:32"), accept: accept)
            #expect(svg.format == .svg)
        }
    }

    @Test("An SVG answered as SVG passes through with scripts and event attributes removed; any other format rasterises")
    func svgPassthroughAndRaster() async throws {
        try await Self.withServer { server, origin in
            let passed = try await Self.get(server, origin.path("a.svg", "w:32"))
            #expect(passed.status == 200)
            #expect(passed.contentType == "image/svg+xml")
            let text = String(decoding: passed.body, as: UTF8.self)
            #expect(!text.contains("<script") && !text.contains("alert(document.cookie)"), "\(text)")
            #expect(!text.contains("onload") && !text.contains("onclick") && !text.contains("javascript:"), "\(text)")
            #expect(text.contains("fill=\"rgb(220,0,0)\"") && text.contains("width=\"64\""), "the drawing is kept: \(text)")
            // What was kept still renders as the source did, at its own size.
            Self.expectHalves(try passed.image(), width: 64, height: 48, tolerance: 2, "passthrough")

            for (ext, format) in [("png", ImageFormat.png), ("jpg", .jpeg), ("webp", .webp), ("tiff", .tiff)] {
                let raster = try await Self.get(server, origin.path("a.svg", "w:32", ext: ext))
                #expect(raster.status == 200)
                #expect(raster.format == format, "@\(ext): \(raster.format)")
                Self.expectHalves(try raster.image(), tolerance: format == .png || format == .tiff ? 2 : 40, "@\(ext)")
            }
            // Drawn at the size asked for, not scaled down from the intrinsic size.
            let large = try await Self.get(server, origin.path("a.svg", "w:640/el:1", ext: "png"))
            Self.expectHalves(try large.image(), width: 640, height: 480, tolerance: 2, "enlarged vector")
        }
        // IMGPROXY_ALWAYS_RASTERIZE_SVG: drawn and negotiated as any other source.
        try await Self.withServer(["--always-rasterize-svg"]) { server, origin in
            let drawn = try await Self.get(server, origin.path("a.svg", "w:32"))
            #expect(drawn.format == .jpeg, "opaque, so the first preferred format: \(drawn.format)")
            Self.expectHalves(try drawn.image(), "rasterised")
            let webp = try await Self.get(server, origin.path("a.svg", "w:32"), accept: "image/webp")
            #expect(webp.format == .webp && webp.vary == "Accept")
            #expect(try await Self.get(server, origin.path("a.svg", "", ext: "svg")).format == .svg, "@svg still passes through")
        }
        try await Self.withServer(["--sanitize-svg", "false"]) { server, origin in
            let kept = try await Self.get(server, origin.path("a.svg", ""))
            #expect(kept.body == Data(Origin.svg.utf8), "--sanitize-svg false serves the source as it is")
        }
    }
}

import AlcedoTestSupport
import Alcedo
@testable import AlcedoServer
import Foundation
import Synchronization
import Testing

/// `alcedo serve` started as a child process with an imgproxy deployment's environment.
@Suite("alcedo serve with imgproxy's environment")
struct ImgproxyEnvironmentTests {
    static let keyHex = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
    static let saltHex = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"

    /// Only IMGPROXY_* variables (and a cache folder): signing with a truncated signature,
    /// presets, the path prefix, the base URL, the source limits, the TTL, the loopback
    /// allowance, and one warning line naming the variables Alcedo does not support.
    @Test func anImgproxyEnvironmentStartsTheServerWithTheSameBehaviour() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/images/small.jpg", .ok(TestImages.jpeg(width: 40, height: 30), contentType: "image/jpeg"))
        origin.route("/images/large.jpg", .ok(TestImages.jpeg(width: 80, height: 60), contentType: "image/jpeg"))
        origin.route("/images/heavy.png", .ok(TestImages.noisePNG(width: 30, height: 30), contentType: "image/png"))
        let base = origin.url("/images/").absoluteString
        let server = try await ChildServe.start(environment: [
            "IMGPROXY_BIND": "127.0.0.1:0",
            "IMGPROXY_KEY": Self.keyHex,
            "IMGPROXY_SALT": Self.saltHex,
            "IMGPROXY_SIGNATURE_SIZE": "8",
            "IMGPROXY_PRESETS": "small=rs:fit:20:20,tiny=w:10/q:50",
            "IMGPROXY_PATH_PREFIX": "/img/",
            "IMGPROXY_BASE_URL": base,
            "IMGPROXY_MAX_SRC_RESOLUTION": "0.003",
            "IMGPROXY_MAX_SRC_FILE_SIZE": "2000",
            "IMGPROXY_TTL": "123",
            "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true",
            "IMGPROXY_LOG_LEVEL": "warn",
            "IMGPROXY_LOG_FORMAT": "json",
            "IMGPROXY_SYSLOG_ENABLE": "true",
            "IMGPROXY_NEW_RELIC_KEY": "x",
        ])
        defer { server.stop() }
        #expect(server.baseURL.hasPrefix("http://127.0.0.1:"))
        let key = try SigningKey(hexKey: Self.keyHex, hexSalt: Self.saltHex)
        let builder = ImgproxyURLBuilder(baseURL: server.baseURL + "/img", key: key, signatureSize: 8)
        let client = OneShotClient()

        // Signed with 8 bytes of HMAC, a relative source completed by the base URL, a preset.
        var options = ProcessingOptions()
        options.width = 20
        let signed = builder.url(for: "small.jpg", options: options, format: .png)
        #expect(signed.split(separator: "/")[3].count == 11, "8 bytes are 11 base64 characters: \(signed)")
        let reply = try await client.get(signed)
        #expect(reply.status == 200)
        #expect(reply.headers["cache-control"] == "public, max-age=123")
        let image = try ImageCodecRegistry.shared.decode(reply.body)
        #expect(image.width == 20 && image.height == 15)

        let preset = try await client.get(builder.baseURL + "/" + key.signature(for: "/preset:small/plain/small.jpg@png", size: 8)
            + "/preset:small/plain/small.jpg@png")
        #expect(preset.status == 200)
        let presetImage = try ImageCodecRegistry.shared.decode(preset.body)
        #expect(presetImage.width == 20 && presetImage.height == 15, "rs:fit:20:20 from the preset, on a 40x30 source")

        // A full-size signature does not match 8 bytes; an unsigned URL is refused.
        let full = ImgproxyURLBuilder(baseURL: server.baseURL + "/img", key: key).url(for: "small.jpg", options: options, format: .png)
        #expect(try await client.get(full).status == 403)
        #expect(try await client.get(server.baseURL + "/img/insecure/w:20/plain/small.jpg@png").status == 403)
        // Without the prefix there is no image route.
        #expect(try await client.get(server.baseURL + "/" + signed.split(separator: "/", maxSplits: 3)[3]).status == 404)
        #expect(try await client.get(server.baseURL + "/img/health").status == 200)

        // 80x60 = 4800 pixels is over 0.003 MP; a 30x30 noise PNG is over 2000 bytes.
        let large = try await client.get(builder.url(for: "large.jpg", options: options, format: .png))
        #expect(large.status == 422)
        #expect(String(decoding: large.body, as: UTF8.self).contains("source limit: 0.003 MP"))
        let heavy = try await client.get(builder.url(for: "heavy.png", options: options, format: .png))
        #expect(heavy.status == 422)

        let warnings = server.stopAndReadStandardError()
        let lines = warnings.split(separator: "\n").filter { $0.contains("IMGPROXY_") }
        #expect(lines.count == 1, "one warning line: \(warnings)")
        #expect(lines.first?.contains("IMGPROXY_NEW_RELIC_KEY, IMGPROXY_SYSLOG_ENABLE") == true, "\(warnings)")
        for supported in ["IMGPROXY_BIND", "IMGPROXY_KEY", "IMGPROXY_SIGNATURE_SIZE", "IMGPROXY_PRESETS", "IMGPROXY_TTL",
                          "IMGPROXY_MAX_SRC_FILE_SIZE", "IMGPROXY_BASE_URL", "IMGPROXY_PATH_PREFIX", "IMGPROXY_LOG_LEVEL", "IMGPROXY_LOG_FORMAT"] {
            #expect(!warnings.contains(supported), "\(supported) is supported: \(warnings)")
        }
    }

    /// `--print-config` prints each setting with its source and exits 0 without listening;
    /// a flag wins over ALCEDO_*, which wins over IMGPROXY_*.
    @Test func printConfigShowsEachValueAndWhereItCameFrom() throws {
        let presetsFile = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-presets-\(UUID().uuidString).txt")
        try Data("# thumbnails\n\nthumb=rs:fill:100:100\n".utf8).write(to: presetsFile)
        defer { try? FileManager.default.removeItem(at: presetsFile) }
        let (status, out, err) = try ChildServe.runToEnd(["serve", "--print-config", "--port", "9000", "--no-use-etag"], environment: [
            "IMGPROXY_PRESETS": "small=w:10;large=w:500/q:90",
            "IMGPROXY_PRESETS_SEPARATOR": ";",
            "IMGPROXY_PRESETS_PATH": presetsFile.path,
            "IMGPROXY_URL_REPLACEMENTS": "s3://=https://bucket.test/;local://*/=https://${1}.test/",
            "ALCEDO_PORT": "9001",
            "IMGPROXY_BIND": "10.1.2.3:9002",
            "ALCEDO_TTL": "5",
            "IMGPROXY_TTL": "7",
            "IMGPROXY_WORKERS": "3",
            "IMGPROXY_USE_ETAG": "true",
            "IMGPROXY_KEY": Self.keyHex,
            "IMGPROXY_SALT": Self.saltHex,
            "IMGPROXY_FORMAT_QUALITY": "jpeg=70,avif=40,jxl=77",
            "IMGPROXY_REQUESTS_QUEUE_SIZE": "0",
            "IMGPROXY_USER_AGENT": "proxy/%current_version",
            "IMGPROXY_SENTRY_DSN": "https://sentry.invalid/1",
            "IMGPROXY_STRIP_COLOR_PROFILE": "false",
            "IMGPROXY_ENABLE_CLIENT_HINTS": "true",
            "IMGPROXY_ARGUMENTS_SEPARATOR": ",",
            "IMGPROXY_SKIP_PROCESSING_FORMATS": "png,gif",
            "IMGPROXY_ENFORCE_JXL": "true",
            "IMGPROXY_BASE64_URL_INCLUDES_FILENAME": "true",
        ])
        #expect(status == 0, "\(err)")
        #expect(!out.contains("listening on"))
        func row(_ name: String) -> [Substring] { ChildServe.configRow(name, in: out) }
        #expect(row("PORT") == ["PORT", "9000", "--port"])
        #expect(row("HOST") == ["HOST", "10.1.2.3", "IMGPROXY_BIND"])
        #expect(row("TTL") == ["TTL", "5", "ALCEDO_TTL"])
        #expect(row("CONCURRENCY") == ["CONCURRENCY", "3", "IMGPROXY_WORKERS"])
        #expect(row("USE_ETAG") == ["USE_ETAG", "false", "--use-etag"])
        #expect(row("QUEUE") == ["QUEUE", "256", "IMGPROXY_REQUESTS_QUEUE_SIZE"], "imgproxy's 0 (unbounded) keeps Alcedo's bound")
        #expect(row("FORMAT_QUALITY") == ["FORMAT_QUALITY", "avif=40,jpeg=70,jxl=77,webp=79", "IMGPROXY_FORMAT_QUALITY"])
        #expect(row("USER_AGENT") == ["USER_AGENT", "proxy/0.1.0", "IMGPROXY_USER_AGENT"])
        #expect(row("MAX_SRC_BYTES") == ["MAX_SRC_BYTES", "33554432", "default"])
        #expect(row("KEY").starts(with: ["KEY", "1", "(not", "shown)", "IMGPROXY_KEY"]))
        #expect(!out.contains(Self.keyHex) && !out.contains(Self.saltHex), "keys and salts are never printed")
        #expect(out.contains("not supported (ignored): IMGPROXY_SENTRY_DSN\n"))
        #expect(row("PRESET") == ["PRESET", "large,small,thumb", "IMGPROXY_PRESETS"])
        #expect(row("PRESETS_SEPARATOR") == ["PRESETS_SEPARATOR", ";", "IMGPROXY_PRESETS_SEPARATOR"])
        #expect(row("STRIP_COLOR_PROFILE") == ["STRIP_COLOR_PROFILE", "false", "IMGPROXY_STRIP_COLOR_PROFILE"])
        #expect(row("ENABLE_CLIENT_HINTS") == ["ENABLE_CLIENT_HINTS", "true", "IMGPROXY_ENABLE_CLIENT_HINTS"])
        #expect(row("ARGUMENTS_SEPARATOR") == ["ARGUMENTS_SEPARATOR", ",", "IMGPROXY_ARGUMENTS_SEPARATOR"])
        #expect(row("SKIP_PROCESSING_FORMATS") == ["SKIP_PROCESSING_FORMATS", "png,gif", "IMGPROXY_SKIP_PROCESSING_FORMATS"])
        #expect(row("ENFORCE_JXL") == ["ENFORCE_JXL", "true", "IMGPROXY_ENFORCE_JXL"])
        #expect(row("BASE64_URL_INCLUDES_FILENAME") == ["BASE64_URL_INCLUDES_FILENAME", "true", "IMGPROXY_BASE64_URL_INCLUDES_FILENAME"])
        #expect(row("URL_REPLACEMENTS") == ["URL_REPLACEMENTS", "s3://=https://bucket.test/;local://*/=https://${1}.test/",
                                            "IMGPROXY_URL_REPLACEMENTS"])
    }

    /// An animated GIF of `count` frames, `side` pixels square.
    static func animatedGIF(side: Int, count: Int) throws -> Data {
        let frames = (0..<count).map { index in
            AlcedoImage.Frame(pixels: (0..<side * side * 4).map { $0 % 4 == 3 ? 255 : UInt8(index * 80) }, duration: 0.1)
        }
        return try ImageCodecRegistry.shared.encode(AlcedoImage(width: side, height: side, frames: frames), as: .gif)
    }

    /// `IMGPROXY_MAX_ANIMATION_FRAMES=1` (imgproxy's default) serves an animated source as a
    /// still image, its first frame, in the format a still source gets; more frames keep that
    /// many; `IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION` refuses an animation with larger frames
    /// (422) but not a still image.
    @Test func maxAnimationFramesAndFrameResolutionFromTheEnvironment() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/big.gif", .ok(try Self.animatedGIF(side: 16, count: 3), contentType: "image/gif"))
        origin.route("/small.gif", .ok(try Self.animatedGIF(side: 12, count: 3), contentType: "image/gif"))
        origin.route("/still.jpg", .ok(TestImages.jpeg(width: 40, height: 30), contentType: "image/jpeg"))
        let client = OneShotClient()
        func url(_ server: ChildServe, _ path: String, _ options: String = "") -> String {
            server.baseURL + "/insecure/" + options + "plain/" + origin.url(path).absoluteString
        }

        let still = try await ChildServe.start(environment: [
            "IMGPROXY_BIND": "127.0.0.1:0", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true", "IMGPROXY_MAX_ANIMATION_FRAMES": "1",
        ])
        let first = try await client.get(url(still, "/big.gif"))
        #expect(first.status == 200)
        #expect(ImageFormat.sniff(first.body) == .gif, "a still GIF keeps its format among the preferred ones")
        #expect(try ImageCodecRegistry.shared.decode(first.body).frames.count == 1)
        let webp = try await client.get(url(still, "/big.gif") + "@webp")
        #expect(webp.status == 200 && ImageFormat.sniff(webp.body) == .webp)
        #expect(try ImageCodecRegistry.shared.decode(webp.body).frames.count == 1)
        let stillWarnings = still.stopAndReadStandardError()
        #expect(!stillWarnings.contains("IMGPROXY_MAX_ANIMATION_FRAMES"), "\(stillWarnings)")

        let limited = try await ChildServe.start(environment: [
            "IMGPROXY_BIND": "127.0.0.1:0", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true", "IMGPROXY_MAX_ANIMATION_FRAMES": "2",
            "IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION": "0.0002",
        ])
        defer { limited.stop() }
        // 12x12 = 144 pixels a frame: within 0.0002 MP; the first 2 of 3 frames kept.
        let two = try await client.get(url(limited, "/small.gif"))
        #expect(two.status == 200 && ImageFormat.sniff(two.body) == .gif)
        #expect(try ImageCodecRegistry.shared.decode(two.body).frames.count == 2)
        // 16x16 = 256 pixels a frame: over it.
        #expect(try await client.get(url(limited, "/big.gif")).status == 422)
        // A still image of 1,200 pixels is not held to the frame limit.
        #expect(try await client.get(url(limited, "/still.jpg")).status == 200)

        let (status, out, err) = try ChildServe.runToEnd(["serve", "--print-config"], environment: ["IMGPROXY_MAX_ANIMATION_FRAMES": "1"])
        #expect(status == 0, "\(err)")
        #expect(out.split(separator: "\n").contains {
            $0.split(separator: " ", omittingEmptySubsequences: true) == ["MAX_ANIMATION_FRAMES", "1", "IMGPROXY_MAX_ANIMATION_FRAMES"]
        }, "\(out)")
        let (zeroStatus, _, zeroErr) = try ChildServe.runToEnd(["serve", "--print-config"], environment: ["IMGPROXY_MAX_ANIMATION_FRAMES": "0"])
        #expect(zeroStatus != 0)
        #expect(zeroErr.contains("IMGPROXY_MAX_ANIMATION_FRAMES"), "\(zeroErr)")
    }

    /// `IMGPROXY_WEBP_EFFORT`: libwebp's method for WebP results; 1 and 6 write different files
    /// of the same picture, and a value outside 1-6 stops the start naming the variable. With
    /// no setting the effort is 2 (``ImageServerConfiguration/defaultWebPEffort``): the same
    /// file as an explicit 2, and an explicit 4 (imgproxy's default) is honoured, not taken
    /// for the default.
    @Test func webpEffortFromTheEnvironment() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/cat.jpg", .ok(TestImages.jpeg(width: 240, height: 180), contentType: "image/jpeg"))
        let source = origin.url("/cat.jpg").absoluteString
        #expect(ImageServerConfiguration().webpEffort == 2 && ImageServerConfiguration.defaultWebPEffort == 2)
        var bodies: [Data] = []
        for effort in ["1", "6", "", "2", "4"] {
            var environment = ["IMGPROXY_BIND": "127.0.0.1:0", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true"]
            if !effort.isEmpty { environment["IMGPROXY_WEBP_EFFORT"] = effort }
            let server = try await ChildServe.start(environment: environment)
            defer { server.stop() }
            let reply = try await OneShotClient().get(server.baseURL + "/insecure/w:200/plain/" + source + "@webp")
            #expect(reply.status == 200)
            #expect(ImageFormat.sniff(reply.body) == .webp)
            #expect(try ImageCodecRegistry.shared.decode(reply.body).pixelSize == PixelSize(width: 200, height: 150))
            bodies.append(reply.body)
        }
        #expect(bodies[0] != bodies[1], "efforts 1 and 6 encode differently")
        #expect(bodies[2] == bodies[3], "no setting encodes as effort 2")
        #expect(bodies[3] != bodies[4], "an explicit effort 4 is used as given")
        let (status, _, err) = try ChildServe.runToEnd(["serve", "--print-config"], environment: ["IMGPROXY_WEBP_EFFORT": "7"])
        #expect(status != 0)
        #expect(err.contains("IMGPROXY_WEBP_EFFORT"), "\(err)")
    }

    /// `IMGPROXY_WEBP_PRESET`: libwebp's content presets write different files of the same
    /// picture; an unknown name stops the start naming the variable.
    @Test func webpPresetFromTheEnvironment() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/cat.jpg", .ok(TestImages.jpeg(width: 240, height: 180), contentType: "image/jpeg"))
        let source = origin.url("/cat.jpg").absoluteString
        var bodies: [Data] = []
        for preset in ["photo", "text"] {
            let server = try await ChildServe.start(environment: [
                "IMGPROXY_BIND": "127.0.0.1:0", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true", "IMGPROXY_WEBP_PRESET": preset,
            ])
            defer { server.stop() }
            let reply = try await OneShotClient().get(server.baseURL + "/insecure/w:200/plain/" + source + "@webp")
            #expect(reply.status == 200)
            #expect(try ImageCodecRegistry.shared.decode(reply.body).pixelSize == PixelSize(width: 200, height: 150))
            bodies.append(reply.body)
        }
        #expect(bodies[0] != bodies[1], "the photo and text presets encode differently")
        let (status, _, err) = try ChildServe.runToEnd(["serve", "--print-config"], environment: ["IMGPROXY_WEBP_PRESET": "poster"])
        #expect(status != 0)
        #expect(err.contains("IMGPROXY_WEBP_PRESET"), "\(err)")
    }

    /// `IMGPROXY_PNG_INTERLACED`, `IMGPROXY_PNG_QUANTIZE` and `_QUANTIZATION_COLORS`: PNG results
    /// are Adam7-interlaced, or palette images of at most that many colours; a palette size
    /// outside 2-256 stops the start naming the variable.
    @Test func pngOptionsFromTheEnvironment() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/cat.jpg", .ok(TestImages.jpeg(width: 240, height: 180), contentType: "image/jpeg"))
        let source = origin.url("/cat.jpg").absoluteString
        // IHDR's colour type (byte 25) and interlace method (byte 28).
        for (settings, colorType, interlace) in [([:], UInt8(2), UInt8(0)), (["IMGPROXY_PNG_INTERLACED": "true"], 2, 1),
                                                  (["IMGPROXY_PNG_QUANTIZE": "true", "IMGPROXY_PNG_QUANTIZATION_COLORS": "16"], 3, 0)] {
            let server = try await ChildServe.start(environment: [
                "IMGPROXY_BIND": "127.0.0.1:0", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true",
            ].merging(settings) { $1 })
            defer { server.stop() }
            let reply = try await OneShotClient().get(server.baseURL + "/insecure/w:200/plain/" + source + "@png")
            #expect(reply.status == 200)
            let bytes = [UInt8](reply.body)
            try #require(bytes.count > 33 && ImageFormat.sniff(reply.body) == .png)
            #expect(bytes[25] == colorType && bytes[28] == interlace, "\(settings)")
            let image = try ImageCodecRegistry.shared.decode(reply.body)
            #expect(image.pixelSize == PixelSize(width: 200, height: 150))
            if colorType == 3 {
                var colors = Set<UInt32>()
                let pixels = image.pixels
                for index in stride(from: 0, to: pixels.count, by: 4) {
                    colors.insert(UInt32(pixels[index]) << 16 | UInt32(pixels[index + 1]) << 8 | UInt32(pixels[index + 2]))
                }
                #expect(colors.count <= 16)
            }
        }
        let (status, _, err) = try ChildServe.runToEnd(["serve", "--print-config"], environment: ["IMGPROXY_PNG_QUANTIZATION_COLORS": "1"])
        #expect(status != 0)
        #expect(err.contains("IMGPROXY_PNG_QUANTIZATION_COLORS"), "\(err)")
    }

    /// `--large-allocation-threshold` (`ALCEDO_LARGE_ALLOCATION_THRESHOLD`) in KiB, within what
    /// glibc takes; outside it the start fails naming the flag.
    @Test func largeAllocationThresholdIsReadAndBounded() throws {
        let (status, out, err) = try ChildServe.runToEnd(["serve", "--print-config"], environment: ["ALCEDO_LARGE_ALLOCATION_THRESHOLD": "4096"])
        #expect(status == 0, "\(err)")
        #expect(out.split(separator: "\n").contains {
            $0.split(separator: " ", omittingEmptySubsequences: true) == ["LARGE_ALLOCATION_THRESHOLD", "4096", "ALCEDO_LARGE_ALLOCATION_THRESHOLD"]
        }, "\(out)")
        let (tooSmall, _, tooSmallErr) = try ChildServe.runToEnd(["serve", "--print-config", "--large-allocation-threshold", "64"], environment: [:])
        #expect(tooSmall != 0)
        #expect(tooSmallErr.contains("--large-allocation-threshold"), "\(tooSmallErr)")
    }

    /// `--trim-threshold` (`ALCEDO_TRIM_THRESHOLD`) in KiB, 8192 by default; a negative or
    /// over-large value fails the start naming the flag.
    @Test func trimThresholdIsReadAndBounded() throws {
        func row(_ out: String) -> [Substring]? {
            out.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }.first { $0.first == "TRIM_THRESHOLD" }
        }
        let (status, out, err) = try ChildServe.runToEnd(["serve", "--print-config"], environment: [:])
        #expect(status == 0, "\(err)")
        #expect(row(out)?.dropFirst().first == "8192", "\(out)")
        let (setStatus, setOut, setErr) = try ChildServe.runToEnd(["serve", "--print-config"], environment: ["ALCEDO_TRIM_THRESHOLD": "0"])
        #expect(setStatus == 0, "\(setErr)")
        #expect(row(setOut) == ["TRIM_THRESHOLD", "0", "ALCEDO_TRIM_THRESHOLD"], "\(setOut)")
        for bad in ["-1", "1048577"] {
            let (badStatus, _, badErr) = try ChildServe.runToEnd(["serve", "--print-config", "--trim-threshold=\(bad)"], environment: [:])
            #expect(badStatus != 0)
            #expect(badErr.contains("--trim-threshold"), "\(badErr)")
        }
    }

    /// `IMGPROXY_FALLBACK_IMAGE_*`: a source that cannot be fetched or is not an image is
    /// answered with the fallback image processed with the URL's options, with the fallback
    /// status and TTL and no validators; a source that loads is answered as before; a fallback
    /// URL is fetched once through the source checks, and a bad setting stops the start.
    @Test func fallbackImageFromTheEnvironment() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        let fallback = TestImages.noisePNG(width: 40, height: 20)
        origin.route("/fallback.png", .ok(fallback, contentType: "image/png"))
        origin.route("/notes.txt", .ok(Data("not an image".utf8), contentType: "text/plain"))
        origin.route("/ok.jpg", .ok(TestImages.jpeg(width: 40, height: 30), contentType: "image/jpeg"))
        let client = OneShotClient()
        func url(_ server: ChildServe, _ path: String) -> String {
            server.baseURL + "/insecure/w:10/plain/" + origin.url(path).absoluteString + "@png"
        }

        let server = try await ChildServe.start(environment: [
            "IMGPROXY_BIND": "127.0.0.1:0", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true",
            "IMGPROXY_FALLBACK_IMAGE_DATA": fallback.base64EncodedString(), "IMGPROXY_FALLBACK_IMAGE_TTL": "30",
            "IMGPROXY_TTL": "500", "IMGPROXY_ENABLE_DEBUG_HEADERS": "true",
        ])
        for path in ["/missing.png", "/notes.txt"] {
            let reply = try await client.get(url(server, path))
            #expect(reply.status == 200, "\(path)")
            #expect(reply.headers["cache-control"] == "public, max-age=30", "\(path)")
            #expect(reply.headers["etag"] == nil && reply.headers["last-modified"] == nil, "\(path)")
            #expect(reply.headers["fallback-image"] == "1", "\(path)")
            let image = try ImageCodecRegistry.shared.decode(reply.body)
            #expect(image.width == 10 && image.height == 5, "the fallback processed with w:10: \(path)")
        }
        let ok = try await client.get(url(server, "/ok.jpg"))
        #expect(ok.status == 200 && ok.headers["cache-control"] == "public, max-age=500" && ok.headers["fallback-image"] == nil)
        let log = server.stopAndReadStandardError()
        #expect(log.contains("answering the fallback image"), "\(log)")
        #expect(!log.contains("IMGPROXY_FALLBACK"), "\(log)")

        // From a URL, fetched once at start; status 0: the error's own status; TTL: the TTL.
        let fetched = try await ChildServe.start(environment: [
            "IMGPROXY_BIND": "127.0.0.1:0", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true",
            "IMGPROXY_FALLBACK_IMAGE_URL": origin.url("/fallback.png").absoluteString, "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE": "0",
            "IMGPROXY_TTL": "500", "IMGPROXY_LOG_LEVEL": "error",
        ])
        let missing = try await client.get(url(fetched, "/missing.png"))
        #expect(missing.status == 404)
        #expect(missing.headers["cache-control"] == "public, max-age=500")
        #expect(try ImageCodecRegistry.shared.decode(missing.body).width == 10)
        // IMGPROXY_LOG_LEVEL=error: the fallback's warning is not logged.
        let quiet = fetched.stopAndReadStandardError()
        #expect(!quiet.contains("answering the fallback image"), "\(quiet)")

        // The fallback URL goes through the source checks: loopback is refused by default.
        let (guarded, _, guardedErr) = try ChildServe.runToEnd(["serve", "--print-config"], environment: [
            "IMGPROXY_FALLBACK_IMAGE_URL": origin.url("/fallback.png").absoluteString,
        ])
        #expect(guarded != 0)
        #expect(guardedErr.contains("--fallback-image-url"), "\(guardedErr)")
        let (notBase64, _, notBase64Err) = try ChildServe.runToEnd(["serve", "--print-config"], environment: [
            "IMGPROXY_FALLBACK_IMAGE_DATA": "not base64!",
        ])
        #expect(notBase64 != 0 && notBase64Err.contains("--fallback-image-data"), "\(notBase64Err)")
        let (notImage, _, notImageErr) = try ChildServe.runToEnd(["serve", "--print-config"], environment: [
            "IMGPROXY_FALLBACK_IMAGE_DATA": Data("text".utf8).base64EncodedString(),
        ])
        #expect(notImage != 0 && notImageErr.contains("fallback image"), "\(notImageErr)")
        let (badCode, _, badCodeErr) = try ChildServe.runToEnd(["serve", "--print-config"], environment: [
            "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE": "99",
        ])
        #expect(badCode != 0 && badCodeErr.contains("IMGPROXY_FALLBACK_IMAGE_HTTP_CODE"), "\(badCodeErr)")
    }

    /// `IMGPROXY_TIMEOUT`: a request that takes longer is answered 503, as imgproxy.
    @Test func requestTimeoutFromTheEnvironment() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        let png = TestImages.noisePNG(width: 60, height: 60)
        // The body arrives over about 20 s, well past the 1 s limit.
        origin.route("/slow.png", .ok(png, contentType: "image/png").chunked(max(1, png.count / 40), every: .milliseconds(500)))
        let server = try await ChildServe.start(environment: [
            "IMGPROXY_BIND": "127.0.0.1:0", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true", "IMGPROXY_TIMEOUT": "1",
            "IMGPROXY_DOWNLOAD_TIMEOUT": "120",
        ])
        defer { server.stop() }
        let client = OneShotClient()
        let slow = try await client.get(server.baseURL + "/insecure/w:10/plain/" + origin.url("/slow.png").absoluteString)
        #expect(slow.status == 503)
        #expect(String(decoding: slow.body, as: UTF8.self).contains("timeout"))
        let (status, out, _) = try ChildServe.runToEnd(["serve", "--print-config"], environment: ["IMGPROXY_TIMEOUT": "7"])
        #expect(status == 0)
        #expect(out.split(separator: "\n").contains { $0.split(separator: " ", omittingEmptySubsequences: true) == ["TIMEOUT", "7", "s", "IMGPROXY_TIMEOUT"] },
                "\(out)")
        let (badLevel, _, badLevelErr) = try ChildServe.runToEnd(["serve", "--print-config"], environment: ["IMGPROXY_LOG_LEVEL": "loud"])
        #expect(badLevel != 0 && badLevelErr.contains("IMGPROXY_LOG_LEVEL"), "\(badLevelErr)")
        let (zero, _, zeroErr) = try ChildServe.runToEnd(["serve", "--print-config"], environment: ["IMGPROXY_TIMEOUT": "0"])
        #expect(zero != 0 && zeroErr.contains("IMGPROXY_TIMEOUT"), "\(zeroErr)")
    }

    /// `IMGPROXY_RETURN_ATTACHMENT` makes `attachment` the default of `att` (the URL's `att:0`
    /// still wins); `IMGPROXY_SET_CANONICAL_HEADER` links an http(s) source as canonical;
    /// `IMGPROXY_ALLOWED_PROCESSING_OPTIONS` refuses other options (404); `IMGPROXY_JPEG_PROGRESSIVE`
    /// writes progressive JPEGs.
    @Test func attachmentAndCanonicalHeaderFromTheEnvironment() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/cat.jpg", .ok(TestImages.jpeg(width: 40, height: 30), contentType: "image/jpeg"))
        let server = try await ChildServe.start(environment: [
            "IMGPROXY_BIND": "127.0.0.1:0", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true",
            "IMGPROXY_RETURN_ATTACHMENT": "true", "IMGPROXY_SET_CANONICAL_HEADER": "true", "IMGPROXY_JPEG_PROGRESSIVE": "true",
            "IMGPROXY_ALLOWED_PROCESSING_OPTIONS": "w,att,pr", "IMGPROXY_PRESETS": "blurry=blur:2",
        ])
        defer { server.stop() }
        let client = OneShotClient()
        let source = origin.url("/cat.jpg").absoluteString
        let reply = try await client.get(server.baseURL + "/insecure/w:10/plain/" + source + "@png")
        #expect(reply.status == 200)
        #expect(reply.headers["content-disposition"] == "attachment; filename=\"cat.png\"", "\(reply.headers)")
        #expect(reply.headers["link"] == "<\(source)>; rel=\"canonical\"")
        let inline = try await client.get(server.baseURL + "/insecure/w:10/att:0/plain/" + source + "@png")
        #expect(inline.headers["content-disposition"]?.hasPrefix("inline") == true, "\(inline.headers)")
        // IMGPROXY_ALLOWED_PROCESSING_OPTIONS: another name, even an alias of an allowed one, is 404;
        // a preset's own options are not checked.
        let width = try await client.get(server.baseURL + "/insecure/width:10/plain/" + source + "@png")
        #expect(width.status == 404)
        #expect(String(decoding: width.body, as: UTF8.self).contains("\"width\" is not allowed"))
        #expect(try await client.get(server.baseURL + "/insecure/h:10/plain/" + source + "@png").status == 404)
        #expect(try await client.get(server.baseURL + "/insecure/w:10/pr:blurry/plain/" + source + "@png").status == 200)
        // IMGPROXY_JPEG_PROGRESSIVE: the JPEG is progressive (SOF2), as ImageMagick reads it too.
        let jpeg = try await client.get(server.baseURL + "/insecure/w:10/plain/" + source + "@jpg")
        #expect(jpeg.status == 200)
        #expect(Self.jpegFrameMarker(jpeg.body) == 0xC2, "a progressive JPEG's frame is SOF2")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-progressive-\(UUID().uuidString).jpg")
        try jpeg.body.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        if let identify = ["/usr/bin/identify", "/usr/local/bin/identify"].first(where: FileManager.default.isExecutableFile(atPath:)) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: identify)
            process.arguments = ["-format", "%[interlace]", file.path]
            let out = Pipe()
            process.standardOutput = out
            try ProcessLaunch.run(process)
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(text == "JPEG", "identify reads the interlace as \(text)")
        }
    }

    /// The marker of a JPEG's frame header (0xC0 baseline, 0xC2 progressive), `nil` if none.
    static func jpegFrameMarker(_ data: Data) -> UInt8? {
        let bytes = [UInt8](data)
        var index = 2
        while index + 4 <= bytes.count, bytes[index] == 0xFF {
            let marker = bytes[index + 1]
            if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC { return marker }
            index += 2 + Int(bytes[index + 2]) << 8 + Int(bytes[index + 3])
        }
        return nil
    }

    /// A value that does not read is refused at start, naming the variable it came from.
    @Test func aBadImgproxyValueIsNamed() throws {
        let (status, _, err) = try ChildServe.runToEnd(["serve", "--print-config"], environment: ["IMGPROXY_WORKERS": "many"])
        #expect(status != 0)
        #expect(err.contains("IMGPROXY_WORKERS") && err.contains("\"many\" is not an integer"), "\(err)")
        let (bindStatus, _, bindErr) = try ChildServe.runToEnd(["serve", "--print-config"], environment: ["IMGPROXY_BIND": "localhost"])
        #expect(bindStatus != 0)
        #expect(bindErr.contains("IMGPROXY_BIND"), "\(bindErr)")
    }
}

/// `alcedo serve` as a child process with a given environment (this process's, without any
/// `ALCEDO_*` or `IMGPROXY_*` of its own), its standard error kept.
final class ChildServe {
    let process: Process
    let baseURL: String
    private let errors: Pipe
    private let cache: URL

    private init(process: Process, baseURL: String, errors: Pipe, cache: URL) {
        self.process = process
        self.baseURL = baseURL
        self.errors = errors
        self.cache = cache
    }

    static func environment(_ extra: [String: String]) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ALCEDO_") && !$0.key.hasPrefix("IMGPROXY_") }
            .merging(extra) { $1 }
    }

    /// Starts `alcedo serve --cache-dir TEMP` with `environment`; returns once it listens.
    static func start(_ arguments: [String] = [], environment: [String: String]) async throws -> ChildServe {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-imgproxy-env-\(UUID().uuidString)")
        let process = Process()
        process.executableURL = ServeCommandTests.executable
        process.arguments = ["serve", "--cache-dir", cache.path] + arguments
        process.environment = Self.environment(environment)
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try ProcessLaunch.run(process)
        guard let line = try await ServeCommandTests.readLine(out.fileHandleForReading),
              let match = line.wholeMatch(of: /listening on (http:\/\/.+)/) else {
            process.terminate()
            let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw ChildServeError.noListeningLine(stderr: text)
        }
        return ChildServe(process: process, baseURL: String(match.1), errors: err, cache: cache)
    }

    /// Ends the process (SIGTERM) and returns everything it wrote to standard error.
    func stopAndReadStandardError() -> String {
        if process.isRunning { process.terminate() }
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: cache)
        return text
    }

    func stop() { _ = stopAndReadStandardError() }

    /// The words of `--print-config`'s line for setting `name` in `output` (empty when absent).
    static func configRow(_ name: String, in output: String) -> [Substring] {
        let line = output.split(separator: "\n").first { $0.split(separator: " ").first.map(String.init) == name }
        return line?.split(separator: " ", omittingEmptySubsequences: true) ?? []
    }

    /// Runs `alcedo` with `arguments` and `environment` to its end.
    static func runToEnd(_ arguments: [String], environment: [String: String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = ServeCommandTests.executable
        process.arguments = arguments
        process.environment = Self.environment(environment)
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try ProcessLaunch.run(process)
        // Both pipes are read to their end before waiting (a full pipe would block the child).
        let errText = Locked("")
        let reader = Thread { errText.withLock { $0 = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) } }
        reader.start()
        let outText = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        while !reader.isFinished { Thread.sleep(forTimeInterval: 0.01) }
        return (process.terminationStatus, outText, errText.value)
    }

    enum ChildServeError: Error { case noListeningLine(stderr: String) }
}

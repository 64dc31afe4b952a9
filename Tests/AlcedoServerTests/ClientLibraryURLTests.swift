import Alcedo
import AlcedoTestSupport
import Foundation
import Testing

/// URLs made by the client libraries people use to sign them, not by Alcedo's own signer:
/// PyPI's `imgproxy` 1.0.0 (its `ImgProxy` URL builder, key and salt signing) and thumbor's
/// `libthumbor` 2.0 (`CryptoURL.generate`), both in the test virtual environment
/// (`scripts/install-s3-test-tools.sh`). The release `alcedo serve` answers each with the size,
/// format and status that imgproxy's and thumbor's documentation give for it.
@Suite("URLs from imgproxy's and thumbor's client libraries", .serialized)
struct ClientLibraryURLTests {
    /// A 640x480 JPEG served by a loopback origin at `/photo.jpg`.
    static let source = TestImages.jpeg(width: 640, height: 480)

    /// A loopback origin serving ``source`` at `/photo.jpg`.
    static func photoOrigin() async throws -> TestHTTPServer {
        let origin = try await TestHTTPServer.start()
        origin.route("/photo.jpg", .ok(source, contentType: "image/jpeg"))
        return origin
    }

    /// The URLs the Python `script` prints, one a line, for `specs` (JSON) given as its argument.
    static func urls(_ script: String, specs: String) async throws -> [String] {
        let python = MotoS3Server.python
        let output: (status: Int32, out: String, err: String) = try await offPool {
            let process = Process()
            process.executableURL = python
            process.arguments = ["-c", script, specs]
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try ProcessLaunch.run(process)
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text, errors)
        }
        #expect(output.status == 0, "\(output.err)")
        return output.out.split(separator: "\n").map(String.init)
    }

    /// What one answer must be: the status, and for a 200 the format and the size (each side
    /// within `slack` pixels, for libraries' documented rounding).
    struct Expected {
        var status = 200
        var format: ImageFormat? = .jpeg
        var width = 0, height = 0
        var slack = 1
    }

    static func check(_ reply: (status: Int, body: Data), _ expected: Expected, url: String) throws {
        #expect(reply.status == expected.status, "\(url)")
        guard expected.status == 200, reply.status == 200, let format = expected.format else { return }
        #expect(ImageFormat.sniff(reply.body) == format, "\(url)")
        let image = try ImageCodecRegistry.shared.decode(reply.body)
        let widthOff = abs(image.width - expected.width), heightOff = abs(image.height - expected.height)
        #expect(widthOff <= expected.slack && heightOff <= expected.slack,
                "\(url): \(image.width)x\(image.height), expected \(expected.width)x\(expected.height)")
    }

    static func get(_ url: String) async throws -> (status: Int, body: Data) {
        let reply = try await ServerHarness.sharedClient.execute(.init(url: url), timeout: .seconds(300))
        var body = Data()
        for try await chunk in reply.body { body.append(contentsOf: chunk.readableBytesView) }
        return (Int(reply.status.code), body)
    }

    @Test("imgproxy's Python client (PyPI imgproxy 1.0.0): signed fit, fill, smart, auto, enlarge, extensions and advanced options")
    func imgproxyPythonClient() async throws {
        let origin = try await Self.photoOrigin()
        defer { origin.stop() }
        let key = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
        let salt = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
        let server = try await ServeProcess.start(["--key", key, "--salt", salt])
        defer { server.stop() }
        let image = origin.url("/photo.jpg").absoluteString
        // Each spec: ImgProxy's keyword arguments, then the advanced options for the call.
        let cases: [(spec: String, expected: Expected)] = [
            (#"{"width": 300, "height": 200, "resizing_type": "fit"}"#, Expected(width: 267, height: 200)),
            (#"{"width": 300, "height": 200, "resizing_type": "fill", "gravity": "sm"}"#, Expected(width: 300, height: 200)),
            (#"{"width": 200, "height": 200, "resizing_type": "fill", "gravity": "nowe"}"#, Expected(width: 200, height: 200)),
            (#"{"width": 100, "height": 100, "resizing_type": "fill", "extension": "webp"}"#, Expected(format: .webp, width: 100, height: 100)),
            (#"{"width": 120, "height": 90, "resizing_type": "fit", "extension": "png"}"#, Expected(format: .png, width: 120, height: 90)),
            (#"{"width": 150, "height": 150, "resizing_type": "fill", "advanced": ["q:50", "bl:2"]}"#, Expected(width: 150, height: 150)),
            (#"{"width": 1000, "height": 0, "resizing_type": "fit", "enlarge": true}"#, Expected(width: 1000, height: 750)),
            (#"{"width": 1000, "height": 0, "resizing_type": "fit"}"#, Expected(width: 640, height: 480)),
            // `auto`: a portrait box for a landscape picture fits instead of filling.
            (#"{"width": 200, "height": 300, "resizing_type": "auto"}"#, Expected(width: 200, height: 150)),
            (#"{"width": 200, "height": 100, "resizing_type": "auto"}"#, Expected(width: 200, height: 100)),
        ]
        let script = """
            import json, sys
            from imgproxy import ImgProxy
            for spec in json.loads(sys.argv[1]):
                advanced = spec.pop("advanced", [])
                print(ImgProxy(spec.pop("image_url"), key=spec.pop("key"), salt=spec.pop("salt"), **spec)(*advanced))
            """
        let specs = "[" + cases.map { c in
            String(c.spec.dropLast()) + #", "image_url": "\#(image)", "key": "\#(key)", "salt": "\#(salt)"}"#
        }.joined(separator: ",") + "]"
        let paths = try await Self.urls(script, specs: specs)
        try #require(paths.count == cases.count)
        for (path, c) in zip(paths, cases) {
            try Self.check(try await Self.get(server.baseURL + path), c.expected, url: path)
        }
        // The same URL with one character of its signature changed is refused.
        let signed = paths[0]
        let signature = signed.dropFirst().prefix { $0 != "/" }
        let flipped = (signature.first == "A" ? "B" : "A") + signature.dropFirst()
        let tampered = "/" + flipped + signed.dropFirst(1 + signature.count)
        try Self.check(try await Self.get(server.baseURL + tampered), Expected(status: 403), url: tampered)
    }

    @Test("thumbor's libthumbor 2.0 (CryptoURL): signed crops, fit-in kinds, flips, alignment, manual crops, filters and /meta")
    func libthumborClient() async throws {
        let origin = try await Self.photoOrigin()
        defer { origin.stop() }
        let key = "my-security-key"
        let server = try await ServeProcess.start(["--dialect", "thumbor", "--thumbor-security-key", key,
                                                   "--thumbor-allow-unsafe-url", "false"])
        defer { server.stop() }
        let image = "127.0.0.1:\(origin.url("/").port ?? 0)/photo.jpg"
        let cases: [(spec: String, expected: Expected)] = [
            (#"{"width": 300, "height": 200}"#, Expected(width: 300, height: 200)),
            (#"{"width": 300, "height": 200, "smart": true, "filters": ["quality(50)", "grayscale()"]}"#, Expected(width: 300, height: 200)),
            (#"{"width": 300, "height": 200, "fit_in": true}"#, Expected(width: 267, height: 200)),
            (#"{"width": 300, "height": 200, "full_fit_in": true}"#, Expected(width: 300, height: 225)),
            (#"{"width": 200, "height": 300, "adaptive_fit_in": true}"#, Expected(width: 267, height: 200)),
            (#"{"width": 150, "height": 150, "flip": true, "flop": true, "halign": "left", "valign": "top"}"#, Expected(width: 150, height: 150)),
            (#"{"crop": [[10, 10], [330, 250]], "width": 160, "height": 0}"#, Expected(width: 160, height: 120)),
            (#"{"width": 100, "height": 100, "filters": ["format(webp)"]}"#, Expected(format: .webp, width: 100, height: 100)),
            // The left half is the top-left pixel's red: trim keeps the blue half, 320x480.
            (#"{"width": 100, "height": 0, "trim": true}"#, Expected(width: 100, height: 150)),
            (#"{"width": 300, "height": 200, "meta": true}"#, Expected(format: nil)),
        ]
        let script = """
            import json, sys
            from libthumbor import CryptoURL
            crypto = CryptoURL(key="\(key)")
            for spec in json.loads(sys.argv[1]):
                if "crop" in spec:
                    spec["crop"] = tuple(tuple(corner) for corner in spec["crop"])
                print(crypto.generate(**spec))
            """
        let specs = "[" + cases.map { c in String(c.spec.dropLast()) + #", "image_url": "\#(image)"}"# }.joined(separator: ",") + "]"
        let paths = try await Self.urls(script, specs: specs)
        try #require(paths.count == cases.count)
        for (path, c) in zip(paths, cases) {
            let reply = try await Self.get(server.baseURL + path)
            try Self.check(reply, c.expected, url: path)
            if path.contains("/meta/") {
                let json = try JSONSerialization.jsonObject(with: reply.body) as? [String: Any]
                let thumbor = json?["thumbor"] as? [String: Any]
                let target = thumbor?["target"] as? [String: Any]
                #expect(target?["width"] as? Int == 300 && target?["height"] as? Int == 200, "\(path)")
            }
        }
        // An unsigned (unsafe) URL is refused when unsafe URLs are not allowed, and so is a
        // signed one whose path was changed after signing.
        let unsafe = try await Self.get(server.baseURL + "/unsafe/300x200/" + image)
        #expect((400..<500).contains(unsafe.status))
        let changed = paths[0].replacingOccurrences(of: "300x200", with: "301x200")
        let tampered = try await Self.get(server.baseURL + changed)
        #expect((400..<500).contains(tampered.status))
    }
}

import Alcedo
import AlcedoServer
import AlcedoTestSupport
import AsyncHTTPClient
import Foundation
import NIOCore
import Testing

/// The imgproxy compatibility corpus (`Fixtures/imgproxy-corpus.tsv`): every URL of imgproxy 4's
/// own tests and documentation, each run against `alcedo serve` started as a child process with
/// the imgproxy environment its line names, on loopback sources of the sizes imgproxy's test
/// images have (gradients, and the trim images rebuilt rectangle by rectangle). A line passes
/// when the status class matches imgproxy's (Alcedo's 400 stands for imgproxy's 404 on a bad
/// option) and, where the line states them, the result's size and format.
@Suite("imgproxy corpus", .serialized)
struct ImgproxyCorpusTests {
    @Test func everyCorpusURLIsAnsweredAsImgproxyAnswersIt() async throws {
        let corpus = try Corpus.load()
        let sources = CorpusSources()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-corpus-\(UUID().uuidString)")
        try sources.write(to: folder)
        defer { try? FileManager.default.removeItem(at: folder) }
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        sources.route(on: origin)

        let client = ServerHarness.sharedClient
        var mismatches: [String] = []
        var count = 0
        for (name, environment) in corpus.configurations {
            let rows = corpus.rows.filter { $0.configuration == name }
            guard !rows.isEmpty else { continue }
            let context = CorpusContext(origin: origin.url("").absoluteString.trimmingSuffix("/"), folder: folder)
            let server = try await CorpusServer.start(environment: environment.mapValues(context.expand))
            for row in rows {
                count += 1
                let path = try context.expandPath(row.path, environment: environment)
                var request = HTTPClientRequest(url: server.baseURL + path)
                for (header, value) in row.headers { request.headers.add(name: header, value: value) }
                let outcome: String?
                do {
                    let response = try await client.execute(request, timeout: .seconds(300))
                    let body = try await response.body.collect(upTo: 64 << 20)
                    outcome = row.mismatch(status: Int(response.status.code), body: Data(body.readableBytesView))
                } catch {
                    outcome = "request failed: \(error)"
                }
                if let outcome { mismatches.append("\(row.provenance) [\(name)] \(row.path): \(outcome)") }
            }
            server.stop()
        }
        let matched = count - mismatches.count
        print("imgproxy corpus: \(count) URLs, \(matched) match")
        #expect(count == corpus.rows.count)
        let report = "\(mismatches.count) of \(count) differ:\n" + mismatches.joined(separator: "\n")
        #expect(mismatches.isEmpty, Comment(rawValue: report))
    }

    /// The fixture parses: every row names a configuration that exists, every status is a number.
    @Test func theCorpusIsWellFormed() throws {
        let corpus = try Corpus.load()
        #expect(corpus.rows.count >= 600)
        for row in corpus.rows {
            #expect(corpus.configurations[row.configuration] != nil, "\(row.provenance)")
            #expect((100..<600).contains(row.status), "\(row.provenance)")
        }
    }
}

/// The parsed fixture.
struct Corpus {
    struct Row {
        let provenance: String
        let configuration: String
        let path: String
        let status: Int
        let size: (width: Int, height: Int)?
        let format: ImageFormat?
        let headers: [(String, String)]

        /// What differs from imgproxy's answer, or `nil` when nothing does.
        func mismatch(status actual: Int, body: Data) -> String? {
            guard actual / 100 == status / 100 else {
                return "status \(actual), imgproxy \(status): \(String(decoding: body.prefix(200), as: UTF8.self))"
            }
            guard actual / 100 == 2 else { return nil }
            let actualFormat = ImageFormat.sniff(body)
            if let format, !Self.same(actualFormat, format) { return "format \(actualFormat), imgproxy \(format)" }
            if let size, actualFormat != .svg {
                guard let image = try? ImageCodecRegistry.shared.decode(body) else { return "result does not decode" }
                if image.width != size.width || image.height != size.height {
                    return "size \(image.width)x\(image.height), imgproxy \(size.width)x\(size.height)"
                }
            }
            return nil
        }

        private static func same(_ a: ImageFormat, _ b: ImageFormat) -> Bool {
            let heif: Set<ImageFormat> = [.heic, .heif]
            return a == b || (heif.contains(a) && heif.contains(b)) || (a == .apng && b == .png)
        }
    }

    var configurations: [String: [String: String]] = [:]
    var rows: [Row] = []

    static func load() throws -> Corpus {
        guard let url = Bundle.module.url(forResource: "imgproxy-corpus", withExtension: "tsv", subdirectory: "Fixtures") else {
            throw CorpusError.missingFixture
        }
        var corpus = Corpus()
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            if fields[0] == "@config" {
                var environment: [String: String] = [:]
                for assignment in fields.dropFirst(2) where !assignment.isEmpty {
                    let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
                    environment[parts[0]] = parts.count > 1 ? parts[1] : ""
                }
                corpus.configurations[fields[1]] = environment
                continue
            }
            guard fields.count == 7, let status = Int(fields[3]) else { throw CorpusError.badLine(String(line)) }
            let size = fields[4] == "-" ? nil : fields[4].split(separator: "x").compactMap { Int($0) }
            let headers: [(String, String)] = fields[6] == "-" ? [] : fields[6].split(separator: "|").map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                return (parts[0], parts[1])
            }
            corpus.rows.append(Row(provenance: fields[0], configuration: fields[1], path: fields[2], status: status,
                                   size: size.map { ($0[0], $0[1]) },
                                   format: fields[5] == "-" ? nil : ImageFormat(fileExtension: fields[5]),
                                   headers: headers))
        }
        return corpus
    }

    enum CorpusError: Error { case missingFixture, badLine(String), badPlaceholder(String) }
}

/// Fills a row's placeholders.
struct CorpusContext {
    let origin: String
    let folder: URL

    func expand(_ text: String) -> String {
        text.replacingOccurrences(of: "{origin}", with: origin)
            .replacingOccurrences(of: "{host}", with: origin.replacingOccurrences(of: "http://", with: ""))
            .replacingOccurrences(of: "{dir}", with: folder.path)
    }

    func expandPath(_ path: String, environment: [String: String]) throws -> String {
        var text = expand(path)
        // `{sig}` last: it signs the rest of the path as sent.
        var signed = false
        while let open = text.range(of: "{"), let close = text.range(of: "}", range: open.upperBound..<text.endIndex) {
            let inner = String(text[open.upperBound..<close.lowerBound])
            let parts = inner.split(separator: ":", maxSplits: 1).map(String.init)
            let value: String
            switch parts[0] {
            case "b64": value = Self.base64URL(parts[1])
            case "b64split":
                let encoded = Self.base64URL(parts[1])
                value = stride(from: 0, to: encoded.count, by: 16).map { start in
                    let from = encoded.index(encoded.startIndex, offsetBy: start)
                    return String(encoded[from..<(encoded.index(from, offsetBy: 16, limitedBy: encoded.endIndex) ?? encoded.endIndex)])
                }.joined(separator: "/")
            case "pathescape": value = Self.pathEscape(parts[1])
            case "slash1": value = parts[1].replacingOccurrences(of: "://", with: ":/")
            case "half":
                let size = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(parts[1]).path)[.size] as? Int ?? 0
                value = String(size / 2)
            case "sig":
                signed = true
                value = "SIGNATURE"
            default: throw Corpus.CorpusError.badPlaceholder(inner)
            }
            text.replaceSubrange(open.lowerBound..<close.upperBound, with: value)
        }
        if signed, let marker = text.range(of: "/SIGNATURE/") {
            let key = try SigningKey(hexKey: environment["IMGPROXY_KEY"] ?? "", hexSalt: environment["IMGPROXY_SALT"] ?? "")
            let rest = String(text[text.index(before: marker.upperBound)...])
            text.replaceSubrange(marker, with: "/" + key.signature(for: rest) + "/")
        }
        return text
    }

    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Go's `url.PathEscape`: everything but unreserved characters and `$&+:=@` is escaped.
    static func pathEscape(_ text: String) -> String {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        allowed.insert(charactersIn: "$&+:=@")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}

/// `alcedo serve` with an environment of `IMGPROXY_*` variables only (loopback sources allowed
/// unless the environment says otherwise), its standard error written to a file.
final class CorpusServer {
    let process: Process
    let baseURL: String
    private let folder: URL

    private init(process: Process, baseURL: String, folder: URL) {
        self.process = process
        self.baseURL = baseURL
        self.folder = folder
    }

    static func start(environment: [String: String]) async throws -> CorpusServer {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-corpus-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = ServeCommandTests.executable
        process.arguments = ["serve", "--cache-dir", folder.appendingPathComponent("cache").path]
        var variables = ["IMGPROXY_BIND": "127.0.0.1:0", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true"]
        variables.merge(environment) { $1 }
        process.environment = ChildServe.environment(variables)
        let out = Pipe()
        process.standardOutput = out
        let errors = folder.appendingPathComponent("stderr.log")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: errors)
        try ProcessLaunch.run(process)
        guard let line = try await ServeCommandTests.readLine(out.fileHandleForReading),
              let match = line.wholeMatch(of: /listening on (http:\/\/.+)/) else {
            process.terminate()
            process.waitUntilExit()
            let text = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            throw ChildServe.ChildServeError.noListeningLine(stderr: text)
        }
        return CorpusServer(process: process, baseURL: String(match.1), folder: folder)
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: folder)
    }
}

/// The source images the corpus names, made with Alcedo's encoders at the sizes imgproxy's
/// test images have.
struct CorpusSources {
    let files: [String: Data]

    init() {
        let registry = ImageCodecRegistry.shared
        func encode(_ image: AlcedoImage, _ format: ImageFormat) -> Data { try! registry.encode(image, as: format) }
        func gradient(_ width: Int, _ height: Int) -> AlcedoImage { TestImages.gradient(width: width, height: height) }
        let jpegOf = { (width: Int, height: Int) in
            try! registry.encode(gradient(width, height), as: .jpeg, options: EncodingOptions(quality: 90))
        }
        var files: [String: Data] = [
            "geometry.png": encode(gradient(200, 100), .png),
            "test1.png": encode(gradient(10, 10), .png),
            "test1.svg": Data(Self.svg(width: 10, height: 10).utf8),
            "trim1.png": encode(Self.trim1(), .png),
            "trim2.png": encode(Self.stripes(bottom: RGBA(red: 0, green: 0, blue: 255)), .png),
            "trim3.png": encode(Self.stripes(bottom: RGBA(red: 0, green: 0, blue: 0, alpha: 0)), .png),
            "test-images/png/png.png": encode(gradient(400, 400), .png),
            "test-images/png/8-bpp.png": encode(gradient(100, 100), .png),
            "test-images/png/16-bpp.png": encode(gradient(100, 100), .png),
            "test-images/png/8-bpp-grayscale.png": encode(gradient(100, 100), .png),
            "test-images/png/16-bpp-grayscale.png": encode(gradient(100, 100), .png),
            "test-images/bmp/24-bpp.bmp": encode(gradient(1080, 902), .bmp),
            "test-images/bmp/32-bpp-with-alpha.bmp": encode(Self.translucent(gradient(100, 100)), .bmp),
            "test-images/gif/gif.gif": encode(Self.animation(492, 229), .gif),
            "test-images/jpg/jpg.jpg": jpegOf(300, 200),
            "logos/imgproxy.png": encode(gradient(400, 400), .png),
            "lorem/ipsum.jpg": jpegOf(200, 100),
            "lorem/dolor/ipsum.jpg": jpegOf(200, 100),
            "image.jpg": jpegOf(200, 100),
            "images/curiosity.jpg": jpegOf(600, 800),
        ]
        let sample = gradient(64, 48)
        for (folder, ext, format) in [("gif", "gif", ImageFormat.gif), ("jpg", "jpg", .jpeg), ("heif", "heic", .heic),
                                      ("jxl", "jxl", .jxl), ("tiff", "tiff", .tiff), ("webp", "webp", .webp),
                                      ("bmp", "bmp", .bmp), ("ico", "ico", .ico)] {
            files["test-images/\(folder)/sample.\(ext)"] = encode(sample, format)
        }
        files["test-images/svg/sample.svg"] = Data(Self.svg(width: 64, height: 48).utf8)
        self.files = files
    }

    func write(to folder: URL) throws {
        for (name, data) in files {
            let url = folder.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
        }
    }

    func route(on origin: TestHTTPServer) {
        for (name, data) in files {
            let type = name.hasSuffix(".svg") ? "image/svg+xml" : "application/octet-stream"
            origin.route("/" + name, .ok(data, contentType: type))
        }
    }

    static func svg(width: Int, height: Int) -> String {
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)\" height=\"\(height)\">"
            + "<rect width=\"\(width)\" height=\"\(height)\" fill=\"#3080c0\"/><circle cx=\"\(width / 2)\" cy=\"\(height / 2)\" r=\"\(min(width, height) / 3)\" fill=\"#f0a020\"/></svg>"
    }

    /// imgproxy's `trim1.png`: 350x250, nested frames from light grey to black, 10 px wide on
    /// the top and left, 20 px on the bottom and right, around a 200x100 black core.
    static func trim1() -> AlcedoImage {
        var pixels = [UInt8](repeating: 255, count: 350 * 250 * 4)
        for y in 0..<250 {
            for x in 0..<350 {
                // The frame a pixel is in: how many 10/20-pixel steps it is from the nearest edge.
                let left = x / 10, top = y / 10, right = (349 - x) / 20, bottom = (249 - y) / 20
                let ring = min(left, top, right, bottom, 5)
                let level = UInt8((5 - ring) * 51)
                let index = (y * 350 + x) * 4
                pixels[index] = level
                pixels[index + 1] = level
                pixels[index + 2] = level
            }
        }
        return AlcedoImage(width: 350, height: 250, pixels: pixels)
    }

    /// imgproxy's `trim2.png`/`trim3.png`: 200x200, 30 rows of red, 100 of green, 70 of `bottom`.
    static func stripes(bottom: RGBA) -> AlcedoImage {
        var pixels = [UInt8](repeating: 255, count: 200 * 200 * 4)
        for y in 0..<200 {
            let color = y < 30 ? RGBA(red: 255, green: 0, blue: 0) : y < 130 ? RGBA(red: 0, green: 255, blue: 0) : bottom
            for x in 0..<200 {
                let index = (y * 200 + x) * 4
                pixels[index] = color.red
                pixels[index + 1] = color.green
                pixels[index + 2] = color.blue
                pixels[index + 3] = color.alpha
            }
        }
        return AlcedoImage(width: 200, height: 200, pixels: pixels)
    }

    static func translucent(_ image: AlcedoImage) -> AlcedoImage {
        var pixels = image.pixels
        for index in stride(from: 3, to: pixels.count, by: 4) { pixels[index] = UInt8(index / 4 % 256) }
        return AlcedoImage(width: image.width, height: image.height, pixels: pixels)
    }

    static func animation(_ width: Int, _ height: Int) -> AlcedoImage {
        let first = TestImages.gradient(width: width, height: height)
        let second = TestImages.halves(width: width, height: height)
        return AlcedoImage(width: width, height: height, frames: [
            .init(pixels: first.pixels, duration: 0.1), .init(pixels: second.pixels, duration: 0.1),
        ])
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}

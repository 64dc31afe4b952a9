import Alcedo
@testable import AlcedoServer
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// An `ImageServer` listening on 127.0.0.1 (a free port) for one test, with a client.
final class ServerHarness: Sendable {
    let server: ImageServer
    let baseURL: String
    let client: HTTPClient
    let cacheFolder: URL
    private let task: Task<Void, any Error>

    var service: ImageService { server.service }

    /// Starts a server; `configure` changes the test defaults (loopback allowed, a fresh
    /// temporary cache folder, port 0).
    static func start(_ configure: (inout ImageServerConfiguration) -> Void = { _ in }) async throws -> ServerHarness {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-serve-test-\(UUID().uuidString)")
        var configuration = ImageServerConfiguration()
        configuration.port = 0
        configuration.allowPrivateNetworks = true
        configuration.cacheDirectory = folder
        // The access lines would fill the test log; a test that reads them turns them back on.
        configuration.logsRequests = false
        configure(&configuration)
        let server = ImageServer(configuration: configuration)
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let task = Task {
            try await server.run(signals: []) { address in continuation.yield(address) }
        }
        var iterator = stream.makeAsyncIterator()
        guard let address = await iterator.next() else { throw CancellationError() }
        let client = sharedClient
        return ServerHarness(server: server, baseURL: address, client: client, cacheFolder: folder, task: task)
    }

    /// One client for every harness, never shut down. A client per harness would have to be
    /// shut down by each test, and AsyncHTTPClient's debug build traps when a client that was not
    /// shut down is released, which a test that throws before ``stop()`` would do.
    static let sharedClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        configuration.decompression = .disabled
        // A request waits for a pooled connection at most the connect timeout (10 s by default):
        // tests that send more requests than the pool has connections, on a loaded machine, need more.
        configuration.timeout.connect = .seconds(300)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    private init(server: ImageServer, baseURL: String, client: HTTPClient, cacheFolder: URL, task: Task<Void, any Error>) {
        self.server = server
        self.baseURL = baseURL
        self.client = client
        self.cacheFolder = cacheFolder
        self.task = task
    }

    struct Reply: Sendable {
        let status: Int
        let headers: HTTPHeaders
        let body: Data

        func header(_ name: String) -> String? { headers.first(name: name) }

        /// The body decoded as an image.
        func image() throws -> AlcedoImage { try ImageCodecRegistry.shared.decode(body) }
        var format: ImageFormat { ImageFormat.sniff(body) }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends `method` to `path` (or a full URL) and reads the whole answer.
    func request(_ path: String, method: HTTPMethod = .GET, headers: [(String, String)] = []) async throws -> Reply {
        var request = HTTPClientRequest(url: path.hasPrefix("http") ? path : baseURL + path)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        // A bound that only a hung server reaches: a loaded or briefly stalled machine (a CI
        // runner losing its CPU for a minute) must not fail a request that would be answered.
        let response = try await client.execute(request, timeout: .seconds(300))
        var body = Data()
        for try await chunk in response.body { body.append(contentsOf: chunk.readableBytesView) }
        return Reply(status: Int(response.status.code), headers: response.headers, body: body)
    }

    /// The unsigned path for `source` with option segments (a plain source URL).
    func path(_ source: URL, _ options: String = "", ext: String? = nil) -> String {
        let prefix = options.isEmpty ? "" : "/" + options
        return "/insecure" + prefix + "/plain/" + source.absoluteString + (ext.map { "@" + $0 } ?? "")
    }

    func stop() async {
        task.cancel()
        _ = try? await task.value
        try? FileManager.default.removeItem(at: cacheFolder)
    }
}

/// Images made for the tests, encoded with Alcedo's encoders.
enum TestImages {
    /// A `width` x `height` image whose left half is red and right half blue (top rows
    /// green when `markTop`), so crops and gravities can be told apart.
    /// A gradient where a pixel's red is its x and its green its y (each scaled to 0...255
    /// across the image), blue 100: a probe pixel tells which source pixel landed there.
    static func gradient(width: Int, height: Int) -> AlcedoImage {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                pixels[i] = UInt8(width > 1 ? x * 255 / (width - 1) : 0)
                pixels[i + 1] = UInt8(height > 1 ? y * 255 / (height - 1) : 0)
                pixels[i + 2] = 100
            }
        }
        return AlcedoImage(width: width, height: height, pixels: pixels)
    }

    static func halves(width: Int, height: Int, markTop: Bool = false) -> AlcedoImage {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let index = (y * width + x) * 4
                let color: (UInt8, UInt8, UInt8) = markTop && y < height / 4 ? (0, 200, 0) : (x < width / 2 ? (220, 0, 0) : (0, 0, 220))
                pixels[index] = color.0
                pixels[index + 1] = color.1
                pixels[index + 2] = color.2
            }
        }
        return AlcedoImage(width: width, height: height, pixels: pixels)
    }

    static func jpeg(width: Int, height: Int, markTop: Bool = false) -> Data {
        try! ImageCodecRegistry.shared.encode(halves(width: width, height: height, markTop: markTop), as: .jpeg,
                                              options: EncodingOptions(quality: 90))
    }

    static func png(width: Int, height: Int, alpha: UInt8 = 255) -> Data {
        var image = halves(width: width, height: height)
        if alpha != 255 {
            var pixels = image.pixels
            for index in stride(from: 3, to: pixels.count, by: 4) { pixels[index] = alpha }
            image = AlcedoImage(width: width, height: height, pixels: pixels)
        }
        return try! ImageCodecRegistry.shared.encode(image, as: .png)
    }

    /// An opaque PNG of random pixels (it does not compress: a large body).
    static func noisePNG(width: Int, height: Int) -> Data {
        var random = SeededRandom(seed: 42)
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for index in stride(from: 0, to: pixels.count, by: 4) {
            let value = random.next()
            pixels[index] = UInt8(truncatingIfNeeded: value)
            pixels[index + 1] = UInt8(truncatingIfNeeded: value >> 8)
            pixels[index + 2] = UInt8(truncatingIfNeeded: value >> 16)
        }
        return try! ImageCodecRegistry.shared.encode(AlcedoImage(width: width, height: height, pixels: pixels), as: .png)
    }

    /// A two-frame animated GIF.
    static func animatedGIF(width: Int, height: Int) -> Data {
        let first = halves(width: width, height: height)
        let second = halves(width: width, height: height, markTop: true)
        let image = AlcedoImage(width: width, height: height, frames: [
            .init(pixels: first.pixels, duration: 0.1), .init(pixels: second.pixels, duration: 0.1),
        ])
        return try! ImageCodecRegistry.shared.encode(image, as: .gif)
    }
}

extension RGBA {
    /// `true` when every channel is within `tolerance` of `other`'s.
    func isClose(to other: RGBA, tolerance: Int = 40) -> Bool {
        abs(Int(red) - Int(other.red)) <= tolerance && abs(Int(green) - Int(other.green)) <= tolerance
            && abs(Int(blue) - Int(other.blue)) <= tolerance && abs(Int(alpha) - Int(other.alpha)) <= tolerance
    }
}

/// A value behind a lock, shareable by escaping closures (`Mutex` itself cannot be captured).
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T { mutex.withLock { body(&$0) } }

    var value: Value { mutex.withLock { $0 } }
}

extension TestHTTPServer.Response {
    /// A `width` x `height` JPEG answer carrying an `ETag` and a `Last-Modified`.
    static func validatedJPEG(width: Int, height: Int, etag: String,
                              lastModified: String = "Wed, 21 Oct 2015 07:28:00 GMT") -> TestHTTPServer.Response {
        var response = TestHTTPServer.Response.ok(TestImages.jpeg(width: width, height: height), contentType: "image/jpeg")
        response.etag = etag
        response.lastModified = lastModified
        return response
    }
}

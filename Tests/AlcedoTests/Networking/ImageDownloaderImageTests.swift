import Foundation
import Synchronization
import Testing
@testable import Alcedo

/// A PNG "decoder" that reads nothing: it returns a 2x2 image whose red channel counts the
/// calls, and records the options it was given. It lets these tests check how the downloader
/// drives decoding, whatever real codecs are registered.
private final class RecordingDecoder: ImageDecoding {
    let format = ImageFormat.png
    private let calls = Mutex<[DecodingOptions]>([])

    var recorded: [DecodingOptions] { calls.withLock { $0 } }

    func info(for data: Data, options: DecodingOptions) throws(AlcedoError) -> ImageInfo {
        ImageInfo(format: .png, width: 2, height: 2)
    }

    func decode(_ data: Data, options: DecodingOptions) throws(AlcedoError) -> AlcedoImage {
        if data.count < 16 { throw .decodingError(reason: .truncated(format: .png, message: "only \(data.count) bytes")) }
        let count = calls.withLock { calls in
            calls.append(options)
            return calls.count
        }
        return AlcedoImage(width: 2, height: 2, pixels: Array(repeating: UInt8(count), count: 16), sourceFormat: .png)
    }
}

/// A processor that counts its runs and tints the image with its value.
private struct CountingProcessor: ImageProcessor {
    let value: UInt8
    let runs: Collected<UInt8>
    var target: PixelSize?

    var identifier: String { "counting(\(value))" }
    var decodingTarget: (size: PixelSize, mode: ContentMode)? { target.map { ($0, .aspectFill) } }

    func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        runs.append(value)
        return AlcedoImage(width: image.width, height: image.height, pixels: Array(repeating: value, count: image.pixels.count))
    }
}

@Suite("ImageDownloader images")
struct ImageDownloaderImageTests {
    private func makeDownloader() -> (ImageDownloader, RecordingDecoder) {
        let decoder = RecordingDecoder()
        let registry = ImageCodecRegistry(includingBuiltIns: false)
        registry.register(decoder)
        return (ImageDownloader(name: "images", configuration: .init(timeout: .seconds(30)), codecRegistry: registry), decoder)
    }

    @Test func decodesWithTheInjectedRegistry() async throws {
        let server = try await TestHTTPServer.start()
        let (downloader, decoder) = makeDownloader()
        defer { server.stop() }
        let png = try samplePNG()
        server.route("/a.png", .ok(png))
        let result = try await downloader.downloadImage(with: server.url("/a.png"))
        #expect(result.image.pixelSize == PixelSize(width: 2, height: 2))
        #expect(result.originalData == png)
        #expect(result.url == server.url("/a.png"))
        #expect(result.response.statusCode == 200)
        #expect(decoder.recorded == [.default])
        await downloader.shutdown()
    }

    @Test func eachDistinctProcessorRunsOnceForManyCallers() async throws {
        let server = try await TestHTTPServer.start()
        let (downloader, decoder) = makeDownloader()
        defer { server.stop() }
        server.route("/a.png", .ok(pngLikeData(count: 500)))
        server.hold("/a.png")
        let url = server.url("/a.png")
        let runs = Collected<UInt8>()
        let small = CountingProcessor(value: 10, runs: runs, target: PixelSize(width: 40, height: 30))
        let tinted = CountingProcessor(value: 20, runs: runs)
        let images = try await withThrowingTaskGroup(of: (Int, AlcedoImage).self) { group in
            for caller in 0..<12 {
                let options: DownloadOptions
                switch caller % 3 {
                case 0: options = DownloadOptions(processor: small)
                case 1: options = DownloadOptions(processor: tinted)
                default: options = DownloadOptions()
                }
                group.addTask { (caller, try await downloader.downloadImage(with: url, options: options).image) }
            }
            // One network caller per distinct processor: three.
            #expect(await eventually { downloader.networkCallerCount(for: url) == 3 })
            server.release("/a.png")
            var images: [Int: AlcedoImage] = [:]
            for try await (caller, image) in group { images[caller] = image }
            return images
        }
        #expect(server.requestCount("/a.png") == 1)
        #expect(decoder.recorded.count == 3)
        #expect(runs.values.sorted() == [10, 20])
        for (caller, image) in images {
            switch caller % 3 {
            case 0: #expect(image.pixels[0] == 10)
            case 1: #expect(image.pixels[0] == 20)
            default: #expect(image.pixels[0] <= 3)
            }
        }
        // The processor's decoding target reaches the decoder.
        #expect(decoder.recorded.contains { $0.targetSize == PixelSize(width: 40, height: 30) && $0.contentMode == .aspectFill })
        #expect(decoder.recorded.filter { $0.targetSize == nil }.count == 2)
        await downloader.shutdown()
    }

    @Test func decodingErrorsReachTheCaller() async throws {
        let server = try await TestHTTPServer.start()
        let (downloader, _) = makeDownloader()
        defer { server.stop() }
        server.route("/short.png", .ok(pngLikeData(count: 10)))
        server.route("/a.gif", .ok(Data("GIF89a".utf8) + Data(repeating: 0, count: 30)))
        let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadImage(with: server.url("/short.png")) }
        guard case .decodingFailed(.truncated(.png, _))? = error?.processorCause else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        let unsupported = await #expect(throws: AlcedoError.self) { try await downloader.downloadImage(with: server.url("/a.gif")) }
        guard case .decodingFailed(.unsupportedFormat(.gif))? = unsupported?.processorCause else {
            Issue.record("unexpected \(String(describing: unsupported))")
            return
        }
        await downloader.shutdown()
    }

    @Test func cancellingOneImageCallerKeepsTheSharedDownload() async throws {
        let server = try await TestHTTPServer.start()
        let (downloader, _) = makeDownloader()
        defer { server.stop() }
        server.route("/a.png", .ok(pngLikeData(count: 100)))
        server.hold("/a.png")
        let url = server.url("/a.png")
        let runs = Collected<UInt8>()
        let leaving = Task { try await downloader.downloadImage(with: url, options: .init(processor: CountingProcessor(value: 1, runs: runs))) }
        let staying = Task { try await downloader.downloadImage(with: url) }
        #expect(await eventually { downloader.networkCallerCount(for: url) == 2 })
        leaving.cancel()
        let error = await #expect(throws: AlcedoError.self) { try await leaving.value }
        #expect(error?.isCancellation == true)
        // The cancelled processor's run left the network request; the other one is still there.
        #expect(await eventually { downloader.networkCallerCount(for: url) == 1 })
        server.release("/a.png")
        let kept = try await staying.value
        #expect(kept.image.width == 2)
        #expect(runs.values.isEmpty)
        #expect(server.requestCount("/a.png") == 1)
        await downloader.shutdown()
    }

    @Test func callbackFormDeliversTheImage() async throws {
        let server = try await TestHTTPServer.start()
        let (downloader, _) = makeDownloader()
        defer { server.stop() }
        server.route("/a.png", .ok(pngLikeData(count: 100)))
        let delivered = Collected<Result<PixelSize, AlcedoError>>()
        let task = downloader.downloadImage(with: server.url("/a.png")) { result in
            delivered.append(result.map(\.image.pixelSize))
        }
        #expect(task.url == server.url("/a.png"))
        #expect(await eventually { !delivered.values.isEmpty })
        #expect(try delivered.values.map { try $0.get() } == [PixelSize(width: 2, height: 2)])
        await downloader.shutdown()
    }
}

@Suite("ImageDownloader with the built-in codecs")
struct ImageDownloaderCodecTests {
    @Test func downloadsAndDecodesJPEGAndPNG() async throws {
        try await withDownloader { server, downloader in
            let jpeg = try Fixtures.data("libjpeg-turbo/testorig.jpg")
            server.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let result = try await downloader.downloadImage(with: server.url("/photo.jpg"))
            #expect(result.image.pixelSize == PixelSize(width: 227, height: 149))
            #expect(result.image.sourceFormat == .jpeg)
            #expect(result.originalData == jpeg)

            let png = try samplePNG()
            server.route("/a.png", .ok(png))
            let decoded = try await downloader.downloadImage(with: server.url("/a.png"))
            let info = try ImageCodecRegistry.shared.info(for: png)
            #expect(decoded.image.pixelSize == PixelSize(width: info.width, height: info.height))
            #expect(decoded.image.sourceFormat == .png)
        }
    }

    @Test func downsamplingProcessorMakesAThumbnail() async throws {
        try await withDownloader { server, downloader in
            server.route("/photo.jpg", .ok(try Fixtures.data("libjpeg-turbo/testorig.jpg")))
            server.route("/test.webp", .ok(try Fixtures.data("libwebp/test.webp")))
            let thumb = DownloadOptions(processor: DownsamplingImageProcessor(size: PixelSize(width: 60, height: 60)))
            let jpeg = try await downloader.downloadImage(with: server.url("/photo.jpg"), options: thumb)
            #expect(max(jpeg.image.width, jpeg.image.height) == 60)
            let webp = try await downloader.downloadImage(with: server.url("/test.webp"), options: thumb)
            #expect(max(webp.image.width, webp.image.height) <= 60)
            #expect(webp.image.sourceFormat == .webp)
        }
    }
}

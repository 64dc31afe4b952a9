import Foundation
import Synchronization
import Testing
@testable import Alcedo

/// A test server, a downloader and a cache in a fresh temporary folder, with a manager on them.
struct PipelineHarness: Sendable {
    let server: TestHTTPServer
    let downloader: ImageDownloader
    let cache: ImageCache
    let manager: ImageManager
    let folder: TemporaryDirectory

    /// A second cache in the same temporary folder, named `name`.
    func makeCache(_ name: String) -> ImageCache {
        ImageCache(name: name, cacheDirectoryURL: folder.url)
    }
}

/// Runs `body` with a fresh ``PipelineHarness``, shutting it down afterwards. The download
/// timeout is long by default: other suites running alongside may starve the test of CPU.
func withPipeline<T>(timeout: Duration = .seconds(300), maximumConcurrentRequestsPerHost: Int = 6,
                     _ body: (PipelineHarness) async throws -> T) async throws -> T {
    let configuration = ImageDownloader.Configuration(maximumConcurrentRequestsPerHost: maximumConcurrentRequestsPerHost,
                                                      timeout: timeout)
    return try await withDownloader(configuration) { server, downloader in
        let folder = try TemporaryDirectory()
        let cache = ImageCache(name: "pipeline", cacheDirectoryURL: folder.url)
        return try await body(PipelineHarness(server: server, downloader: downloader, cache: cache,
                                              manager: ImageManager(downloader: downloader, cache: cache), folder: folder))
    }
}

/// Small generated test images, encoded with Alcedo's own encoders.
enum TestImages {
    /// A `width` x `height` opaque image with a gradient seeded by `seed`.
    static func image(width: Int, height: Int, seed: Int = 0) -> AlcedoImage {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let index = (y * width + x) * 4
                pixels[index] = UInt8(truncatingIfNeeded: x * 255 / max(width - 1, 1) + seed * 37)
                pixels[index + 1] = UInt8(truncatingIfNeeded: y * 255 / max(height - 1, 1) + seed * 11)
                pixels[index + 2] = UInt8(truncatingIfNeeded: seed * 53)
            }
        }
        return AlcedoImage(width: width, height: height, pixels: pixels, sourceFormat: .jpeg)
    }

    /// A JPEG of `width` x `height` (quality 90).
    static func jpeg(width: Int = 16, height: Int = 12, seed: Int = 0) -> Data {
        // Encoding a generated image cannot fail; a failure here is a bug worth a crash in tests.
        try! ImageCodecRegistry.shared.encode(image(width: width, height: height, seed: seed), as: .jpeg)
    }

    /// A lossless WebP of `width` x `height`.
    static func webp(width: Int = 16, height: Int = 12, seed: Int = 0) -> Data {
        try! ImageCodecRegistry.shared.encode(image(width: width, height: height, seed: seed), as: .webp,
                                              options: EncodingOptions(lossless: true))
    }
}

/// A processor that counts its runs and inverts the image, with a chosen identifier.
struct InvertingCountingProcessor: ImageProcessor {
    let name: String
    let runs: Counter
    var target: PixelSize?

    var identifier: String { "test.counting(\(name))" }
    var decodingTarget: (size: PixelSize, mode: ContentMode)? { target.map { ($0, .aspectFit) } }

    func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        runs.increment()
        let frames = image.frames.map { frame in
            AlcedoImage.Frame(pixels: frame.pixels.enumerated().map { $0.offset % 4 == 3 ? $0.element : 255 - $0.element },
                              duration: frame.duration)
        }
        return image.replacingFrames(frames)
    }
}

/// A processor that always fails.
struct FailingProcessor: ImageProcessor {
    var identifier: String { "test.failing" }
    func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        throw .processorError(reason: .invalidParameter(processor: "FailingProcessor", message: "always fails"))
    }
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

extension AlcedoError {
    /// The nested reason of a `.cacheError`, for matching in tests.
    var cacheReason: CacheErrorReason? {
        if case .cacheError(let reason) = self { return reason }
        return nil
    }

    /// The nested reason of an `.imageSettingError`, for matching in tests.
    var settingReason: ImageSettingErrorReason? {
        if case .imageSettingError(let reason) = self { return reason }
        return nil
    }
}

extension PipelineHarness {
    /// The requests waiting for a place under the per-host limit of `path`'s host.
    func waitingRequests(_ path: String) -> Int {
        guard let host = ImageDownloader.hostKey(server.url(path)) else { return 0 }
        return downloader.hostLimiter.load(host).waiting
    }
}

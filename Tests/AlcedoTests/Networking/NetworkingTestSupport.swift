import Foundation
import Testing
@testable import Alcedo

/// Runs `body` with a fresh test server and downloader, shutting both down afterwards.
func withDownloader<T>(_ configuration: ImageDownloader.Configuration = .init(timeout: .seconds(30)),
                       _ body: (TestHTTPServer, ImageDownloader) async throws -> T) async throws -> T {
    let server = try await TestHTTPServer.start()
    let downloader = ImageDownloader(name: "test", configuration: configuration)
    do {
        let result = try await body(server, downloader)
        await downloader.shutdown()
        try await server.shutdown()
        return result
    } catch {
        await downloader.shutdown()
        try? await server.shutdown()
        throw error
    }
}

/// Bytes that sniff as PNG: the signature followed by zeros, `count` bytes in all.
func pngLikeData(count: Int) -> Data {
    var data = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    data.append(Data(repeating: 0, count: max(0, count - data.count)))
    return data
}

/// A real PNG file from the fixtures.
func samplePNG() throws -> Data { try Fixtures.data("libpng/testpngs/rgb-8.png") }

/// Waits (polling every 5 ms, at most `seconds`; generous, as the whole suite runs in parallel on few cores
/// and a loaded runner can take minutes over what a quiet one does in seconds) until `condition` holds; `false` if it never does.
func eventually(within seconds: Double = 300, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}

/// Thread-safe list for collecting values from callbacks.
final class Collected<Element: Sendable>: Sendable {
    private let storage = Mutex<[Element]>([])

    func append(_ element: Element) { storage.withLock { $0.append(element) } }
    var values: [Element] { storage.withLock { $0 } }
    /// How many were collected (without copying them: a copy held while another thread
    /// appends makes every append copy the whole array).
    var count: Int { storage.withLock { $0.count } }
}

import Synchronization

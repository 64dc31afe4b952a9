import Foundation
import Synchronization
import Testing
@testable import Alcedo

/// The Kingfisher-shaped hooks of ``ImageDownloaderDelegate`` that Kingfisher's own downloader
/// tests do not reach, the `nil` URL a redirect handler may return, and ``Delegate``.
@Suite("ImageDownloader delegate hooks")
struct ImageDownloaderDelegateTests {
    /// Records the hooks it is called with, as "hook url".
    final class Recorder: ImageDownloaderDelegate, Sendable {
        let events = Mutex<[String]>([])
        let validCodes: Set<Int>?

        init(validCodes: Set<Int>? = nil) {
            self.validCodes = validCodes
        }

        func imageDownloader(_ downloader: ImageDownloader, willDownloadImageForURL url: URL, with request: DownloadRequest?) {
            events.withLock { $0.append("will \(url.path)") }
        }

        func imageDownloader(_ downloader: ImageDownloader, didDownload image: AlcedoImage, for url: URL, with response: DownloadResponse?) {
            events.withLock { $0.append("image \(url.path) \(image.width)x\(image.height)") }
        }

        func imageDownloader(_ downloader: ImageDownloader, didFinishDownloadingImageForURL url: URL,
                             with response: DownloadResponse?, error: (any Error)?) {
            events.withLock { $0.append("finish \(url.path) \(response?.statusCode ?? 0) \(error == nil ? "ok" : "error")") }
        }

        func isValidStatusCode(_ code: Int, for downloader: ImageDownloader) -> Bool {
            validCodes?.contains(code) ?? downloader.configuration.acceptableStatusCodes.contains(code)
        }
    }

    @Test func hooksRunInOrderOncePerDownload() async throws {
        let recorder = Recorder()
        var configuration = ImageDownloader.Configuration(timeout: .seconds(30))
        configuration.delegate = recorder
        try await withDownloader(configuration) { server, downloader in
            let png = try samplePNG()
            server.route("/a.png", .ok(png))
            let image = try await downloader.downloadImage(with: server.url("/a.png")).image
            let events = recorder.events.withLock { $0 }
            #expect(events == ["will /a.png", "finish /a.png 200 ok", "image /a.png \(image.width)x\(image.height)"])
        }
    }

    @Test func isValidStatusCodeDecidesWhatSucceeds() async throws {
        // A 203 is a success by default; this delegate accepts only 200.
        let recorder = Recorder(validCodes: [200])
        var configuration = ImageDownloader.Configuration(timeout: .seconds(30))
        configuration.delegate = recorder
        try await withDownloader(configuration) { server, downloader in
            var response = TestHTTPServer.Response.ok(pngLikeData(count: 100))
            response.status = 203
            server.route("/203.png", response)
            let error = await #expect(throws: AlcedoError.self) { try await downloader.downloadData(with: server.url("/203.png")) }
            #expect(error?.isInvalidResponseStatusCode(203) == true)
            let events = recorder.events.withLock { $0 }
            #expect(events.last == "finish /203.png 203 error")
        }
    }

    @Test func redirectHandlerReturningNoURLFailsBeforeSending() async throws {
        try await withDownloader { server, downloader in
            server.route("/start", .redirect(to: "/never.png"))
            server.route("/never.png", .ok(pngLikeData(count: 100)))
            let handler = AnyRedirectHandler { _, request in
                var request = request
                request.url = nil
                return request
            }
            let error = await #expect(throws: AlcedoError.self) {
                try await downloader.downloadData(with: server.url("/start"), options: DownloadOptions(redirectHandler: handler))
            }
            guard case .requestError(.invalidURL(request: .missingURL)) = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(server.requests("/never.png").isEmpty)
        }
    }

    final class Target: Sendable {
        let name: String
        init(_ name: String) { self.name = name }
    }

    @Test func delegateHoldsItsTargetWeakly() {
        let slot = Delegate<Int, String>()
        #expect(slot.call(1) == nil)
        #expect(!slot.isSet)
        var target: Target? = Target("t")
        if let target {
            slot.delegate(on: target) { target, input in "\(target.name)\(input)" }
        }
        #expect(slot.call(2) == "t2")
        #expect(slot.isSet)
        target = nil
        #expect(slot.call(3) == nil)
    }
}

import AlcedoTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing
@testable import Alcedo

/// Refused, reset, DNS and TLS failures, each produced for real on loopback, become their own
/// `RequestErrorReason` with a clean one-line description.
@Suite("Connection errors")
struct ConnectionErrorTests {
    /// A port on 127.0.0.1 that refuses connections while `body` runs (bound, not listening,
    /// so no other test's server can be given it meanwhile).
    static func withRefusingPort<T>(_ body: (Int) async throws -> T) async throws -> T {
        let (fd, port) = try LoopbackPort.refusing()
        defer { close(fd) }
        return try await body(port)
    }

    static func failure(_ url: URL, downloader: ImageDownloader) async -> AlcedoError? {
        do {
            _ = try await downloader.downloadData(with: url)
            return nil
        } catch {
            return error
        }
    }

    @Test func refusedConnection() async throws {
        try await withDownloader { _, downloader in try await Self.withRefusingPort { port in
            let url = URL(string: "http://127.0.0.1:\(port)/a.jpg")!
            let error = try #require(await Self.failure(url, downloader: downloader))
            guard case .responseError(.URLSessionError(NetworkErrorReason.connectionRefused(let failed))) = error else {
                Issue.record("refused reported as \(String(reflecting: error))")
                return
            }
            #expect(failed == url)
            #expect(error.description == "network error: connection refused by 127.0.0.1:\(url.port!) (\(url.absoluteString))")
            #expect(String(reflecting: error) == "AlcedoError.responseError(.URLSessionError(.connectionRefused)): \(error.description)")
            #expect(error.isRetriable)
            #expect(error.isConnectionFailure)
        } }
    }

    @Test func resetConnection() async throws {
        try await withDownloader { server, downloader in
            server.route("/reset.jpg", .reset)
            let url = server.url("/reset.jpg")
            let error = try #require(await Self.failure(url, downloader: downloader))
            guard case .responseError(.URLSessionError(NetworkErrorReason.connectionReset)) = error else {
                Issue.record("reset reported as \(String(reflecting: error))")
                return
            }
            #expect(error.description == "network error: connection reset by 127.0.0.1:\(server.port) before the response was complete (\(url.absoluteString))")
            #expect(String(reflecting: error).hasPrefix("AlcedoError.responseError(.URLSessionError(.connectionReset)): "))
        }
    }

    @Test func unresolvableHostName() async throws {
        try await withDownloader { _, downloader in
            let url = URL(string: "http://alcedo-test.invalid/a.jpg")!
            let error = try #require(await Self.failure(url, downloader: downloader))
            guard case .responseError(.URLSessionError(NetworkErrorReason.dnsFailure(_, let host))) = error else {
                Issue.record("DNS failure reported as \(String(reflecting: error))")
                return
            }
            #expect(host == "alcedo-test.invalid")
            #expect(error.description == "network error: cannot resolve host name alcedo-test.invalid (\(url.absoluteString))")
            #expect(String(reflecting: error).hasPrefix("AlcedoError.responseError(.URLSessionError(.dnsFailure)): "))
        }
    }

    @Test func tlsToAPlainHTTPServer() async throws {
        try await withDownloader { server, downloader in
            server.route("/a.jpg", .ok(TestImages.jpeg()))
            let url = URL(string: "https://127.0.0.1:\(server.port)/a.jpg")!
            let error = try #require(await Self.failure(url, downloader: downloader))
            guard case .responseError(.URLSessionError(NetworkErrorReason.tlsFailure(_, let message))) = error else {
                Issue.record("TLS failure reported as \(String(reflecting: error))")
                return
            }
            #expect(!message.isEmpty)
            #expect(!message.contains("\n"))
            #expect(error.description.hasPrefix("network error: TLS failure with 127.0.0.1:\(server.port): "))
            #expect(String(reflecting: error).hasPrefix("AlcedoError.responseError(.URLSessionError(.tlsFailure)): "))
            #expect(!error.isRetriable)
        }
    }

    @Test func debugDescriptionNamesTheCaseOfEveryStage() {
        let url = URL(string: "http://example.com/a.png")!
        #expect(String(reflecting: AlcedoError.requestError(reason: .cancelled)) == "AlcedoError.requestError(.taskCancelled): request error: cancelled")
        #expect(String(reflecting: AlcedoError.imageSettingError(reason: .emptySource)).hasPrefix("AlcedoError.imageSettingError(.emptySource): "))
        #expect(String(reflecting: AlcedoError.networkError(reason: .timedOut(url, limit: .seconds(2))))
            == "AlcedoError.responseError(.URLSessionError(.timedOut)): network error: \(url.absoluteString) did not finish downloading within 2 s")
        #expect(String(reflecting: AlcedoError.cacheError(reason: .imageNotExisting(key: "k"))).hasPrefix("AlcedoError.cacheError(.imageNotExisting): "))
    }
}

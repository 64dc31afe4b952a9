import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Hummingbird
import NIOCore

/// The `raw` option: the source's response passed to the client as it arrives, unprocessed and
/// not required to be an image, as imgproxy's stream handler does.
///
/// Passed through: the origin's status (a 404 stays a 404), its `Content-Type`,
/// `Content-Encoding`, `Content-Range`, `Accept-Ranges`, `Last-Modified`, `ETag` and
/// `Content-Length`; sent on to the origin: the client's `If-None-Match`, `If-Modified-Since`,
/// `Accept-Encoding` and `Range`. What still applies: the source checks (allowed sources, the
/// address guard on every redirect), the redirect limit, the download timeout (for the whole
/// transfer), and the source-size limits (`--max-src-bytes` and the URL's `max_src_file_size`):
/// a `Content-Length` over them is refused with 422 before anything is sent, and a body
/// without one that passes them is cut off (the connection closes short of the whole body).
/// The pixel and frame limits do not apply (nothing is decoded).
struct SourceStream: Sendable {
    /// Request header fields copied to the origin.
    static let requestHeaders = ["If-None-Match", "If-Modified-Since", "Accept-Encoding", "Range"]
    /// Response header fields copied from the origin.
    static let responseHeaders = ["Content-Type", "Content-Encoding", "Content-Range", "Accept-Ranges", "Last-Modified", "ETag"]

    let downloader: ImageDownloader
    let sourceGuard: SourceGuard
    let timeout: Duration
    let maximumRedirects: Int
    let userAgent: String

    /// The origin's answer to `url`: its status, the header fields to pass on and the body.
    struct Opened: Sendable {
        let status: Int
        let headers: HTTPHeaderFields
        let url: URL
        let body: ImageDataBody
    }

    /// Sends the request (following redirects, each checked by the source guard) and returns
    /// once the final response head has arrived.
    /// - Throws: ``AlcedoError`` for a refused or failed request or too many redirects.
    func open(_ url: URL, clientHeaders: HTTPFields) async throws -> Opened {
        var current = url
        var visited: Set<String> = [url.absoluteString]
        for _ in 0...maximumRedirects {
            var request = DownloadRequest(url: current, headers: ["User-Agent": userAgent])
            for name in Self.requestHeaders {
                if let field = HTTPField.Name(name), let value = clientHeaders[field] { request.headers[name] = value }
            }
            let target = current
            let response: ImageDataLoaderResponse
            do {
                let sent = request
                response = try await Self.within(timeout, url: target) { [downloader] in try await downloader.loader.load(sent) }
            } catch let error as AlcedoError {
                throw error
            } catch let refusal as SourceRefusal {
                throw refusal
            } catch {
                throw AlcedoError.networkError(reason: .networkFailure(target, underlying: error))
            }
            let redirects: Set<Int> = [301, 302, 303, 307, 308]
            if redirects.contains(response.statusCode), let location = response.headers["Location"],
               let next = URL(string: location, relativeTo: current)?.absoluteURL {
                guard visited.insert(next.absoluteString).inserted else {
                    throw AlcedoError.requestError(reason: .redirectLoop(next))
                }
                current = try sourceGuard.checkSource(next.absoluteString)
                continue
            }
            return Opened(status: response.statusCode, headers: response.headers, url: current, body: response.body)
        }
        throw AlcedoError.requestError(reason: .tooManyRedirects(current, limit: maximumRedirects))
    }

    /// `body` as a response body that ends once `limit` bytes are passed (the client sees the
    /// connection close early) or the transfer outlives `deadline`.
    static func responseBody(_ body: ImageDataBody, limit: Int, deadline: ContinuousClock.Instant) -> ResponseBody {
        let (chunks, continuation) = AsyncThrowingStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingNewest(64))
        let producer = Task {
            var received = 0
            do {
                for try await chunk in body {
                    received += chunk.count
                    guard received <= limit else { throw SourceStreamError.tooLarge(limit) }
                    continuation.yield(ByteBuffer(bytes: chunk))
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        let watchdog = Task {
            try? await Task.sleep(until: deadline, clock: .continuous)
            if !Task.isCancelled {
                producer.cancel()
                continuation.finish(throwing: SourceStreamError.timedOut)
            }
        }
        continuation.onTermination = { _ in
            producer.cancel()
            watchdog.cancel()
        }
        return ResponseBody { writer in
            for try await chunk in chunks { try await writer.write(chunk) }
            try await writer.finish(nil)
        }
    }

    /// Runs `work`, throwing a timeout error for `url` when it takes longer than `limit`.
    static func within<T: Sendable>(_ limit: Duration, url: URL, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await work() }
            group.addTask {
                try await Task.sleep(for: limit)
                throw AlcedoError.networkError(reason: .timedOut(url, limit: limit))
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw CancellationError() }
            return first
        }
    }

    enum SourceStreamError: Error { case tooLarge(Int), timedOut }
}

import AlcedoTestSupport
import Foundation
import Testing
@testable import Alcedo

/// What Alcedo's own HTTP/1.1 client does with responses no HTTP library would write: each is
/// sent byte for byte by a raw loopback origin. None may stop the process; each is a typed error
/// or the body it framed.
@Suite("HTTP client on the wire")
struct HTTPImageLoaderWireTests {
    /// The loader's answer for `bytes`: the status and body, or the error.
    private func load(_ bytes: String, loader: HTTPImageLoader, origin: RawOrigin) async -> Result<(Int, Data), any Error> {
        do {
            let response = try await loader.load(DownloadRequest(url: origin.url(answering: Array(bytes.utf8))))
            var body = Data()
            for try await chunk in response.body { body.append(chunk) }
            return .success((response.statusCode, body))
        } catch {
            return .failure(error)
        }
    }

    private func rejection(_ result: Result<(Int, Data), any Error>) -> String? {
        guard case .failure(let error as AlcedoError) = result,
              case .responseError(reason: .invalidURLResponse(response: .rejected(_, let message))) = error else { return nil }
        return message
    }

    @Test("a status code below 100 is a rejected response, not an informational head to skip",
          arguments: ["000", "001", "042", "099"])
    func statusBelow100(code: String) async throws {
        let origin = try RawOrigin()
        defer { origin.stop() }
        let loader = HTTPImageLoader()
        defer { Task { await loader.shutdown() } }
        for framing in ["Content-Length: 5\r\n\r\nhello", "Content-Length: 0\r\n\r\n", "\r\nhello", "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"] {
            let result = await load("HTTP/1.1 \(code) X\r\nConnection: close\r\n" + framing, loader: loader, origin: origin)
            let message = try #require(rejection(result), "\(result)")
            #expect(message.contains("\(Int(code)!)") && message.contains("not an HTTP status code"))
        }
    }

    @Test("status codes from 100 to 999 pass through with their body", arguments: [200, 204, 299, 404, 500, 599, 600, 999])
    func validStatus(code: Int) async throws {
        let origin = try RawOrigin()
        defer { origin.stop() }
        let loader = HTTPImageLoader()
        defer { Task { await loader.shutdown() } }
        let body = code == 204 ? "" : "hello"
        let result = await load("HTTP/1.1 \(code) X\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)",
                                loader: loader, origin: origin)
        let (status, data) = try result.get()
        #expect(status == code && data == Data(body.utf8))
    }

    @Test("informational heads before the final one are skipped")
    func informationalHeads() async throws {
        let origin = try RawOrigin()
        defer { origin.stop() }
        let loader = HTTPImageLoader()
        defer { Task { await loader.shutdown() } }
        let result = await load("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", loader: loader, origin: origin)
        let (status, data) = try result.get()
        #expect(status == 200 && data == Data("ok".utf8))
    }

    @Test("101 Switching Protocols that nobody asked for is rejected")
    func unrequestedUpgrade() async throws {
        let origin = try RawOrigin()
        defer { origin.stop() }
        let loader = HTTPImageLoader()
        defer { Task { await loader.shutdown() } }
        let result = await load("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nxx",
                                loader: loader, origin: origin)
        #expect(rejection(result)?.contains("switched protocols") == true, "\(result)")
    }

    @Test("a status line that is not HTTP at all, or a code of four digits, is a rejected response",
          arguments: ["HTTP/1.1 1000 Big\r\n\r\n", "ICY 200 OK\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n", "\u{0}\u{1}garbage\r\n\r\n",
                      "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
                      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"])
    func notHTTP(bytes: String) async throws {
        let origin = try RawOrigin()
        defer { origin.stop() }
        let loader = HTTPImageLoader()
        defer { Task { await loader.shutdown() } }
        let result = await load(bytes, loader: loader, origin: origin)
        #expect(rejection(result)?.contains("not valid HTTP/1.1") == true, "\(result)")
    }

    @Test("a body without length is read to the connection's end; a chunked one is joined")
    func framing() async throws {
        let origin = try RawOrigin()
        defer { origin.stop() }
        let loader = HTTPImageLoader()
        defer { Task { await loader.shutdown() } }
        let untilClose = try await load("HTTP/1.0 200 OK\r\n\r\nall of it", loader: loader, origin: origin).get()
        #expect(untilClose.1 == Data("all of it".utf8))
        let chunked = try await load("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
                                     loader: loader, origin: origin).get()
        #expect(chunked.1 == Data("abcde".utf8))
    }

    @Test("a body cut short by the origin is an error, never a short success")
    func truncatedBody() async throws {
        let origin = try RawOrigin()
        defer { origin.stop() }
        let loader = HTTPImageLoader()
        defer { Task { await loader.shutdown() } }
        let result = await load("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten..", loader: loader, origin: origin)
        guard case .failure = result else {
            Issue.record("a 10-byte body of a declared 100 succeeded: \(result)")
            return
        }
    }

    @Test("an origin that closes before any byte is retried once, then reported as a reset")
    func closedAtOnce() async throws {
        let origin = try RawOrigin()
        defer { origin.stop() }
        let loader = HTTPImageLoader()
        defer { Task { await loader.shutdown() } }
        let result = await load("", loader: loader, origin: origin)
        guard case .failure(let error as AlcedoError) = result, case .connectionReset? = error.networkReason else {
            Issue.record("expected a connection reset, got \(result)")
            return
        }
    }

    @Test("the URL's path and query reach the origin percent-encoded as written, with a Host header")
    func requestLine() throws {
        let target = try #require(HTTP1Client.Target(URL(string: "http://[::1]:8080/a%20b/c.jpg?x=1%2F2&y")!))
        #expect(target.host == "::1" && target.port == 8080 && target.hostHeader == "[::1]:8080")
        #expect(target.requestURI == "/a%20b/c.jpg?x=1%2F2&y")
        let https = try #require(HTTP1Client.Target(URL(string: "https://Example.com")!))
        #expect(https.isTLS && https.port == 443 && https.hostHeader == "Example.com" && https.requestURI == "/")
        #expect(HTTP1Client.Target(URL(string: "ftp://example.com/a")!) == nil)
    }

    @Test("hundreds of bodies over kept-alive connections, six at a time, each read to its end or dropped early")
    func keepAliveUnderLoad() async throws {
        try await withDownloader { server, downloader in
            let body = pngLikeData(count: 48_000)
            for index in 0..<40 { server.route("/\(index).png", .ok(body, contentType: "image/png")) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<6 {
                    group.addTask {
                        for round in 0..<50 {
                            let data = try await downloader.downloadData(with: server.url("/\((worker * 50 + round) % 40).png")).data
                            #expect(data == body)
                        }
                    }
                }
                try await group.waitForAll()
            }
            // Bodies abandoned half-way by the loader's own consumer: the connection is dropped,
            // never handed to the next request.
            let loader = HTTPImageLoader()
            defer { Task { await loader.shutdown() } }
            let big = pngLikeData(count: 4 << 20)
            server.route("/big.png", .ok(big, contentType: "image/png"))
            for index in 0..<30 {
                let response = try await loader.load(DownloadRequest(url: server.url(index % 3 == 0 ? "/big.png" : "/\(index % 40).png")))
                var iterator = response.body.makeAsyncIterator()
                var count = try await iterator.next()?.count ?? 0
                if index % 3 == 0 { continue }
                while let chunk = try await iterator.next() { count += chunk.count }
                #expect(count == body.count)
            }
            let final = try await loader.load(DownloadRequest(url: server.url("/0.png")))
            var received = Data()
            for try await chunk in final.body { received.append(chunk) }
            #expect(received == body)
        }
    }
}

import Foundation
import Testing
@testable import Alcedo

/// URLs are checked before any loader or HTTP library sees them: a port above 65,535 handed to
/// the HTTP client stopped the process.
@Suite("Request URL checks")
struct RequestURLCheckTests {
    @Test("URLs a loader may be handed", arguments: [
        "http://example.com/a.jpg", "https://example.com:443/a.jpg", "http://8.8.8.8:65535/a.jpg",
        "http://8.8.8.8:1/a.jpg", "http://[2001:db8::1]:8080/a.jpg", "http://[::1]/a.jpg",
        "http://user:pass@example.com:8080/a.jpg", "http://EXAMPLE.com./a.jpg", "http://my_host.local/x",
        "http://example.com:/a.jpg", "HTTPS://example.com/a%20b.jpg?x=1#f",
    ])
    func accepted(_ text: String) throws {
        let url = try #require(URL(string: text))
        #expect(RequestURLCheck.problem(withHTTPURL: url) == nil, "\(text)")
    }

    @Test("URLs that are refused before any library sees them, with the reason", arguments: [
        ("http://8.8.8.8:99999/a.jpg", "port"), ("http://8.8.8.8:65536/a.jpg", "port"),
        ("http://8.8.8.8:0/a.jpg", "port"), ("http://example.com:000080/a.jpg", "port"),
        ("http://example.com:123456789012345678901234567890/a.jpg", "port"),
        ("http://[::1]x/a.jpg", "port"), ("http://[::1%25eth0]/a.jpg", "zone"), ("http://[zz::1]/a.jpg", "IPv6"),
        ("http://1.2.3.999/a.jpg", "IPv4"), ("http://2130706433/a.jpg", "IPv4"), ("http://a..b/a.jpg", "host name"),
        ("http://exa%41mple.com/a.jpg", "host name"), ("http:///a.jpg", "host"), ("ftp://example.com/a.jpg", "scheme"),
        ("http://" + String(repeating: "a", count: 64) + ".com/", "host name"),
        ("http://" + String(repeating: "a.", count: 130) + "com/", "longer"),
        ("http://example.com/" + String(repeating: "a", count: 9000), "longer"),
    ])
    func refused(_ text: String, _ expected: String) throws {
        guard let url = URL(string: text) else { return }  // what URL cannot parse never reaches a loader
        let problem = try #require(RequestURLCheck.problem(withHTTPURL: url), "\(text) was accepted")
        #expect(problem.contains(expected), "\(text): \(problem)")
        #expect(throws: AlcedoError.self) { try RequestURLCheck.validateHTTPURL(url) }
    }

    @Test("the HTTP loader answers a port above 65535 with a typed error instead of stopping the process")
    func loaderRefusesBadPort() async throws {
        let loader = HTTPImageLoader()
        defer { Task { await loader.shutdown() } }
        let url = try #require(URL(string: "http://127.0.0.1:99999/a.jpg"))
        do {
            _ = try await loader.load(DownloadRequest(url: url))
            Issue.record("a port above 65535 was loaded")
        } catch let error as AlcedoError {
            guard case .requestError(reason: .invalidURL(request: .malformed(let text))) = error else { Issue.record("\(error)"); return }
            #expect(text.contains("99999"), "\(text)")
        }
    }

    @Test("a redirect to a port above 65535 is an invalid URL, not a crash")
    func redirectToBadPort() async throws {
        try await withDownloader { server, downloader in
            server.route("/hop", .redirect(to: "http://127.0.0.1:99999/a.png"))
            server.route("/hop6", .redirect(to: "http://[::1]:70000/a.png"))
            for path in ["/hop", "/hop6"] {
                let outcome: AlcedoError?
                do {
                    _ = try await downloader.downloadData(with: server.url(path))
                    outcome = nil
                } catch {
                    outcome = error as? AlcedoError
                }
                #expect(Self.isRefusedURL(outcome), "\(path): \(String(describing: outcome))")
            }
        }
    }

    /// `true` for the request errors of a URL refused before loading.
    static func isRefusedURL(_ error: AlcedoError?) -> Bool {
        switch error {
        case .requestError(reason: .invalidURL(request: .malformed))?, .requestError(reason: .invalidURL(request: .invalidRedirect))?: return true
        default: return false
        }
    }
}

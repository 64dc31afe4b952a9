#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Hosts whose requests the built-in HTTP loader sends to a port on 127.0.0.1 instead, over
/// plain HTTP, with the original host as the first path segment
/// (`https://example.com/a.png` → `http://127.0.0.1:<port>/example.com/a.png`). Empty, and
/// so without effect, unless a test fills it: it lets the test suites serve the host names
/// that code written for other libraries names from a real server on the loopback interface.
enum LoopbackRouting {
    /// Host name → loopback port.
    static let routes = Mutex<[String: Int]>([:])

    /// The URL `url` is fetched from: its loopback form when its host is routed, else `nil`.
    static func route(_ url: URL) -> URL? {
        guard let host = url.host, let port = routes.withLock({ $0.isEmpty ? nil : $0[host] }) else { return nil }
        var text = "http://127.0.0.1:\(port)/\(host)\(url.path)"
        if let query = url.query { text += "?" + query }
        return URL(string: text)
    }
}

import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells whether the network can reach a URL's host now; ``NetworkRetryStrategy`` asks it
/// before retrying.
public protocol NetworkReachability: Sendable {
    /// `true` when a request to `url` could leave this machine now.
    func isReachable(_ url: URL) async -> Bool
}

/// Reachability as the kernel sees it, the Linux counterpart of the path monitor Kingfisher
/// uses on Apple platforms: the URL's host is resolved with the system resolver, and a route to
/// one of its addresses is asked for by connecting a UDP socket to it (which sends nothing).
///
/// The network counts as available when the name resolves and the kernel has a route to an
/// address: it is not when the machine has no network interface up, no default route, or no
/// working name resolution. A reachable host may still refuse or fail the request itself.
/// URLs without a host, and schemes other than `http` and `https` (an object store's
/// `s3://bucket/key`, `local://`), count as reachable: there is no host to check.
public struct RouteReachability: NetworkReachability {
    /// Creates the check.
    public init() {}

    public func isReachable(_ url: URL) async -> Bool {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              var host = url.host, !host.isEmpty else { return true }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        let name = host
        // The resolver blocks: it runs on a thread of its own, not on the cooperative pool.
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: Self.hasRoute(host: name, port: port))
            }
        }
    }

    /// `true` when `host` resolves and the kernel has a route to one of its addresses.
    static func hasRoute(host: String, port: Int) -> Bool {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc) || canImport(Musl)
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        #else
        hints.ai_socktype = SOCK_DGRAM
        #endif
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { return false }
        defer { freeaddrinfo(first) }
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            let fd = socket(entry.pointee.ai_family, entry.pointee.ai_socktype, entry.pointee.ai_protocol)
            if fd >= 0 {
                // A UDP connect only picks the route (ENETUNREACH when there is none).
                let routed = connect(fd, entry.pointee.ai_addr, entry.pointee.ai_addrlen) == 0
                close(fd)
                if routed { return true }
            }
            cursor = entry.pointee.ai_next
        }
        return false
    }
}

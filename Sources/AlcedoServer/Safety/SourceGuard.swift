import Alcedo
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

/// Why a source was refused (the server answers 403).
public struct SourceRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was refused and why, in one line.
    public let reason: String

    /// The source URL as written when the refusal is that it cannot be read as a URL at all
    /// (a port that is not a number, a space in the host…); `nil` for every other refusal.
    public let unreadableURL: String?

    public init(_ reason: String, unreadableURL: String? = nil) {
        self.reason = reason
        self.unreadableURL = unreadableURL
    }

    public var description: String { "source refused: \(reason)" }
}

/// Decides which sources the server may fetch: the scheme (http and https; `s3` with an
/// ``s3`` configuration, `local` with a ``localRoot``), the allowed URL prefixes, the S3
/// buckets, and the addresses connected to.
///
/// The address check applies to http(s) sources only: the S3 endpoint is the operator's
/// choice (a MinIO on the private network is fine), and a local path is checked against the
/// root instead (``LocalFolderImageDataLoader``).
///
/// By default sources on loopback (127/8, ::1), private (10/8, 172.16/12, 192.168/16,
/// fc00::/7), link-local (169.254/16, cloud metadata included, fe80::/10), multicast,
/// unspecified and CGNAT (100.64/10) addresses are refused. The address check runs on the
/// address actually connected to, for the first request and after every redirect (see
/// ``GuardedImageLoader``), so DNS rebinding cannot get around it. ``allowedAddressKinds``
/// lifts the check for loopback, private or link-local addresses alone, as imgproxy's
/// `IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES`, `…_PRIVATE_…` and `…_LINK_LOCAL_…` do.
public struct SourceGuard: Sendable {
    /// The kinds of address the check can allow one by one (imgproxy's three switches).
    public enum AddressKind: String, Sendable, Hashable, CaseIterable {
        /// Loopback and unspecified addresses (127/8, 0/8, ::1, ::).
        case loopback
        /// Private addresses (10/8, 172.16/12, 192.168/16, fc00::/7) and CGNAT (100.64/10).
        case `private`
        /// Link-local unicast and multicast (169.254/16, 224.0.0/24, fe80::/10, ff02::/16).
        case linkLocal = "link-local"
    }

    /// Lift the address check entirely (default `false`).
    public var allowPrivateNetworks: Bool
    /// Address kinds allowed although the check is on (default none).
    public var allowedAddressKinds: Set<AddressKind>
    /// URL prefixes a source must start with (default empty: any http(s) URL). A `*` in a
    /// prefix matches any run of characters other than `/`, as in imgproxy's
    /// `IMGPROXY_ALLOWED_SOURCES` (`https://*.example.com/`).
    public var allowedSources: [String]
    /// Host names exempt from the address check, such as an internal origin you run
    /// (default empty). Only the exact host is exempt: a redirect elsewhere is checked.
    public var trustedHosts: Set<String>

    /// The S3 store `s3://bucket/key` sources are read from (default `nil`: the `s3:` scheme
    /// is refused). Its allowed and denied buckets are checked here, before any cache or request.
    public var s3: S3Configuration?
    /// The folder `local:///path` sources are read from (default `nil`: the `local:` scheme is refused).
    public var localRoot: URL?

    /// Creates a guard; every parameter defaults to the value stated on its property.
    public init(allowPrivateNetworks: Bool = false, allowedSources: [String] = [], trustedHosts: Set<String> = [],
                allowedAddressKinds: Set<AddressKind> = [], s3: S3Configuration? = nil, localRoot: URL? = nil) {
        self.allowPrivateNetworks = allowPrivateNetworks
        self.allowedSources = allowedSources
        self.trustedHosts = trustedHosts
        self.allowedAddressKinds = allowedAddressKinds
        self.s3 = s3
        self.localRoot = localRoot
    }

    /// The source URL when its scheme and prefix are allowed.
    /// - Throws: ``SourceRefusal`` naming the scheme or the missing prefix.
    public func checkSource(_ text: String) throws(SourceRefusal) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            throw SourceRefusal("\"\(text)\" is not an absolute URL", unreadableURL: text)
        }
        switch scheme {
        case "http", "https":
            guard let host = url.host, !host.isEmpty else { throw SourceRefusal("\"\(text)\" has no host") }
        case "s3":
            guard let s3 else { throw SourceRefusal("the s3: scheme is not enabled (alcedo serve --s3)") }
            let location: S3ObjectLocation
            do throws(AlcedoError) {
                location = try S3ObjectLocation(url: url)
            } catch {
                throw SourceRefusal("\"\(text)\" is not s3://bucket/key")
            }
            if let refusal = s3.refusal(forBucket: location.bucket) { throw SourceRefusal(refusal) }
        case "local":
            guard localRoot != nil else { throw SourceRefusal("the local: scheme needs a root folder (alcedo serve --local-root DIR)") }
            do throws(AlcedoError) {
                _ = try LocalFolderImageDataLoader.segments(of: url)
            } catch {
                if case .requestError(.invalidURL(.sourceNotAllowed(_, let reason))) = error { throw SourceRefusal("\(text): \(reason)") }
                throw SourceRefusal("\"\(text)\" is not local:///path")
            }
        default:
            throw SourceRefusal("the \(scheme): scheme is not allowed")
        }
        if !allowedSources.isEmpty, !allowedSources.contains(where: { Self.prefix($0, matches: text) }) {
            throw SourceRefusal("\(text) does not start with an allowed source prefix")
        }
        return url
    }

    /// Whether `text` starts with `pattern`, where each `*` in the pattern stands for any run
    /// (possibly empty) of characters other than `/`.
    public static func prefix(_ pattern: String, matches text: String) -> Bool {
        guard pattern.contains(literal: "*") else { return text.hasPrefix(pattern) }
        return matchPrefix(Array(pattern.utf8)[...], Array(text.utf8)[...])
    }

    private static func matchPrefix(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
        guard let star = pattern.firstIndex(of: UInt8(ascii: "*")) else { return text.starts(with: pattern) }
        let literal = pattern[pattern.startIndex..<star]
        guard text.starts(with: literal) else { return false }
        let rest = pattern[(star + 1)...]
        var index = text.startIndex + literal.count
        // The wildcard takes 0, 1, 2… characters, never a `/`.
        while true {
            if matchPrefix(rest, text[index...]) { return true }
            guard index < text.endIndex, text[index] != UInt8(ascii: "/") else { return false }
            index += 1
        }
    }

    /// The name of the forbidden range `address` is in, or `nil` when it may be connected to.
    public static func forbiddenRange(of address: IPAddress) -> String? {
        classify(address)?.range
    }

    /// The range `address` is in and the kind that can allow it alone (`nil` for ranges only
    /// ``allowPrivateNetworks`` lifts: other multicast, broadcast).
    static func classify(_ address: IPAddress) -> (range: String, kind: AddressKind?)? {
        switch address {
        case .v4(let b):
            if b[0] == 127 { return ("loopback (127.0.0.0/8)", .loopback) }
            if b[0] == 10 { return ("private (10.0.0.0/8)", .private) }
            if b[0] == 172, b[1] & 0xF0 == 16 { return ("private (172.16.0.0/12)", .private) }
            if b[0] == 192, b[1] == 168 { return ("private (192.168.0.0/16)", .private) }
            if b[0] == 169, b[1] == 254 { return ("link-local (169.254.0.0/16)", .linkLocal) }
            if b[0] == 100, b[1] & 0xC0 == 64 { return ("CGNAT (100.64.0.0/10)", .private) }
            if b[0] == 224, b[1] == 0, b[2] == 0 { return ("link-local multicast (224.0.0.0/24)", .linkLocal) }
            if b[0] & 0xF0 == 224 { return ("multicast (224.0.0.0/4)", nil) }
            if b[0] == 0 { return ("unspecified (0.0.0.0/8)", .loopback) }
            if b == [255, 255, 255, 255] { return ("broadcast (255.255.255.255)", nil) }
            return nil
        case .v6(let b):
            if b.allSatisfy({ $0 == 0 }) { return ("unspecified (::)", .loopback) }
            if b[0..<15].allSatisfy({ $0 == 0 }), b[15] == 1 { return ("loopback (::1)", .loopback) }
            // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible addresses are checked as IPv4.
            if b[0..<10].allSatisfy({ $0 == 0 }), (b[10] == 0xFF && b[11] == 0xFF) || (b[10] == 0 && b[11] == 0) {
                return classify(.v4(Array(b[12..<16])))
            }
            if b[0] & 0xFE == 0xFC { return ("private (fc00::/7)", .private) }
            if b[0] == 0xFE, b[1] & 0xC0 == 0x80 { return ("link-local (fe80::/10)", .linkLocal) }
            if b[0] == 0xFF, b[1] & 0x0F == 0x02 { return ("link-local multicast (ff02::/16)", .linkLocal) }
            if b[0] == 0xFF { return ("multicast (ff00::/8)", nil) }
            return nil
        }
    }

    /// Throws unless `address` may be connected to (always passes with ``allowPrivateNetworks``).
    public func checkAddress(_ address: IPAddress, host: String) throws(SourceRefusal) {
        guard !allowPrivateNetworks, let (range, kind) = Self.classify(address) else { return }
        if let kind, allowedAddressKinds.contains(kind) { return }
        throw SourceRefusal("\(host) is at \(address), a \(range) address")
    }
}

/// An IPv4 or IPv6 address as bytes.
public enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    case v4([UInt8])
    case v6([UInt8])

    /// Parses a literal (`192.0.2.1`, `::1`, `[::1]`); `nil` for anything else.
    public init?(_ text: String) {
        var literal = text
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            self = .v4(withUnsafeBytes(of: &v4) { Array($0) })
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, literal, &v6) == 1 {
            self = .v6(withUnsafeBytes(of: &v6) { Array($0) })
            return
        }
        return nil
    }

    public var description: String {
        switch self {
        case .v4(let bytes):
            return bytes.map(String.init).joined(separator: ".")
        case .v6(var bytes):
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            return bytes.withUnsafeMutableBytes { raw in
                guard inet_ntop(AF_INET6, raw.baseAddress, &text, socklen_t(text.count)) != nil else { return "?" }
                return String(nulTerminated: text)
            }
        }
    }

    /// Resolves `host` with the system resolver (`getaddrinfo`) on a thread of its own.
    static func resolve(_ host: String) async throws(SourceRefusal) -> [IPAddress] {
        let result: Result<[IPAddress], SourceRefusal> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var hints = addrinfo()
                hints.ai_family = AF_UNSPEC
                #if canImport(Glibc) || canImport(Musl)
                hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
                #else
                hints.ai_socktype = SOCK_STREAM
                #endif
                var list: UnsafeMutablePointer<addrinfo>?
                let status = getaddrinfo(host, nil, &hints, &list)
                guard status == 0, let first = list else {
                    continuation.resume(returning: .failure(SourceRefusal("\(host) could not be resolved (\(String(cString: gai_strerror(status))))")))
                    return
                }
                defer { freeaddrinfo(list) }
                var addresses: [IPAddress] = []
                var cursor: UnsafeMutablePointer<addrinfo>? = first
                while let entry = cursor {
                    if let address = entry.pointee.ai_addr {
                        if entry.pointee.ai_family == AF_INET {
                            address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                                var value = sin.pointee.sin_addr
                                addresses.append(.v4(withUnsafeBytes(of: &value) { Array($0) }))
                            }
                        } else if entry.pointee.ai_family == AF_INET6 {
                            address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                                var value = sin6.pointee.sin6_addr
                                addresses.append(.v6(withUnsafeBytes(of: &value) { Array($0) }))
                            }
                        }
                    }
                    cursor = entry.pointee.ai_next
                }
                var unique: [IPAddress] = []
                for address in addresses where !unique.contains(address) { unique.append(address) }
                continuation.resume(returning: unique.isEmpty ? .failure(SourceRefusal("\(host) has no address")) : .success(unique))
            }
        }
        return try result.get()
    }
}

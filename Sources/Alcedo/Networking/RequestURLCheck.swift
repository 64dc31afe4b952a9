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

/// The checks every `http` or `https` URL passes before a loader, or any library under one,
/// sees it: the URL a caller gave, the one a request modifier returned, and every redirect's
/// target.
///
/// Dependencies trust what they are handed: a port above 65,535 handed to the HTTP client
/// reaches an integer conversion that stops the process. Here such a URL is an ordinary
/// ``AlcedoError/requestError(reason:)`` with ``RequestErrorReason/invalidURL(_:)`` that says
/// what is wrong, so a server answers it with a 4xx and goes on.
public enum RequestURLCheck {
    /// The longest URL accepted, in UTF-8 bytes: 8,192 (the common limit of HTTP servers).
    public static let maximumLength = 8_192

    /// The longest host name accepted, in bytes: 253 (RFC 1035, without the final dot).
    public static let maximumHostLength = 253

    /// What is wrong with `url` as the target of an HTTP request, or `nil` when nothing is:
    /// the scheme is `http` or `https`; the whole URL is at most ``maximumLength`` bytes without
    /// spaces or control characters; the host is present and is a DNS name (labels of 1 to 63
    /// letters, digits, `-` or `_`, at most ``maximumHostLength`` bytes), a dotted IPv4 address
    /// or a bracketed IPv6 address without a zone; the port, when the URL names one, is
    /// 1...65535.
    public static func problem(withHTTPURL url: URL) -> String? {
        let text = url.absoluteString
        if text.utf8.count > maximumLength { return "longer than \(maximumLength) bytes" }
        if text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) { return "a space or control character" }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return "the scheme is not http or https"
        }
        guard let authority = authority(of: text) else { return "no host" }
        let (host, port) = split(authority)
        if let problem = problem(withHost: host) { return problem }
        if let port, !port.isEmpty {
            guard port.utf8.count <= 5, port.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(port),
                  (1...65_535).contains(value) else {
                return "the port \(port.prefix(12)) is not in 1...65535"
            }
        }
        // What the URL type reads must agree with the text checked above.
        if let value = url.port, !(1...65_535).contains(value) { return "the port \(value) is not in 1...65535" }
        if url.host(percentEncoded: true)?.isEmpty ?? true { return "no host" }
        return nil
    }

    /// Throws ``AlcedoError/requestError(reason:)`` with ``RequestErrorReason/invalidURL(_:)``
    /// naming the URL and ``problem(withHTTPURL:)`` when there is one.
    public static func validateHTTPURL(_ url: URL) throws(AlcedoError) {
        if let problem = problem(withHTTPURL: url) {
            throw .requestError(reason: .invalidURL("\(printable(url.absoluteString)) (\(problem))"))
        }
    }

    /// The URL text for a message: at most 200 characters, control characters escaped.
    static func printable(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars.prefix(200) {
            out += scalar.value < 0x20 || scalar.value == 0x7F ? "%" + String(scalar.value, radix: 16, uppercase: true) : String(scalar)
        }
        return text.unicodeScalars.count > 200 ? out + "…" : out
    }

    /// The authority (`[userinfo@]host[:port]`) of an absolute URL's text, without the userinfo;
    /// `nil` when there is none or it is empty.
    private static func authority(of text: String) -> Substring? {
        guard let start = text.range(ofLiteral: "://")?.upperBound else { return nil }
        let rest = text[start...]
        let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var authority = rest[..<end]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        return authority.isEmpty ? nil : authority
    }

    /// The host and the port text (after its colon) of an authority.
    private static func split(_ authority: Substring) -> (host: Substring, port: Substring?) {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return (authority, nil) }
            let host = authority[...close]
            let after = authority[authority.index(after: close)...]
            guard !after.isEmpty else { return (host, nil) }
            // Anything after `]` other than `:port` makes the port check fail.
            return (host, after.hasPrefix(":") ? after.dropFirst() : after)
        }
        guard let colon = authority.firstIndex(of: ":") else { return (authority, nil) }
        return (authority[..<colon], authority[authority.index(after: colon)...])
    }

    private static func problem(withHost host: Substring) -> String? {
        if host.isEmpty { return "no host" }
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), host.count > 2 else { return "the host \(host.prefix(64)) is not an IPv6 address" }
            let inner = String(host.dropFirst().dropLast())
            if inner.contains(literal: "%") { return "the IPv6 address \(inner.prefix(64)) names a zone" }
            return isIPAddress(inner, family: AF_INET6) ? nil : "the host \(host.prefix(64)) is not an IPv6 address"
        }
        var name = host
        if name.hasSuffix(".") { name = name.dropLast() }
        if name.utf8.count > maximumHostLength { return "the host is longer than \(maximumHostLength) bytes" }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        for label in labels {
            guard (1...63).contains(label.utf8.count), label.utf8.allSatisfy(isHostByte) else {
                return "the host \(printable(String(host.prefix(64)))) is not a valid host name"
            }
        }
        // All-digit labels are an address, and only the dotted IPv4 form is taken as one.
        if labels.allSatisfy({ $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }), !isIPAddress(String(name), family: AF_INET) {
            return "the host \(name.prefix(64)) is not a dotted IPv4 address"
        }
        return nil
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == 0x2D || byte == 0x5F
    }

    private static func isIPAddress(_ text: String, family: Int32) -> Bool {
        var storage = (UInt64(0), UInt64(0))
        return withUnsafeMutableBytes(of: &storage) { inet_pton(family, text, $0.baseAddress) == 1 }
    }
}

import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Signs HTTP requests with AWS Signature Version 4 (`AWS4-HMAC-SHA256` in the
/// `Authorization` header), as S3 and every S3-compatible store accept them.
///
/// The steps are AWS's: a canonical request (method, URI-encoded path, sorted query, the
/// signed header fields lower-cased and trimmed, the payload hash), a string to sign (the
/// algorithm, the time, the scope `date/region/service/aws4_request`, the SHA-256 of the
/// canonical request), a signing key derived by HMAC-SHA256 from the secret, the date, the
/// region and the service, and the signature: HMAC-SHA256 of the string to sign with that key.
///
/// ```swift
/// let signer = AWSSignatureV4(credentials: credentials, region: "eu-west-1")
/// let headers = signer.signedHeaders(method: "GET", url: url, headers: [:], date: Date())
/// ```
///
/// Paths are encoded the way S3 wants them (each byte outside `A-Z a-z 0-9 - . _ ~` and `/`
/// as `%XX`, once); the caller sends the request to exactly ``canonicalURI(forKeyPath:)``'s
/// form of the path. The secret never appears in a header, a description or a log.
public struct AWSSignatureV4: Sendable {
    /// The credentials that sign.
    public let credentials: S3Credentials
    /// The region of the scope, such as `us-east-1`.
    public let region: String
    /// The service of the scope (default `s3`).
    public let service: String

    /// Creates a signer for `region` and `service` (default `s3`).
    public init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The SHA-256 of an empty payload, hex.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    /// The payload hash of a request whose body is not signed (S3 accepts it over any transport).
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"

    /// The header fields to add to a request so that it is signed: `x-amz-date`,
    /// `x-amz-content-sha256`, `x-amz-security-token` (with a session token) and `Authorization`.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, such as `GET`.
    ///   - url: the URL the request goes to; its path must already be percent-encoded as it
    ///     is sent, and its host (with a port other than the scheme's default) is the `Host`.
    ///   - headers: other header fields to sign, such as `Range` (default none). `Host` is
    ///     taken from here when present (a request sent to one address for another host).
    ///   - payloadHash: the hex SHA-256 of the body, or ``unsignedPayload`` (default).
    ///   - date: the time of signing (default now); AWS refuses a request more than 15 minutes off.
    public func signedHeaders(method: String, url: URL, headers: HTTPHeaderFields = [:],
                              payloadHash: String = unsignedPayload, date: Date = Date()) -> HTTPHeaderFields {
        let time = Self.timestamp(date)
        var signed = headers
        if !signed.contains("Host") { signed["Host"] = Self.hostHeader(url) }
        signed["x-amz-date"] = time
        signed["x-amz-content-sha256"] = payloadHash
        if let token = credentials.sessionToken { signed["x-amz-security-token"] = token }
        let canonical = canonicalRequest(method: method, url: url, headers: signed, payloadHash: payloadHash)
        let scope = self.scope(time)
        let toSign = stringToSign(canonicalRequest: canonical.text, time: time)
        let signature = self.signature(stringToSign: toSign, time: time)
        var added = HTTPHeaderFields()
        added["x-amz-date"] = time
        added["x-amz-content-sha256"] = payloadHash
        if let token = credentials.sessionToken { added["x-amz-security-token"] = token }
        added["Authorization"] = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), "
            + "SignedHeaders=\(canonical.signedHeaders), Signature=\(signature)"
        return added
    }

    // MARK: The steps, visible for tests and tools

    /// The canonical request and its list of signed header names (`host;x-amz-date;…`).
    /// Every field of `headers` is signed.
    public func canonicalRequest(method: String, url: URL, headers: HTTPHeaderFields,
                                 payloadHash: String) -> (text: String, signedHeaders: String) {
        var fields: [String: [String]] = [:]
        for field in headers {
            fields[field.name.lowercased(), default: []].append(Self.trimmedValue(field.value))
        }
        let names = fields.keys.sorted()
        let canonicalHeaders = names.map { "\($0):\(fields[$0]!.joined(separator: ","))\n" }.joined()
        let signedHeaders = names.joined(separator: ";")
        let path = url.path(percentEncoded: true)
        let text = [method.uppercased(), path.isEmpty ? "/" : path, Self.canonicalQuery(url.query(percentEncoded: true)),
                    canonicalHeaders, signedHeaders, payloadHash].joined(separator: "\n")
        return (text, signedHeaders)
    }

    /// The string to sign for a canonical request made at `time` (`yyyyMMdd'T'HHmmss'Z'`).
    public func stringToSign(canonicalRequest: String, time: String) -> String {
        let hash = lowercaseHex(SHA256.hash(data: Data(canonicalRequest.utf8)))
        return "AWS4-HMAC-SHA256\n\(time)\n\(scope(time))\n\(hash)"
    }

    /// The signature, hex: HMAC-SHA256 of the string to sign with the signing key of `time`'s day.
    public func signature(stringToSign: String, time: String) -> String {
        lowercaseHex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: signingKey(day: String(time.prefix(8)))))
    }

    /// The credential scope of a request made at `time`: `yyyyMMdd/region/service/aws4_request`.
    public func scope(_ time: String) -> String {
        "\(time.prefix(8))/\(region)/\(service)/aws4_request"
    }

    /// The signing key of a day (`yyyyMMdd`): HMAC-SHA256 chained over the day, the region,
    /// the service and `aws4_request`, starting from `AWS4` + the secret.
    func signingKey(day: String) -> SymmetricKey {
        var key = SymmetricKey(data: Data(("AWS4" + credentials.secretAccessKey).utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        return key
    }

    /// The path of an object key as S3 signs and receives it: each byte of the UTF-8 key
    /// outside `A-Z a-z 0-9 - . _ ~` percent-encoded (upper-case hex), `/` kept.
    public static func canonicalURI(forKeyPath path: String) -> String {
        uriEncode(path, keepSlash: true)
    }

    /// RFC 3986 encoding as SigV4 defines it: unreserved characters kept, everything else `%XX`.
    static func uriEncode(_ text: String, keepSlash: Bool) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            case UInt8(ascii: "/") where keepSlash:
                out.append(byte)
            default:
                out.append(UInt8(ascii: "%"))
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The query with its parameters decoded, encoded again the SigV4 way and sorted by name
    /// then value; a parameter without `=` gets an empty value.
    static func canonicalQuery(_ query: String?) -> String {
        guard let query, !query.isEmpty else { return "" }
        let pairs: [(String, String)] = query.split(separator: "&", omittingEmptySubsequences: true).map { item in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in String(text).percentDecoded ?? String(text) }
            return (uriEncode(decode(parts[0]), keepSlash: false), parts.count > 1 ? uriEncode(decode(parts[1]), keepSlash: false) : "")
        }
        return pairs.sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// A header value with leading and trailing spaces removed and inner runs of spaces made one.
    static func trimmedValue(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }

    /// `host[:port]` as an HTTP client sends it (no port when it is the scheme's default).
    static func hostHeader(_ url: URL) -> String {
        let host = url.host(percentEncoded: false) ?? ""
        let shown = host.contains(literal: ":") ? "[\(host)]" : host
        guard let port = url.port else { return shown }
        let scheme = url.scheme?.lowercased()
        if (scheme == "http" && port == 80) || (scheme == "https" && port == 443) { return shown }
        return "\(shown):\(port)"
    }

    /// `yyyyMMdd'T'HHmmss'Z'` in UTC, by arithmetic (``HTTPDate/utcComponents(of:)``): a
    /// `TimeZone` by identifier needs ICU's data, which the shipped binary does not link.
    static func timestamp(_ date: Date) -> String {
        let c = HTTPDate.utcComponents(of: date)
        let two = HTTPDate.twoDigits
        return "\(c.year)\(two(c.month))\(two(c.day))T\(two(c.hour))\(two(c.minute))\(two(c.second))Z"
    }
}

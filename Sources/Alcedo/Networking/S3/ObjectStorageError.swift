#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An error answer of an S3-compatible store: the HTTP status and the `<Code>` and
/// `<Message>` of its XML body (`NoSuchKey`, `AccessDenied`, `SlowDown`…).
///
/// Reported as ``ResponseErrorReason/URLSessionError(error:)`` with this error
/// (``ResponseErrorReason/objectStorageError`` reads it). ``category`` groups the codes
/// by what a caller does about them; throttling and server errors are retriable
/// (``AlcedoError/isRetriable``), so a ``RetryStrategy`` retries them.
public struct ObjectStorageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What a caller does about an error.
    public enum Category: Sendable, Hashable {
        /// The bucket or the object does not exist (`NoSuchKey`, `NoSuchBucket`, `NoSuchVersion`, or a 404).
        case notFound
        /// The store refused the credentials or the access (`AccessDenied`, `SignatureDoesNotMatch`,
        /// `InvalidAccessKeyId`, `InvalidToken`, `ExpiredToken`, or a 403).
        case accessDenied
        /// The store asks to slow down or is briefly unavailable (`SlowDown`, 503, 500
        /// `InternalError`): worth retrying.
        case throttled
        /// Anything else (a redirect to another region, a bad request…).
        case other
    }

    /// The `s3://bucket/key` source asked for.
    public var url: URL
    /// The HTTP status of the answer.
    public var statusCode: Int
    /// The error code of the body, such as `NoSuchKey` (derived from the status when the body has none).
    public var code: String
    /// The store's message, if any.
    public var message: String?
    /// The store's request ID, for its operator's logs, if any.
    public var requestID: String?
    /// How long the store asked to wait (`Retry-After`), if it said.
    public var retryAfter: Duration?

    /// Creates an error from its parts.
    public init(url: URL, statusCode: Int, code: String, message: String? = nil, requestID: String? = nil, retryAfter: Duration? = nil) {
        self.url = url
        self.statusCode = statusCode
        self.code = code
        self.message = message
        self.requestID = requestID
        self.retryAfter = retryAfter
    }

    /// The category of ``code`` (and ``statusCode`` for codes not known).
    public var category: Category {
        switch code {
        case "NoSuchKey", "NoSuchBucket", "NoSuchVersion": return .notFound
        case "AccessDenied", "SignatureDoesNotMatch", "InvalidAccessKeyId", "InvalidToken", "ExpiredToken",
             "AllAccessDisabled", "AccountProblem", "InvalidSecurity", "RequestTimeTooSkewed":
            return .accessDenied
        case "SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout", "Throttling", "TooManyRequests":
            return .throttled
        default:
            switch statusCode {
            case 404: return .notFound
            case 401, 403: return .accessDenied
            case 429, 500, 502, 503, 504: return .throttled
            default: return .other
            }
        }
    }

    public var description: String {
        var text = "\(url.absoluteString): the object store answered \(statusCode) \(code)"
        if let message, !message.isEmpty { text += " (\(message))" }
        if let requestID { text += ", request ID \(requestID)" }
        return text
    }

    /// Reads an error answer: `<Code>`, `<Message>` and `<RequestId>` of the XML body when it
    /// has them, else a code made from the status (`NoSuchKey` for 404, `AccessDenied` for 403,
    /// `SlowDown` for 503, `HTTP<status>` otherwise).
    static func parse(url: URL, statusCode: Int, headers: HTTPHeaderFields, body: Data) -> ObjectStorageError {
        let text = String(decoding: body.prefix(64 * 1024), as: UTF8.self)
        let code = element("Code", in: text) ?? headers["x-amz-error-code"] ?? {
            switch statusCode {
            case 404: return "NoSuchKey"
            case 403: return "AccessDenied"
            case 503: return "SlowDown"
            default: return "HTTP\(statusCode)"
            }
        }()
        let message = element("Message", in: text) ?? headers["x-amz-error-message"]
        let requestID = element("RequestId", in: text) ?? headers["x-amz-request-id"]
        var retryAfter: Duration?
        if let value = HTTPCacheInfo.deltaSeconds(headers["Retry-After"]) { retryAfter = .seconds(value) }
        return ObjectStorageError(url: url, statusCode: statusCode, code: code, message: message, requestID: requestID,
                                  retryAfter: retryAfter)
    }

    /// The text of the first `<name>…</name>` element, XML entities decoded, at most `limit`
    /// characters (default 300).
    static func element(_ name: String, in text: String, limit: Int = 300) -> String? {
        element(name, in: text[...], limit: limit)
    }

    /// ``element(_:in:limit:)`` on a part of a text.
    static func element(_ name: String, in text: Substring, limit: Int = 300) -> String? {
        guard let start = text.range(ofLiteral: "<\(name)>"),
              let end = text[start.upperBound...].range(ofLiteral: "</\(name)>") else { return nil }
        let raw = text[start.upperBound..<end.lowerBound]
        let decoded = raw.replacing(literal: "&lt;", with: "<").replacing(literal: "&gt;", with: ">")
            .replacing(literal: "&quot;", with: "\"").replacing(literal: "&apos;", with: "'")
            .replacing(literal: "&amp;", with: "&")
        let clean = String(decoded.unicodeScalars.filter { $0.value >= 0x20 }.map(Character.init))
        return clean.isEmpty ? nil : String(clean.prefix(limit))
    }
}

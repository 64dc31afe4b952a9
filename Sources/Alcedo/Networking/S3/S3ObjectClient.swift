import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import NIOHTTP1

/// The object-store requests beyond a source's GET, for stores that Alcedo writes (a result
/// store, a source store): GET, PUT and DELETE of one object, ListObjectsV2 and DeleteObjects,
/// each signed with AWS Signature Version 4 as ``S3ImageDataLoader``'s GETs are (PUT and POST
/// bodies signed by their SHA-256).
///
/// ```swift
/// let client = S3ObjectClient(configuration: S3Configuration(endpoint: URL(string: "http://127.0.0.1:9000")!),
///                             credentials: try S3Credentials.resolve())
/// try await client.putObject(bucket: "results", key: "a/b", data: bytes, headers: ["Content-Type": "image/webp"])
/// ```
///
/// An error answer of the store is thrown as ``ObjectStorageError``; a connection that fails
/// as the ``AlcedoError`` of ``HTTPImageLoader``. Bucket allow and deny lists of the
/// configuration are not applied: they guard sources named by URLs, not a store the operator chose.
public final class S3ObjectClient: Sendable {
    /// One object of a listing.
    public struct ListedObject: Sendable, Hashable {
        /// The object's key.
        public var key: String
        /// Its size in bytes.
        public var size: Int
        /// When it was last written, as the store wrote it (ISO 8601).
        public var lastModified: String?
    }

    /// One page of a listing.
    public struct ListPage: Sendable, Hashable {
        /// The objects of the page, in key order.
        public var objects: [ListedObject]
        /// The token of the next page, `nil` on the last one.
        public var continuationToken: String?
    }

    /// An object read: its bytes and the header fields of the answer (`Content-Type`,
    /// `ETag`, `Last-Modified`, `x-amz-meta-*`).
    public struct Object: Sendable {
        /// The object's bytes.
        public var data: Data
        /// The answer's header fields.
        public var headers: HTTPHeaderFields
    }

    /// The store, region and addressing (its credentials are not used: see ``credentials``).
    public let configuration: S3Configuration
    /// The credentials that sign requests; `nil`: requests go unsigned.
    public let credentials: S3Credentials?
    private let signer: AWSSignatureV4?
    private let http: HTTPImageLoader
    /// The most bytes of one object read (default 64 MiB): a larger one is an error.
    public let maximumObjectBytes: Int

    /// Creates a client.
    /// - Parameters:
    ///   - configuration: the store's endpoint, region and addressing.
    ///   - credentials: the credentials that sign (`nil`: unsigned requests).
    ///   - httpConfiguration: connection settings (default: ``HTTPImageLoader/Configuration``'s defaults).
    ///   - maximumObjectBytes: the largest object read (default 64 MiB).
    public init(configuration: S3Configuration, credentials: S3Credentials?,
                httpConfiguration: HTTPImageLoader.Configuration = .init(), maximumObjectBytes: Int = 64 << 20) {
        self.configuration = configuration
        self.credentials = credentials
        signer = credentials.map { AWSSignatureV4(credentials: $0, region: configuration.region) }
        http = HTTPImageLoader(configuration: httpConfiguration)
        self.maximumObjectBytes = maximumObjectBytes
    }

    /// The object under `key`, or `nil` when the store has none (404).
    public func getObject(bucket: String, key: String) async throws -> Object? {
        let url = configuration.objectURL(bucket: bucket, key: key)
        let (status, headers, body) = try await send("GET", url: url, body: nil, limit: maximumObjectBytes)
        if status == 404 { return nil }
        guard (200..<300).contains(status) else { throw error(bucket: bucket, key: key, status: status, headers: headers, body: body) }
        return Object(data: body, headers: headers)
    }

    /// Writes `data` under `key` with `headers` (such as `Content-Type`, `x-amz-meta-*`).
    public func putObject(bucket: String, key: String, data: Data, headers: HTTPHeaderFields = [:]) async throws {
        let url = configuration.objectURL(bucket: bucket, key: key)
        let (status, answer, body) = try await send("PUT", url: url, headers: headers, body: data, limit: 64 * 1024)
        guard (200..<300).contains(status) else { throw error(bucket: bucket, key: key, status: status, headers: answer, body: body) }
    }

    /// Deletes the object under `key`; deleting a missing object is not an error.
    public func deleteObject(bucket: String, key: String) async throws {
        let url = configuration.objectURL(bucket: bucket, key: key)
        let (status, headers, body) = try await send("DELETE", url: url, body: nil, limit: 64 * 1024)
        guard (200..<300).contains(status) || status == 404 else {
            throw error(bucket: bucket, key: key, status: status, headers: headers, body: body)
        }
    }

    /// One page (at most `maxKeys`, default 1000) of the objects whose keys start with `prefix`
    /// (ListObjectsV2).
    public func listObjects(bucket: String, prefix: String, continuationToken: String? = nil, maxKeys: Int = 1000) async throws -> ListPage {
        var query = "list-type=2&max-keys=\(max(1, min(maxKeys, 1000)))&prefix=" + AWSSignatureV4.uriEncode(prefix, keepSlash: false)
        if let continuationToken { query += "&continuation-token=" + AWSSignatureV4.uriEncode(continuationToken, keepSlash: false) }
        let url = bucketURL(bucket, query: query)
        let (status, headers, body) = try await send("GET", url: url, body: nil, limit: 16 << 20)
        guard (200..<300).contains(status) else { throw error(bucket: bucket, key: "", status: status, headers: headers, body: body) }
        return Self.parseListing(String(decoding: body, as: UTF8.self))
    }

    /// Deletes up to 1000 objects in one request (DeleteObjects, quiet mode).
    /// - Returns: the keys the store could not delete.
    @discardableResult
    public func deleteObjects(bucket: String, keys: [String]) async throws -> [String] {
        guard !keys.isEmpty else { return [] }
        precondition(keys.count <= 1000, "DeleteObjects takes at most 1000 keys")
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete><Quiet>true</Quiet>"
        for key in keys { xml += "<Object><Key>" + Self.escapeXML(key) + "</Key></Object>" }
        xml += "</Delete>"
        let data = Data(xml.utf8)
        var headers = HTTPHeaderFields()
        headers["Content-Type"] = "application/xml"
        // S3 wants a checksum of the body of a DeleteObjects.
        headers["Content-MD5"] = Data(Insecure.MD5.hash(data: data)).base64EncodedString()
        let url = bucketURL(bucket, query: "delete=")
        let (status, answer, body) = try await send("POST", url: url, headers: headers, body: data, limit: 16 << 20)
        guard (200..<300).contains(status) else { throw error(bucket: bucket, key: "", status: status, headers: answer, body: body) }
        return Self.elements("Error", in: String(decoding: body, as: UTF8.self)).compactMap { ObjectStorageError.element("Key", in: $0) }
    }

    /// Closes the client's idle connections.
    public func shutdown() async {
        await http.shutdown()
    }

    // MARK: Requests

    /// The bucket's URL (path-style or virtual-host as ``S3Configuration`` decides) with `query`.
    private func bucketURL(_ bucket: String, query: String) -> URL {
        let object = configuration.objectURL(bucket: bucket, key: "")
        var components = URLComponents(url: object, resolvingAgainstBaseURL: false) ?? URLComponents()
        components.percentEncodedQuery = query
        return components.url ?? object
    }

    /// Sends one signed request and reads at most `limit` bytes of the answer.
    private func send(_ method: String, url: URL, headers: HTTPHeaderFields = [:], body: Data?,
                      limit: Int) async throws -> (Int, HTTPHeaderFields, Data) {
        var fields = headers
        if let signer {
            let hash = body.map { lowercaseHex(SHA256.hash(data: $0)) } ?? AWSSignatureV4.emptyPayloadHash
            for field in signer.signedHeaders(method: method, url: url, headers: headers, payloadHash: hash) {
                fields[field.name] = field.value
            }
        }
        let response = try await http.send(method: HTTPMethod(rawValue: method), url: url, headers: fields,
                                           body: body.map { ByteBuffer(bytes: $0) })
        var data = Data()
        for try await chunk in response.body {
            guard data.count + chunk.count <= limit else {
                throw AlcedoError.responseError(reason: .invalidURLResponse(
                    response: .bodyTooLarge(url, limit: limit, received: data.count + chunk.count)))
            }
            data.append(chunk)
        }
        return (response.statusCode, response.headers, data)
    }

    private func error(bucket: String, key: String, status: Int, headers: HTTPHeaderFields, body: Data) -> ObjectStorageError {
        let url = URL(string: "s3://\(bucket)/" + AWSSignatureV4.canonicalURI(forKeyPath: key)) ?? configuration.effectiveEndpoint
        return ObjectStorageError.parse(url: url, statusCode: status, headers: headers, body: body)
    }

    // MARK: XML

    /// Reads a ListObjectsV2 answer: each `<Contents>`' key, size and date, and the next token.
    static func parseListing(_ xml: String) -> ListPage {
        let objects = elements("Contents", in: xml).compactMap { item -> ListedObject? in
            guard let key = ObjectStorageError.element("Key", in: item, limit: 4096) else { return nil }
            return ListedObject(key: key, size: ObjectStorageError.element("Size", in: item).flatMap { Int($0) } ?? 0,
                                lastModified: ObjectStorageError.element("LastModified", in: item))
        }
        let truncated = ObjectStorageError.element("IsTruncated", in: xml) == "true"
        let token = truncated ? ObjectStorageError.element("NextContinuationToken", in: xml, limit: 4096) : nil
        return ListPage(objects: objects, continuationToken: token)
    }

    /// The inner text of every `<name>…</name>` element of `xml`, in order.
    static func elements(_ name: String, in xml: String) -> [Substring] {
        var found: [Substring] = []
        var rest = xml[...]
        while let start = rest.range(ofLiteral: "<\(name)>"), let end = rest[start.upperBound...].range(ofLiteral: "</\(name)>") {
            found.append(rest[start.upperBound..<end.lowerBound])
            rest = rest[end.upperBound...]
        }
        return found
    }

    /// `text` with `&`, `<`, `>`, `"` and `'` as XML entities.
    static func escapeXML(_ text: String) -> String {
        text.replacing(literal: "&", with: "&amp;").replacing(literal: "<", with: "&lt;").replacing(literal: ">", with: "&gt;")
            .replacing(literal: "\"", with: "&quot;").replacing(literal: "'", with: "&apos;")
    }
}

import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An ``ObjectStore`` in an S3 bucket (or an S3-compatible store: MinIO, R2, Ceph), under a key
/// prefix. Each entry is one object: its bytes as the body, `Content-Type` from its format,
/// and its metadata in `x-amz-meta-*` fields:
///
/// | field | holds |
/// |---|---|
/// | `x-amz-meta-alcedo-entry` | the entry's metadata (validators, freshness, dates, format) as base64 JSON |
/// | `x-amz-meta-alcedo-expires` | when the entry expires, seconds since 1970 (checked on read) |
/// | `x-amz-meta-source-etag`, `x-amz-meta-source-last-modified` | the source's validators, from which the response's `ETag` and `Last-Modified` are made |
///
/// An object without `x-amz-meta-alcedo-entry` was not written by Alcedo: it reads as a miss.
public struct S3ObjectStore: ObjectStore {
    /// The bucket.
    public let bucket: String
    /// The key prefix (empty, or ending with `/`).
    public let prefix: String
    /// The client that signs and sends the requests.
    public let client: S3ObjectClient

    /// Creates a store on `bucket` under `prefix` through `client`.
    public init(bucket: String, prefix: String, client: S3ObjectClient) {
        self.bucket = bucket
        self.prefix = prefix
        self.client = client
    }

    public var location: ObjectStoreLocation { .s3(bucket: bucket, prefix: prefix) }

    public func read(_ name: String) async throws -> SharedCacheEntry? {
        guard let object = try await client.getObject(bucket: bucket, key: prefix + name),
              let encoded = object.headers["x-amz-meta-alcedo-entry"],
              let json = Data(base64Encoded: encoded.trimmingSpaces()),
              let metadata = try? JSONDecoder().decode(SharedCacheEntry.Metadata.self, from: json) else { return nil }
        return SharedCacheEntry(data: object.data, metadata: metadata)
    }

    public func write(_ entry: SharedCacheEntry, as name: String) async throws {
        // The cache key can be longer than S3's 2 KB of metadata: the object's name is its hash.
        var metadata = entry.metadata
        metadata.key = ""
        var headers = HTTPHeaderFields()
        headers["Content-Type"] = entry.metadata.format == .unknown ? "application/octet-stream" : entry.metadata.format.mimeType
        headers["x-amz-meta-alcedo-entry"] = try JSONEncoder().encode(metadata).base64EncodedString()
        headers["x-amz-meta-alcedo-expires"] = String(Int(entry.metadata.expirationDate.timeIntervalSince1970.rounded(.down)))
        if let etag = entry.metadata.httpCacheInfo?.etag.map(Self.headerSafe) { headers["x-amz-meta-source-etag"] = etag }
        if let date = entry.metadata.httpCacheInfo?.lastModified.map(Self.headerSafe) { headers["x-amz-meta-source-last-modified"] = date }
        try await client.putObject(bucket: bucket, key: prefix + name, data: entry.data, headers: headers)
    }

    public func list(prefix namePrefix: String, limit: Int?) async throws -> [ObjectStoreListing] {
        var found: [ObjectStoreListing] = []
        var token: String?
        repeat {
            let page = try await client.listObjects(bucket: bucket, prefix: prefix + namePrefix, continuationToken: token)
            for object in page.objects where object.key.hasPrefix(prefix) {
                found.append(ObjectStoreListing(name: String(object.key.dropFirst(prefix.count)), size: object.size,
                                                lastModified: object.lastModified))
                if let limit, found.count >= limit { return found }
            }
            token = page.continuationToken
        } while token != nil
        return found
    }

    public func delete(_ names: [String]) async throws -> Int {
        var deleted = 0
        var start = 0
        while start < names.count {
            let batch = Array(names[start..<min(start + 1000, names.count)])
            let failed = try await client.deleteObjects(bucket: bucket, keys: batch.map { prefix + $0 })
            deleted += batch.count - failed.count
            start += batch.count
        }
        return deleted
    }

    public func shutdown() async {
        await client.shutdown()
    }

    /// `value` with only printable ASCII kept (S3 metadata values are sent as header fields).
    static func headerSafe(_ value: String) -> String {
        String(value.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }.map(Character.init))
    }
}

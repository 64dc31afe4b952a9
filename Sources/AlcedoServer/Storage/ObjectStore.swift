import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A permanent store of cache entries by name: an S3 bucket (``S3ObjectStore``) or a folder
/// (``FolderObjectStore``), behind the server's result store and source store
/// (``ObjectStoreTier``). Names are relative to the store's root (an S3 prefix or the folder),
/// made of `/`-separated parts such as `results/3f/3f9a…`; the entry's metadata (content
/// type, validators, expiry) travels with its bytes.
public protocol ObjectStore: Sendable {
    /// Where the store is, for logs and `--print-config` (never a credential).
    var location: ObjectStoreLocation { get }

    /// The entry stored as `name`, or `nil` when there is none or it is not one this store wrote.
    func read(_ name: String) async throws -> SharedCacheEntry?

    /// Stores `entry` as `name`, replacing what was there; a reader never sees half an entry.
    func write(_ entry: SharedCacheEntry, as name: String) async throws

    /// The entries whose names start with `prefix`, in name order, at most `limit` (`nil`: all).
    func list(prefix: String, limit: Int?) async throws -> [ObjectStoreListing]

    /// Deletes the entries `names` (missing ones are skipped).
    /// - Returns: how many were deleted.
    func delete(_ names: [String]) async throws -> Int

    /// Releases connections (default: nothing to release).
    func shutdown() async
}

extension ObjectStore {
    public func shutdown() async {}
}

/// One entry of a store's listing.
public struct ObjectStoreListing: Sendable, Hashable, Codable {
    /// The entry's name, relative to the store's root.
    public var name: String
    /// Its size in bytes (for a folder, the file's, header included).
    public var size: Int
    /// When it was written, as the store reports it (ISO 8601 for S3, seconds since 1970 for a folder).
    public var lastModified: String?

    /// Creates a listing entry.
    public init(name: String, size: Int, lastModified: String?) {
        self.name = name
        self.size = size
        self.lastModified = lastModified
    }
}

/// Where a store is: `s3://BUCKET/PREFIX` or `local:///PATH`, as `--result-storage` and
/// `--source-storage` take it.
public enum ObjectStoreLocation: Sendable, Hashable, CustomStringConvertible {
    /// A bucket and a key prefix (empty, or ending with `/`).
    case s3(bucket: String, prefix: String)
    /// A folder on this machine.
    case folder(URL)

    /// Reads `s3://BUCKET[/PREFIX]` or `local:///ABSOLUTE/PATH`.
    /// - Throws: ``ObjectStoreError/invalidLocation(_:reason:)`` for anything else.
    public init(parsing text: String) throws(ObjectStoreError) {
        if text.hasPrefix("s3://") {
            let rest = text.dropFirst(5)
            let parts = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            let bucket = parts.first.map(String.init) ?? ""
            guard !bucket.isEmpty, bucket.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 }) else {
                throw .invalidLocation(text, reason: "no bucket name after s3://")
            }
            var prefix = parts.count > 1 ? String(parts[1]) : ""
            while prefix.hasPrefix("/") { prefix.removeFirst() }
            if !prefix.isEmpty, !prefix.hasSuffix("/") { prefix += "/" }
            self = .s3(bucket: bucket, prefix: prefix)
        } else if text.hasPrefix("local://") {
            let path = String(text.dropFirst(8))
            guard path.hasPrefix("/"), path.count > 1 else {
                throw .invalidLocation(text, reason: "a folder is named by an absolute path: local:///var/cache/alcedo-results")
            }
            guard !path.split(separator: "/").contains("..") else { throw .invalidLocation(text, reason: "the path has a .. part") }
            self = .folder(URL(fileURLWithPath: path, isDirectory: true))
        } else {
            throw .invalidLocation(text, reason: "expected s3://BUCKET/PREFIX or local:///PATH")
        }
    }

    public var description: String {
        switch self {
        case .s3(let bucket, let prefix): return "s3://\(bucket)/\(prefix)"
        case .folder(let url): return "local://\(url.path)"
        }
    }
}

/// Why a store could not be used or answered with an error.
public enum ObjectStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The location text is not `s3://BUCKET/PREFIX` or `local:///PATH`.
    case invalidLocation(String, reason: String)
    /// A folder store's file could not be read, written or removed.
    case fileSystem(path: String, message: String)
    /// The store did not answer within the tier's bound.
    case timedOut(operation: String, limit: Duration)
    /// The tier's circuit breaker is open: the store is skipped for now.
    case breakerOpen

    public var description: String {
        switch self {
        case .invalidLocation(let text, let reason): return "the store location \"\(text)\" is not usable: \(reason)"
        case .fileSystem(let path, let message): return "the store file \(path): \(message)"
        case .timedOut(let operation, let limit): return "the store's \(operation) took longer than \(limit)"
        case .breakerOpen: return "the store is skipped after repeated failures (circuit breaker open)"
        }
    }
}

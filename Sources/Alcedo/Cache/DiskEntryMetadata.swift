#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the disk cache keeps with one entry, read from the entry's header.
public struct DiskEntryMetadata: Sendable, Hashable {
    /// The key the entry was stored under.
    public let key: String
    /// The SHA-256 of the key in hex: the entry's file name (without extension).
    public let hash: String
    /// The size of the stored bytes (the original data, without the header).
    public let dataSize: Int
    /// The size of the file: header and data.
    public let fileSize: Int
    /// When the entry was stored.
    public let creationDate: Date
    /// When the entry was last read or stored; the least recently accessed entries are
    /// removed first when the folder is over its size limit.
    public let lastAccessDate: Date
    /// When the entry expires (`Date.distantFuture` for `.never`).
    public let expirationDate: Date
    /// The HTTP validators and freshness of a downloaded entry, or `nil` when none were stored.
    public let httpCacheInfo: HTTPCacheInfo?

    /// Creates metadata from its parts (the disk storage makes these; tests may too).
    public init(key: String, hash: String, dataSize: Int, fileSize: Int, creationDate: Date,
                lastAccessDate: Date, expirationDate: Date, httpCacheInfo: HTTPCacheInfo?) {
        self.key = key
        self.hash = hash
        self.dataSize = dataSize
        self.fileSize = fileSize
        self.creationDate = creationDate
        self.lastAccessDate = lastAccessDate
        self.expirationDate = expirationDate
        self.httpCacheInfo = httpCacheInfo
    }

    /// `true` when the entry has expired at `date`.
    public func isExpired(at date: Date) -> Bool { expirationDate <= date }
}

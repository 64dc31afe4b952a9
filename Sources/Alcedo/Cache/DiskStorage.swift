#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The disk cache: one file per entry in a folder, written atomically, with its metadata in a
/// small header, a hard size limit enforced least-recently-used first, and expiration.
/// ``Backend`` is the storage, ``Config`` its settings.
///
/// ## Files
/// An entry's file is named by the SHA-256 of its key in hex (swift-crypto), plus
/// ``Config/pathExtension`` when set: no key can name a path outside the folder. Files are
/// written to a temporary file in the same folder (`.alcedo-tmp-…`) and renamed over the entry, so
/// a crash or a kill during a write never leaves a partial entry under the entry's name, and
/// two processes writing the same folder each replace whole files. Temporary files left by a
/// killed writer are removed by the next clean-up once older than
/// ``Config/temporaryFileLifetime``. Writes are not `fsync`ed: after a power loss an entry may
/// be missing or truncated, and a truncated file fails the header check and is removed
/// instead of served.
///
/// ## A folder shared with other programs
/// The folder may hold files Alcedo did not write; they are never read as entries, written or
/// removed. An entry is a regular file named like one whose first bytes are the entry magic
/// (`ALCEDOC1`); a temporary file is a regular file whose name starts with `.alcedo-tmp-`.
/// Anything else (another program's file named with 64 hex digits, a symbolic link, a FIFO, a
/// folder, a device) is *foreign*: a lookup of its name is a miss, scans and
/// ``Backend/removeAll()`` skip it. Entries are opened with `O_NOFOLLOW | O_NONBLOCK` and
/// checked with `fstat` to be regular files, so a link or a FIFO planted under an entry's name
/// neither redirects nor blocks a reader, and the access time is written through the
/// descriptor that was read and verified, never by reopening the name.
///
/// ## Metadata: a header in the file
/// Each file starts with a header that holds the expiration date, the last access time, the
/// original byte size, the key, the creation date and the entry's ``HTTPCacheInfo``
/// (ETag, Last-Modified, max-age / Expires, Content-Type) — the layout is in
/// `DiskEntryHeader.swift`. The alternatives were rejected:
/// - *file dates* (Kingfisher keeps the last access in the creation date, which Linux
///   filesystems do not let a program set) cannot hold validators at all;
/// - *extended attributes* are missing or limited on tmpfs before Linux 6.6, some overlay and
///   network filesystems, and are dropped by many copy and backup tools;
/// - *an index file* is a second file that must be kept consistent with the entries across
///   crashes and between processes, which needs locking or a journal.
///
/// A header is written with the data in the same atomic rename, so data and metadata can never
/// disagree; it survives restarts, copies and every filesystem. The last access and the
/// expiration sit at fixed offsets and are updated in place by one small `pwrite`, at most once
/// per ``Config/accessTimeGranularity`` (a minute) per entry, as `relatime` does for atime: the
/// least-recently-used order is kept on disk, shared by every process and restart, exact to the
/// minute (and exact in the memory of the process that made the accesses).
/// The key and HTTP metadata sit in two checksummed slots: an update (a `304 Not Modified`
/// refreshing freshness, through ``Backend/updateMetadata(forKey:httpCacheInfo:expiration:)``)
/// writes the slot not in use, under an advisory `flock`, and never rewrites the data; a torn
/// update leaves the previous slot valid. Only an update that outgrows the slot rewrites the
/// file, atomically.
///
/// ## Limits
/// After any store that takes the folder over ``Config/sizeLimit``, the least recently
/// accessed entries are removed until the total is at most ``Config/lowWaterMarkRatio`` of
/// the limit (the entry just stored is kept). The total counts whole files, header included.
/// No app life-cycle event is needed: the limit holds when `store` returns.
///
/// ## Lookups
/// The storage keeps an index of its entries in memory, loaded by one scan of the folder on
/// first use: a miss is answered without any filesystem call. Every clean-up and every trim
/// rescans the folder, so entries written by other processes are counted and found from then on.
public enum DiskStorage {
    /// The folder that holds the caches of this user: `$XDG_CACHE_HOME/alcedo` when
    /// `XDG_CACHE_HOME` is set to an absolute path, else `~/.cache/alcedo` (the temporary
    /// directory's `alcedo` folder when there is no home).
    public static var defaultDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("alcedo", isDirectory: true)
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return URL(fileURLWithPath: home, isDirectory: true)
                .appendingPathComponent(".cache", isDirectory: true)
                .appendingPathComponent("alcedo", isDirectory: true)
        }
        return FileManager.default.temporaryDirectory.appendingPathComponent("alcedo", isDirectory: true)
    }

    /// The settings of a ``Backend``.
    public struct Config: Sendable {
        /// The cache's name, the last component of its folder under ``DiskStorage/defaultDirectory``.
        public let name: String
        /// The folder holding the entries. Default `directory/name`, where `directory` is
        /// ``DiskStorage/defaultDirectory``. Fixed when the backend is created.
        public let folderURL: URL
        /// The most bytes the entry files may take together (headers included). Default 0:
        /// no limit. An entry larger than the limit by itself is not stored.
        public var sizeLimit: Int
        /// After a store takes the folder over ``sizeLimit``, least recently used entries are
        /// removed until the total is at most this fraction of the limit. Default 0.5.
        public var lowWaterMarkRatio: Double
        /// The expiration of an entry stored without its own. Default `.days(7)`.
        public var expiration: StorageExpiration
        /// An extension added to every file name (letters and digits only, at most 16;
        /// anything else is dropped). Default `nil`. Every process sharing a folder must use
        /// the same one: entries with another extension are removed as stale by clean-ups.
        /// Settable, as in Kingfisher: a backend uses the new extension from then on, and the
        /// entries stored under the previous one are no longer found.
        public var pathExtension: String? {
            didSet {
                let cleaned = Self.cleanedExtension(pathExtension)
                if cleaned != pathExtension { pathExtension = cleaned }
            }
        }
        /// How often, at most, a read writes the entry's last access (and extended expiration)
        /// to its file, in seconds. Default 60. The in-memory order is always exact; the order
        /// on disk, which restarts and other processes see, is exact to this granularity (a
        /// tenth of the entry's cache time when that is shorter). 0 writes on every read.
        public var accessTimeGranularity: TimeInterval
        /// How old a temporary file must be before a clean-up takes it for the remains of an
        /// interrupted write and removes it, in seconds. Default 600.
        public var temporaryFileLifetime: TimeInterval
        /// The clock used for expiration and access times. Default `Date()`; tests inject their own.
        public var now: @Sendable () -> Date

        /// A configuration for the cache `name` in `directory` (default
        /// ``DiskStorage/defaultDirectory``). Characters other than letters, digits, `.`, `-`
        /// and `_` in `name` become `_`, so the name is always one folder component.
        public init(
            name: String,
            directory: URL? = nil,
            sizeLimit: Int = 0,
            lowWaterMarkRatio: Double = 0.5,
            expiration: StorageExpiration = .days(7),
            pathExtension: String? = nil,
            accessTimeGranularity: TimeInterval = 60,
            temporaryFileLifetime: TimeInterval = 600,
            now: @escaping @Sendable () -> Date = { Date() }
        ) {
            let component = Self.folderComponent(name)
            self.init(folderURL: (directory ?? DiskStorage.defaultDirectory).appendingPathComponent(component, isDirectory: true),
                      name: component, sizeLimit: sizeLimit, lowWaterMarkRatio: lowWaterMarkRatio,
                      expiration: expiration, pathExtension: pathExtension, accessTimeGranularity: accessTimeGranularity,
                      temporaryFileLifetime: temporaryFileLifetime, now: now)
        }

        /// A configuration for a cache kept exactly in `folderURL`.
        public init(
            folderURL: URL,
            name: String? = nil,
            sizeLimit: Int = 0,
            lowWaterMarkRatio: Double = 0.5,
            expiration: StorageExpiration = .days(7),
            pathExtension: String? = nil,
            accessTimeGranularity: TimeInterval = 60,
            temporaryFileLifetime: TimeInterval = 600,
            now: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.folderURL = folderURL.standardizedFileURL
            self.name = name ?? folderURL.lastPathComponent
            self.sizeLimit = sizeLimit
            self.lowWaterMarkRatio = lowWaterMarkRatio
            self.expiration = expiration
            self.pathExtension = Self.cleanedExtension(pathExtension)
            self.accessTimeGranularity = accessTimeGranularity
            self.temporaryFileLifetime = temporaryFileLifetime
            self.now = now
        }

        /// `pathExtension` with anything but ASCII letters and digits dropped, at most 16; `nil` when empty.
        static func cleanedExtension(_ pathExtension: String?) -> String? {
            let cleaned = String((pathExtension ?? "").unicodeScalars
                .filter(\.isASCIIAlphanumeric).prefix(16).map(Character.init))
            return cleaned.isEmpty ? nil : cleaned
        }

        /// The size the folder is brought down to when it goes over the limit.
        var lowWaterMark: Int {
            let ratio = lowWaterMarkRatio.isFinite ? min(max(lowWaterMarkRatio, 0), 1) : 0.5
            return Int(Double(sizeLimit) * ratio)
        }

        static func folderComponent(_ name: String) -> String {
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")
            let cleaned = String(name.map { allowed.contains($0) ? $0 : "_" }.prefix(200))
            if cleaned.isEmpty || cleaned.allSatisfy({ $0 == "." }) { return "_" + cleaned }
            return cleaned
        }
    }

    /// What a scan of the folder found.
    public struct Statistics: Sendable, Hashable, Codable {
        /// The folder path.
        public var path: String
        /// The number of entries.
        public var entryCount: Int
        /// The bytes the entry files take, headers included.
        public var totalSize: Int
        /// How many entries have expired but not been removed yet.
        public var expiredCount: Int
        /// ``Config/sizeLimit`` (0: none).
        public var sizeLimit: Int
        /// The total a trim brings the folder down to.
        public var lowWaterMark: Int
        /// The default expiration of new entries, as text.
        public var expiration: String
    }
}

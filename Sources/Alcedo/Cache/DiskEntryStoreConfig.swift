#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DiskStorage.EntryStore {
    /// The settings of an ``EntryStore``.
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
        /// anything else is dropped). Default `nil`. Every process sharing a folder should use
        /// the same one: an entry stored with another extension is found only by a lookup that
        /// forces that extension (`forcedExtension:`), and otherwise stays until it expires or
        /// is evicted. Settable, as in Kingfisher: a backend uses the new extension from then on,
        /// and the entries stored under the previous one are no longer found without it.
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
}

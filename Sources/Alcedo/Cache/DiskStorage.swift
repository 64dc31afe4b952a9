#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Alcedo's disk caches: two stores of one file per entry in a folder.
///
/// - ``EntryStore`` is the image cache's disk tier (``ImageCache/diskStorage``) and the
///   server's: bytes with their metadata (expiration, last access, key, HTTP validators) in a
///   header of each file, written atomically, with a hard size limit that holds after every
///   store. Its settings are ``EntryStore/Config``.
/// - ``Backend`` is Kingfisher's generic storage, `DiskStorage.Backend<T: DataTransformable>`,
///   with its ``Config`` and ``FileMeta``: the file holds the value's bytes alone, the last
///   access and the expiration are the file's access and modification times, and the size
///   limit (payload bytes) is applied by a clean-up, ``Backend/removeSizeExceededValues()``,
///   as in Kingfisher.
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

    /// What a scan of an ``EntryStore``'s folder found.
    public struct Statistics: Sendable, Hashable, Codable {
        /// The folder path.
        public var path: String
        /// The number of entries.
        public var entryCount: Int
        /// The bytes the entry files take, headers included.
        public var totalSize: Int
        /// How many entries have expired but not been removed yet.
        public var expiredCount: Int
        /// ``EntryStore/Config/sizeLimit`` (0: none).
        public var sizeLimit: Int
        /// The total a trim brings the folder down to.
        public var lowWaterMark: Int
        /// The default expiration of new entries, as text.
        public var expiration: String
    }
}

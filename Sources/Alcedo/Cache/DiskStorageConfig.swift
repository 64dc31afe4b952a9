#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DiskStorage {
    /// The settings of a ``Backend`` (Kingfisher's `DiskStorage.Config`).
    ///
    /// The folder is fixed when the backend is created: `cachePathBlock(directory, cacheName)`,
    /// where `directory` is ``directory`` or, when `nil`, the user's caches folder
    /// (`FileManager`'s `.cachesDirectory`: `$XDG_CACHE_HOME` or `~/.cache` on Linux), and
    /// `cacheName` is `com.onevcat.Kingfisher.ImageCache.<name>`, Kingfisher's folder name. The
    /// other settings may be changed on a live backend through ``Backend/config``.
    public struct Config: Sendable {
        /// The most bytes the stored values may take together (the files' sizes: the values'
        /// bytes alone), applied by ``Backend/removeSizeExceededValues()``, which removes the
        /// least recently used values until the total is half the limit. A store never checks
        /// it. `0` means no limit.
        public var sizeLimit: UInt

        /// The expiration of a value stored without its own. Default `.days(7)`: a value not
        /// read for a week expires.
        public var expiration: StorageExpiration = .days(7)

        /// An extension added to every file name (`<name>.<pathExtension>`). Default `nil`: no
        /// extension. An extension holding `/` or a NUL is not used.
        public var pathExtension: String? = nil

        /// Whether a file is named by the SHA-256 of its key in hex rather than by the key itself.
        /// Default `true`, which keeps keys (often URLs) out of file names. With `false`, a key
        /// that is not a plain file name (empty, `.`/`..`, starting with `.`, holding `/` or a
        /// NUL, or longer than 255 bytes) is still hashed, so that no key names a path outside
        /// the folder or a file that the clean-ups would not see.
        public var usesHashedFileName = true

        /// Whether the extension of the key (as ``KingfisherWrapper/ext`` finds it: `gif` in
        /// `https://example.com/a.gif@processor`) is appended to a hashed file name. Default
        /// `false`. ``pathExtension`` and a `forcedExtension` come first.
        public var autoExtAfterHashedFileName = false

        /// Makes the storage's folder from the folder that holds caches and the cache's folder
        /// name. Default: appends the name to the folder. Used once, when the backend is created.
        public var cachePathBlock: (@Sendable (_ directory: URL, _ cacheName: String) -> URL)! = Config.appendingName

        /// The cache's name, part of its folder name (`com.onevcat.Kingfisher.ImageCache.<name>`).
        /// Two storages with the same name and directory share a folder.
        public let name: String

        /// The file manager that creates the folder, tells whether a file exists and lists the
        /// folder (the initial scan and the clean-ups). Default `FileManager.default`. Values are
        /// read and written, and their dates read and set, with POSIX calls.
        public let fileManager: FileManager

        /// The folder that holds the storage's folder. Default `nil`: the user's caches folder.
        public let directory: URL?

        /// A configuration.
        /// - Parameters:
        ///   - name: the cache's name, part of its folder name.
        ///   - sizeLimit: the most bytes the values may take together; `0` is no limit (see
        ///     ``sizeLimit``).
        ///   - fileManager: the file manager of the folder operations (default `.default`).
        ///   - directory: the folder that holds the storage's folder (default `nil`: the user's
        ///     caches folder).
        public init(name: String, sizeLimit: UInt, fileManager: FileManager = .default, directory: URL? = nil) {
            self.name = name
            self.sizeLimit = sizeLimit
            self.fileManager = fileManager
            self.directory = directory
        }

        /// Kingfisher's folder name of the cache.
        var cacheName: String { "com.onevcat.Kingfisher.ImageCache.\(name)" }

        /// The storage's folder, as the configuration names it now.
        var folderURL: URL {
            let base = directory
                ?? fileManager.urls(for: .cachesDirectory, in: .userDomainMask).first
                ?? DiskStorage.defaultDirectory.deletingLastPathComponent()
            return (cachePathBlock ?? Self.appendingName)(base, cacheName)
        }

        private static let appendingName: @Sendable (URL, String) -> URL = { directory, cacheName in
            directory.appendingPathComponent(cacheName, isDirectory: true)
        }
    }
}

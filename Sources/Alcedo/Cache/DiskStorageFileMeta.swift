#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension DiskStorage {
    /// What a ``Backend`` knows of a value's file without reading it (Kingfisher's
    /// `DiskStorage.FileMeta`): its dates, kind and size.
    ///
    /// The backend keeps a value's last access in the file's access time and its estimated
    /// expiration in the file's modification time. (Kingfisher keeps the last access in the
    /// creation date, which Linux file systems do not let a program set.)
    public struct FileMeta: Sendable, Hashable {
        /// The file.
        public let url: URL
        /// When the value was last stored or read with its expiration extended.
        public let lastAccessDate: Date?
        /// When the value expires.
        public let estimatedExpirationDate: Date?
        /// Whether the file is a folder.
        public let isDirectory: Bool
        /// The file's size in bytes: the value's bytes.
        public let fileSize: Int
        /// The file's device and inode, when read from the file: an extension of the
        /// expiration touches only the file it was read from.
        let identity: FileIdentity?

        /// Metadata with the given fields.
        public init(fileURL: URL, lastAccessDate: Date?, estimatedExpirationDate: Date?, isDirectory: Bool,
                    fileSize: Int) {
            self.init(fileURL: fileURL, lastAccessDate: lastAccessDate, estimatedExpirationDate: estimatedExpirationDate,
                      isDirectory: isDirectory, fileSize: fileSize, identity: nil)
        }

        private init(fileURL: URL, lastAccessDate: Date?, estimatedExpirationDate: Date?, isDirectory: Bool,
                     fileSize: Int, identity: FileIdentity?) {
            url = fileURL
            self.lastAccessDate = lastAccessDate
            self.estimatedExpirationDate = estimatedExpirationDate
            self.isDirectory = isDirectory
            self.fileSize = fileSize
            self.identity = identity
        }

        /// The metadata of the file at `fileURL` itself (`lstat`: a symbolic link is not followed).
        /// - Throws: the `errno` of `lstat`.
        init(fileURL: URL) throws(POSIXFile.Errno) {
            var info = stat()
            guard lstat(fileURL.path, &info) == 0 else { throw POSIXFile.Errno(errno) }
            #if canImport(Darwin)
            let accessed = info.st_atimespec, modified = info.st_mtimespec
            #else
            let accessed = info.st_atim, modified = info.st_mtim
            #endif
            self.init(fileURL: fileURL, lastAccessDate: FileTime.date(accessed),
                      estimatedExpirationDate: FileTime.date(modified),
                      isDirectory: (info.st_mode & S_IFMT) == S_IFDIR, fileSize: Int(info.st_size),
                      identity: FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
        }

        /// The order of a least-recently-used clean-up: `true` when `lhs` was accessed more
        /// recently than `rhs` (a missing date counts as `Date.distantPast`).
        public static func lastAccessDate(lhs: FileMeta, rhs: FileMeta) -> Bool {
            (lhs.lastAccessDate ?? .distantPast) > (rhs.lastAccessDate ?? .distantPast)
        }

        /// Whether the value has expired at `referenceDate` (its expiration is not after it); a
        /// file without an expiration date has.
        public func expired(referenceDate: Date) -> Bool {
            estimatedExpirationDate.map { $0 <= referenceDate } ?? true
        }

        /// Moves the expiration as `extendingExpiration` says, counted from now, and records the
        /// access; nothing when the file has been replaced since this metadata was read.
        func extendExpiration(extendingExpiration: ExpirationExtending) {
            guard let lastAccessDate, let estimatedExpirationDate else { return }
            let now = Date()
            let expiration: Date
            switch extendingExpiration {
            case .none:
                return
            case .cacheTime:
                expiration = now.addingTimeInterval(estimatedExpirationDate.timeIntervalSince(lastAccessDate))
            case .expirationTime(let storageExpiration):
                expiration = storageExpiration.estimatedExpiration(since: now)
            }
            var info = stat()
            if let identity {
                guard lstat(url.path, &info) == 0,
                      FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)) == identity else { return }
            }
            _ = FileTime.set(path: url.path, accessed: now, modified: expiration)
        }
    }

    /// A file's device and inode.
    struct FileIdentity: Sendable, Hashable {
        let device: UInt64
        let inode: UInt64
    }
}

/// Conversions between `Date` and the file times of `stat` and `utimensat`.
enum FileTime {
    /// The date of a file time.
    static func date(_ time: timespec) -> Date {
        Date(timeIntervalSince1970: TimeInterval(time.tv_sec) + TimeInterval(time.tv_nsec) / 1e9)
    }

    /// The file time of a date, clamped to what a 64-bit `time_t` holds.
    static func fileTime(_ date: Date) -> timespec {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite else { return timespec(tv_sec: seconds > 0 ? .max : .min, tv_nsec: 0) }
        let whole = seconds.rounded(.down)
        let clamped = min(max(whole, -9.0e18), 9.0e18)
        let nanoseconds = min(max(Int((seconds - whole) * 1e9), 0), 999_999_999)
        return timespec(tv_sec: Int(clamped), tv_nsec: nanoseconds)
    }

    /// Sets the access and modification times of `path` itself (a symbolic link is not
    /// followed); returns the `errno` on failure.
    static func set(path: String, accessed: Date, modified: Date) -> POSIXFile.Errno? {
        var times = [fileTime(accessed), fileTime(modified)]
        return utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW) == 0 ? nil : POSIXFile.Errno(errno)
    }

    /// Sets the access and modification times of the open file `fd`; returns the `errno` on failure.
    static func set(descriptor fd: Int32, accessed: Date, modified: Date) -> POSIXFile.Errno? {
        var times = [fileTime(accessed), fileTime(modified)]
        return futimens(fd, &times) == 0 ? nil : POSIXFile.Errno(errno)
    }
}

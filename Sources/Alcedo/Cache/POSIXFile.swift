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

/// Thin wrappers over the POSIX calls the disk cache makes: one syscall each, `EINTR`
/// retried, failures as `errno` values. Foundation's `FileManager` costs several calls and
/// allocations per operation; the disk cache must stay close to raw file reads and writes.
enum POSIXFile {
    /// `open(2)`; the descriptor or the `errno`.
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) -> Result<Int32, Errno> {
        while true {
            let fd = cOpen(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return .success(fd) }
            if errno != EINTR { return .failure(Errno(errno)) }
        }
    }

    /// `openat(2)` relative to a directory descriptor.
    static func openAt(_ directory: Int32, _ name: UnsafePointer<CChar>, _ flags: Int32) -> Int32 {
        while true {
            let fd = openat(directory, name, flags | O_CLOEXEC)
            if fd >= 0 || errno != EINTR { return fd }
        }
    }

    /// `O_NOATIME` where the system has it: reading a cache file need not dirty its inode
    /// (under `relatime` the first read after a write would). Only the file's owner may use it.
    #if os(Linux)
    static let noAccessTime: Int32 = 0o1000000
    #else
    static let noAccessTime: Int32 = 0
    #endif

    static func close(_ fd: Int32) { _ = cClose(fd) }

    /// Reads `count` bytes at `offset` into `buffer`, looping over short reads. Returns the
    /// bytes read (less than `count` only at the end of the file) or the `errno`.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int) -> Result<Int, Errno> {
        var done = 0
        while done < count {
            let n = pread(fd, buffer + done, count - done, off_t(offset + done))
            if n > 0 {
                done += n
            } else if n == 0 {
                break
            } else if errno != EINTR {
                return .failure(Errno(errno))
            }
        }
        return .success(done)
    }

    /// The first `limit` bytes of the file at `path` (a small system file such as a cgroup
    /// limit or `/proc` entry, whose size `stat` does not tell), or `nil` when it cannot be
    /// opened or read.
    static func readSmallFile(_ path: String, limit: Int = 4096) -> [UInt8]? {
        guard case .success(let fd) = open(path, O_RDONLY) else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: limit)
        let result = bytes.withUnsafeMutableBytes { read(fd, into: $0.baseAddress!, count: limit, at: 0) }
        guard case .success(let count) = result else { return nil }
        bytes.removeLast(limit - count)
        return bytes
    }

    /// Writes all of `bytes` at `offset`.
    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) -> Errno? {
        var done = 0
        while done < bytes.count {
            guard let base = bytes.baseAddress else { return nil }
            let n = pwrite(fd, base + done, bytes.count - done, off_t(offset + done))
            if n > 0 {
                done += n
            } else if n < 0, errno != EINTR {
                return Errno(errno)
            } else if n == 0 {
                return Errno(EIO)
            }
        }
        return nil
    }

    /// Writes `first` then `second` from the current position with as few `writev` calls as
    /// the kernel allows.
    static func write(_ fd: Int32, _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> Errno? {
        var firstDone = 0
        var secondDone = 0
        while firstDone < first.count || secondDone < second.count {
            var vectors = [
                iovec(iov_base: UnsafeMutableRawPointer(mutating: first.baseAddress.map { $0 + firstDone }),
                      iov_len: first.count - firstDone),
                iovec(iov_base: UnsafeMutableRawPointer(mutating: second.baseAddress.map { $0 + secondDone }),
                      iov_len: second.count - secondDone),
            ]
            let n = vectors.withUnsafeMutableBufferPointer { writev(fd, $0.baseAddress, 2) }
            if n < 0 {
                if errno == EINTR { continue }
                return Errno(errno)
            }
            if n == 0 { return Errno(EIO) }
            let intoFirst = min(n, first.count - firstDone)
            firstDone += intoFirst
            secondDone += n - intoFirst
        }
        return nil
    }

    /// `fstat(2)`: the size of an open file.
    static func size(_ fd: Int32) -> Result<Int, Errno> {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(Errno(errno)) }
        return .success(Int(info.st_size))
    }

    /// `rename(2)`: atomically replaces `destination`.
    static func rename(_ source: String, _ destination: String) -> Errno? {
        cRename(source, destination) == 0 ? nil : Errno(errno)
    }

    /// `unlink(2)`; a missing file is not an error.
    static func unlink(_ path: String) -> Errno? {
        if cUnlink(path) == 0 || errno == ENOENT { return nil }
        return Errno(errno)
    }

    /// `true` when `path` names the same file as the open descriptor `fd` (same device and
    /// inode): it has not been replaced or removed since `fd` was opened.
    static func sameFile(_ fd: Int32, _ path: String) -> Bool {
        var open = stat()
        var named = stat()
        guard fstat(fd, &open) == 0, stat(path, &named) == 0 else { return false }
        return open.st_dev == named.st_dev && open.st_ino == named.st_ino
    }

    /// What tells one version of a file from another without reading it: inode, modification
    /// time and size. A rename over the file changes the inode, a write changes the time.
    struct Stamp: Equatable, Sendable {
        let inode: UInt64
        let modified: Int64
        let size: Int

        init(_ info: stat) {
            inode = UInt64(info.st_ino)
            #if canImport(Darwin)
            modified = Int64(info.st_mtimespec.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtimespec.tv_nsec)
            #else
            modified = Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec)
            #endif
            size = Int(info.st_size)
        }
    }

    /// The stamp of an open file.
    static func stamp(_ fd: Int32) -> Stamp? {
        var info = stat()
        return fstat(fd, &info) == 0 ? Stamp(info) : nil
    }

    /// The stamp of `name` in the directory `directory`, without following a symbolic link.
    static func stamp(at directory: Int32, _ name: UnsafePointer<CChar>) -> Stamp? {
        var info = stat()
        return fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0 ? Stamp(info) : nil
    }

    /// The modification time in a `stat` result, in seconds since 1970.
    static func modificationTime(_ info: stat) -> TimeInterval {
        #if canImport(Darwin)
        return TimeInterval(info.st_mtimespec.tv_sec) + TimeInterval(info.st_mtimespec.tv_nsec) / 1e9
        #else
        return TimeInterval(info.st_mtim.tv_sec) + TimeInterval(info.st_mtim.tv_nsec) / 1e9
        #endif
    }

    /// `true` when `path` exists.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// `true` when `path` is a regular file itself (a symbolic link is not followed).
    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// `mkdir -p`: creates `path` and its missing parents.
    static func makeDirectory(_ path: String) -> Errno? {
        if mkdir(path, 0o755) == 0 { return nil }
        switch errno {
        case EEXIST:
            var info = stat()
            if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { return nil }
            return Errno(ENOTDIR)
        case ENOENT:
            let parent = path.deletingLastFilePathComponent
            guard !parent.isEmpty, parent != path else { return Errno(ENOENT) }
            if let error = makeDirectory(parent) { return error }
            if mkdir(path, 0o755) == 0 || errno == EEXIST { return nil }
            return Errno(errno)
        default:
            return Errno(errno)
        }
    }

    /// An `errno` value.
    struct Errno: Error, Equatable {
        let code: Int32
        init(_ code: Int32) { self.code = code }
    }
}

// The module's names shadow the C functions inside `POSIXFile`; these reach the C ones.
private func cOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func cClose(_ fd: Int32) -> Int32 { close(fd) }
private func cRename(_ a: String, _ b: String) -> Int32 { rename(a, b) }
private func cUnlink(_ path: String) -> Int32 { unlink(path) }

/// What a path or an open descriptor names, as `stat(2)` tells it.
package enum FileKind: Sendable, Equatable {
    case regular
    case directory
    case other
    /// `stat` failed with this `errno`.
    case unreadable(errno: Int32)

    /// The kind of the file at `path` (symbolic links followed).
    package init(path: String) {
        var info = stat()
        self = stat(path, &info) == 0 ? Self(mode: info.st_mode) : .unreadable(errno: errno)
    }

    /// The kind of the open descriptor `fd`.
    package init(descriptor fd: Int32) {
        var info = stat()
        self = fstat(fd, &info) == 0 ? Self(mode: info.st_mode) : .unreadable(errno: errno)
    }

    private init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .directory
        default: self = .other
        }
    }
}

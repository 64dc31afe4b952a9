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

/// How the disk cache opens a file named like one of its entries without trusting what is there.
///
/// The folder may be shared with other programs: a name may hold a symbolic link, a FIFO, a
/// folder or a device. Entries are opened with `O_NOFOLLOW | O_NONBLOCK` (a symbolic link fails,
/// a FIFO opens at once instead of waiting for a writer) and the descriptor's `fstat` must say
/// regular file; anything else is *foreign*: skipped, never read, written or removed.
enum DiskEntryOpening {
    /// What opening a name found.
    enum Outcome {
        /// A regular file, open; the caller closes it.
        case opened(Int32)
        /// Nothing under the name.
        case missing
        /// Something that is not a regular file (a symbolic link, FIFO, folder, socket, device).
        case foreign
        /// The open failed for another reason.
        case failed(POSIXFile.Errno)
    }

    /// The flags every entry open adds: no following of a final symbolic link, no blocking on a FIFO.
    static let safetyFlags: Int32 = O_NOFOLLOW | O_NONBLOCK

    /// Opens `path` with `access` (`O_RDONLY` or `O_RDWR`) and the safety flags, without
    /// updating the access time when the system allows it.
    static func open(_ path: String, access: Int32) -> Outcome {
        var result = POSIXFile.open(path, access | safetyFlags | POSIXFile.noAccessTime)
        if case .failure(let error) = result, error.code == EPERM, POSIXFile.noAccessTime != 0 {
            result = POSIXFile.open(path, access | safetyFlags)
        }
        switch result {
        case .success(let fd): return verified(fd)
        case .failure(let error): return outcome(of: error)
        }
    }

    /// Opens `name` in the folder `directory` read-only, as ``open(_:access:)`` does; `noAccessTime`
    /// is cleared when the system refuses it (files of another user).
    static func open(at directory: Int32, _ name: UnsafePointer<CChar>, noAccessTime: inout Int32) -> Outcome {
        var fd = POSIXFile.openAt(directory, name, O_RDONLY | safetyFlags | noAccessTime)
        if fd < 0, errno == EPERM, noAccessTime != 0 {
            noAccessTime = 0
            fd = POSIXFile.openAt(directory, name, O_RDONLY | safetyFlags)
        }
        guard fd >= 0 else { return outcome(of: POSIXFile.Errno(errno)) }
        return verified(fd)
    }

    /// `fd` when it is a regular file, else `.foreign` (and `fd` closed).
    private static func verified(_ fd: Int32) -> Outcome {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let error = POSIXFile.Errno(errno)
            POSIXFile.close(fd)
            return .failed(error)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            POSIXFile.close(fd)
            return .foreign
        }
        return .opened(fd)
    }

    private static func outcome(of error: POSIXFile.Errno) -> Outcome {
        switch error.code {
        case ENOENT: return .missing
        // ELOOP: a symbolic link under O_NOFOLLOW; ENXIO: a socket or a FIFO without reader
        // opened for writing; EISDIR: a folder opened for writing; ENOTDIR: a path through a file.
        case ELOOP, ENXIO, EISDIR, ENOTDIR, EMLINK: return .foreign
        default: return .failed(error)
        }
    }

    /// `true` when the regular file open as `fd` starts with the entry magic: it was written
    /// by Alcedo (whether or not the rest of it is valid).
    static func hasEntryMagic(_ fd: Int32) -> Bool {
        var magic = [UInt8](repeating: 0, count: DiskEntryHeader.magic.count)
        let count = magic.withUnsafeMutableBytes { buffer -> Int in
            guard case .success(let count) = POSIXFile.read(fd, into: buffer.baseAddress!, count: buffer.count, at: 0)
            else { return 0 }
            return count
        }
        return count == magic.count && magic == DiskEntryHeader.magic
    }
}

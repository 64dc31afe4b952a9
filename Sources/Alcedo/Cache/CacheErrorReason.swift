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

/// Why a cache operation failed. File-system cases carry the path and the `errno` the system
/// reported, and their description includes the system's message.
public enum CacheErrorReason: Sendable, CustomStringConvertible {
    /// Nothing is cached for the key (returned where a hit was required, as with `onlyFromCache`);
    /// Kingfisher's name.
    case imageNotExisting(key: String)
    /// A ``CacheSerializer`` gave no bytes for the image (a serializer written in Kingfisher's
    /// shape returned `nil` from `data(with:original:)`); Kingfisher's reason.
    case cannotSerializeImage(image: AlcedoImage?, original: Data?, serializer: any CacheSerializer)
    /// The cache folder (or one of its parents) could not be created.
    case cannotCreateDirectory(path: String, errno: Int32)
    /// The cache folder could not be listed.
    case cannotListDirectory(path: String, errno: Int32)
    /// The disk or the user's quota is full (`ENOSPC`, `EDQUOT`), or the file size limit of the
    /// process was reached (`EFBIG`). Nothing was written; the memory cache keeps working.
    case diskFull(path: String, errno: Int32)
    /// The cache folder is on a read-only file system or not writable by this process
    /// (`EROFS`, `EACCES`, `EPERM`). Nothing was written; the memory cache keeps working.
    case readOnly(path: String, errno: Int32)
    /// Writing an entry failed for another reason.
    case writeFailed(path: String, errno: Int32)
    /// Reading an entry failed (an I/O error, not a missing or corrupt entry).
    case readFailed(path: String, errno: Int32)
    /// Removing an entry failed.
    case removeFailed(path: String, errno: Int32)
    /// The key and HTTP metadata of an entry take more than the header allows (1 MiB): such an
    /// entry cannot be stored.
    case metadataTooLarge(key: String, size: Int, limit: Int)
    /// A file in the cache folder is not a valid entry (bad header, truncated, wrong key).
    /// Readers treat such a file as a miss and remove it; this error is reported only where an
    /// entry was required.
    case corruptEntry(path: String, reason: String)
    /// The shared tier (``SharedCacheStorage``) failed; ``ImageCache`` treats this as a miss.
    case sharedStorageError(reason: SharedStorageErrorReason)

    public var description: String {
        switch self {
        case .imageNotExisting(let key):
            return "nothing cached for key \"\(key)\""
        case .cannotCreateDirectory(let path, let code):
            return "cannot create the cache folder \(path): \(Self.message(code))"
        case .cannotListDirectory(let path, let code):
            return "cannot list the cache folder \(path): \(Self.message(code))"
        case .diskFull(let path, let code):
            return "disk full while writing \(path): \(Self.message(code))"
        case .readOnly(let path, let code):
            return "cannot write \(path), the cache folder is read-only or not writable: \(Self.message(code))"
        case .writeFailed(let path, let code):
            return "cannot write \(path): \(Self.message(code))"
        case .readFailed(let path, let code):
            return "cannot read \(path): \(Self.message(code))"
        case .removeFailed(let path, let code):
            return "cannot remove \(path): \(Self.message(code))"
        case .metadataTooLarge(let key, let size, let limit):
            return "the key and metadata of \"\(key.prefix(80))\" take \(size) bytes, over the limit of \(limit)"
        case .corruptEntry(let path, let reason):
            return "corrupt cache entry \(path): \(reason)"
        case .sharedStorageError(let reason):
            return "shared cache tier: \(reason)"
        case .cannotSerializeImage(let image, let original, let serializer):
            let what = image.map { "the \($0.width)x\($0.height) image" } ?? "the image"
            let bytes = original.map { " (original: \($0.count) bytes)" } ?? ""
            return "\(type(of: serializer)) gave no data for \(what)\(bytes)"
        }
    }

    /// The reason for a failed write of `path` with `errno` `code`: full and read-only disks
    /// get their own cases.
    static func writeError(path: String, errno code: Int32) -> CacheErrorReason {
        switch code {
        case ENOSPC, EDQUOT, EFBIG: return .diskFull(path: path, errno: code)
        case EROFS, EACCES, EPERM: return .readOnly(path: path, errno: code)
        default: return .writeFailed(path: path, errno: code)
        }
    }

    private static func message(_ code: Int32) -> String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }
}

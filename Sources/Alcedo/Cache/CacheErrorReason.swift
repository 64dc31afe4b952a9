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

/// Why a cache operation failed: Kingfisher 8's case set and error codes (3001…3012), so that
/// a `switch` written for Kingfisher compiles unchanged.
///
/// Alcedo's file-system failures carry the path and the `errno` the system reported, in a
/// ``StorageFailure`` inside the Kingfisher case of the operation: reading
/// (``cannotLoadDataFromDisk(url:error:)``), writing (``cannotCreateCacheFile(fileURL:key:data:error:)``),
/// creating the folder (``cannotCreateDirectory(path:error:)``), removing
/// (``cannotSetCacheFileAttribute(filePath:attributes:error:)``). ``storageFailure`` reads it
/// from any of them: `if case .diskFull? = reason.storageFailure`.
public enum CacheErrorReason: Sendable, CustomStringConvertible {
    /// The cache folder could not be listed (3001). Kingfisher's case; Alcedo reports a folder
    /// it cannot list as ``cannotLoadDataFromDisk(url:error:)`` with the `errno`.
    case fileEnumeratorCreationFailed(url: URL)
    /// A listing of the cache folder held something unusable (3002). Kingfisher's case; Alcedo
    /// skips such entries.
    case invalidFileEnumeratorContent(url: URL)
    /// A file's attributes could not be read (3003).
    case invalidURLResource(error: any Error, key: String, url: URL)
    /// Reading from the cache failed (3004): an I/O error, a corrupt entry where one was
    /// required, a folder that cannot be listed, or a shared tier that failed; `error` says which.
    case cannotLoadDataFromDisk(url: URL, error: StorageFailure)
    /// The cache folder (or one of its parents) could not be created (3005).
    case cannotCreateDirectory(path: String, error: StorageFailure)
    /// Nothing is cached for the key (3006; returned where a hit was required, as with
    /// `onlyFromCache`).
    case imageNotExisting(key: String)
    /// An object could not be turned into data (3007). Kingfisher's case; Alcedo never reports it.
    case cannotConvertToData(object: any Sendable, error: any Error)
    /// A ``CacheSerializer`` gave no bytes for the image (3008; a serializer returned `nil`
    /// from `data(with:original:)`).
    case cannotSerializeImage(image: AlcedoImage?, original: Data?, serializer: any CacheSerializer)
    /// Writing an entry failed (3009): a full disk, a read-only folder, metadata over the
    /// header's limit, another write error; `error` says which. `key` and `data` are empty
    /// where the storage did not know them.
    case cannotCreateCacheFile(fileURL: URL, key: String, data: Data, error: StorageFailure)
    /// Changing an entry's file failed (3010): in Alcedo, removing it.
    case cannotSetCacheFileAttribute(filePath: String, attributes: [FileAttributeKey: any Sendable], error: StorageFailure)
    /// The disk storage is not usable (3011). Kingfisher's case; Alcedo reports the failure that
    /// made it so (``cannotCreateDirectory(path:error:)``, ``cannotCreateCacheFile(fileURL:key:data:error:)``).
    case diskStorageIsNotReady(cacheURL: URL)
    /// A Live Photo resource is missing from the disk cache after its load (3012), thrown by
    /// ``ImageManager/retrieveLivePhoto(with:options:)`` (a file whose type is not known and whose
    /// bytes are neither HEIC nor QuickTime is stored without an extension, and not found as one).
    case missingLivePhotoResourceOnDisk(_ resource: LivePhotoResource)

    /// What failed in the file system or the shared tier: the detail of the cache's Kingfisher
    /// cases (see ``CacheErrorReason/storageFailure``).
    public enum StorageFailure: Error, Sendable, CustomStringConvertible {
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
            }
        }

        private static func message(_ code: Int32) -> String {
            "\(String(cString: strerror(code))) (errno \(code))"
        }
    }

    public var description: String {
        switch self {
        case .imageNotExisting(let key):
            return "nothing cached for key \"\(key)\""
        case .cannotLoadDataFromDisk(_, let failure), .cannotCreateDirectory(_, let failure),
             .cannotCreateCacheFile(_, _, _, let failure), .cannotSetCacheFileAttribute(_, _, let failure):
            return failure.description
        case .cannotSerializeImage(let image, let original, let serializer):
            let what = image.map { "the \($0.width)x\($0.height) image" } ?? "the image"
            let bytes = original.map { " (original: \($0.count) bytes)" } ?? ""
            return "\(type(of: serializer)) gave no data for \(what)\(bytes)"
        case .fileEnumeratorCreationFailed(let url):
            return "cannot list the cache folder \(url.path)"
        case .invalidFileEnumeratorContent(let url):
            return "unusable entry in the cache folder \(url.path)"
        case .invalidURLResource(let error, let key, let url):
            return "cannot read the attributes of \(url.path) for key \"\(key)\": \(error)"
        case .cannotConvertToData(let object, let error):
            return "cannot convert \(object) to data: \(error)"
        case .diskStorageIsNotReady(let cacheURL):
            return "the disk cache at \(cacheURL.path) is not ready"
        case .missingLivePhotoResourceOnDisk(let resource):
            return "the Live Photo resource \(resource) is missing from the disk cache"
        }
    }

    /// Kingfisher's error code: 3001…3012.
    public var errorCode: Int {
        switch self {
        case .fileEnumeratorCreationFailed: return 3001
        case .invalidFileEnumeratorContent: return 3002
        case .invalidURLResource: return 3003
        case .cannotLoadDataFromDisk: return 3004
        case .cannotCreateDirectory: return 3005
        case .imageNotExisting: return 3006
        case .cannotConvertToData: return 3007
        case .cannotSerializeImage: return 3008
        case .cannotCreateCacheFile: return 3009
        case .cannotSetCacheFileAttribute: return 3010
        case .diskStorageIsNotReady: return 3011
        case .missingLivePhotoResourceOnDisk: return 3012
        }
    }

    /// The file-system or shared-tier failure this reason carries, else `nil`.
    public var storageFailure: StorageFailure? {
        switch self {
        case .cannotLoadDataFromDisk(_, let failure), .cannotCreateDirectory(_, let failure),
             .cannotCreateCacheFile(_, _, _, let failure), .cannotSetCacheFileAttribute(_, _, let failure):
            return failure
        default:
            return nil
        }
    }

    /// The shared tier's failure this reason carries, else `nil`.
    public var sharedStorageReason: SharedStorageErrorReason? {
        if case .sharedStorageError(let reason)? = storageFailure { return reason }
        return nil
    }

    /// The URL a shared tier's failure is reported under (the tier has no file).
    static let sharedTierURL = URL(filePath: "/", directoryHint: .isDirectory)

    /// ``cannotCreateCacheFile(fileURL:key:data:error:)`` for a write of `path` failed with
    /// `errno` `code`: full and read-only disks get their own failures.
    static func writeError(path: String, errno code: Int32) -> CacheErrorReason {
        switch code {
        case ENOSPC, EDQUOT, EFBIG: return .diskFull(path: path, errno: code)
        case EROFS, EACCES, EPERM: return .readOnly(path: path, errno: code)
        default: return .writeFailed(path: path, errno: code)
        }
    }

    /// ``cannotCreateDirectory(path:error:)`` for `path` with `errno` `code`.
    public static func cannotCreateDirectory(path: String, errno code: Int32) -> CacheErrorReason {
        .cannotCreateDirectory(path: path, error: .cannotCreateDirectory(path: path, errno: code))
    }
    /// ``cannotLoadDataFromDisk(url:error:)`` for a folder that cannot be listed.
    public static func cannotListDirectory(path: String, errno code: Int32) -> CacheErrorReason {
        .cannotLoadDataFromDisk(url: URL(filePath: path), error: .cannotListDirectory(path: path, errno: code))
    }
    /// ``cannotCreateCacheFile(fileURL:key:data:error:)`` for a full disk.
    public static func diskFull(path: String, errno code: Int32) -> CacheErrorReason {
        .cannotCreateCacheFile(fileURL: URL(filePath: path), key: "", data: Data(), error: .diskFull(path: path, errno: code))
    }
    /// ``cannotCreateCacheFile(fileURL:key:data:error:)`` for a read-only folder.
    public static func readOnly(path: String, errno code: Int32) -> CacheErrorReason {
        .cannotCreateCacheFile(fileURL: URL(filePath: path), key: "", data: Data(), error: .readOnly(path: path, errno: code))
    }
    /// ``cannotCreateCacheFile(fileURL:key:data:error:)`` for another write error.
    public static func writeFailed(path: String, errno code: Int32) -> CacheErrorReason {
        .cannotCreateCacheFile(fileURL: URL(filePath: path), key: "", data: Data(), error: .writeFailed(path: path, errno: code))
    }
    /// ``cannotLoadDataFromDisk(url:error:)`` for a read error.
    public static func readFailed(path: String, errno code: Int32) -> CacheErrorReason {
        .cannotLoadDataFromDisk(url: URL(filePath: path), error: .readFailed(path: path, errno: code))
    }
    /// ``cannotSetCacheFileAttribute(filePath:attributes:error:)`` for a removal that failed.
    public static func removeFailed(path: String, errno code: Int32) -> CacheErrorReason {
        .cannotSetCacheFileAttribute(filePath: path, attributes: [:], error: .removeFailed(path: path, errno: code))
    }
    /// ``cannotCreateCacheFile(fileURL:key:data:error:)`` for metadata over the header's limit.
    public static func metadataTooLarge(key: String, size: Int, limit: Int) -> CacheErrorReason {
        .cannotCreateCacheFile(fileURL: sharedTierURL, key: key, data: Data(),
                               error: .metadataTooLarge(key: key, size: size, limit: limit))
    }
    /// ``cannotLoadDataFromDisk(url:error:)`` for a corrupt entry.
    public static func corruptEntry(path: String, reason: String) -> CacheErrorReason {
        .cannotLoadDataFromDisk(url: URL(filePath: path), error: .corruptEntry(path: path, reason: reason))
    }
    /// ``cannotLoadDataFromDisk(url:error:)`` for a failure of the shared tier.
    public static func sharedStorageError(reason: SharedStorageErrorReason) -> CacheErrorReason {
        .cannotLoadDataFromDisk(url: sharedTierURL, error: .sharedStorageError(reason: reason))
    }
}

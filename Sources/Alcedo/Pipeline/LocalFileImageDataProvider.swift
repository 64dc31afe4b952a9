import Dispatch
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

/// An image file on a local disk: `Source.provider(LocalFileImageDataProvider(fileURL: url))`.
/// A `file://` URL given to the manager as a URL or a ``Resource`` is read through this
/// provider only under ``AlcedoOptionsInfoItem/allowLocalFiles``; naming the provider is
/// itself the explicit choice and needs no option.
///
/// The file is read on a dispatch queue (``loadingQueue``), never on the cooperative pool. A
/// missing file, a folder, a file over ``maximumFileSize`` and a read error are each a typed
/// ``AlcedoError/imageSettingError(reason:)``.
public struct LocalFileImageDataProvider: ImageDataProvider {
    /// The file's URL.
    public let fileURL: URL
    /// The key the image is cached under (default: the file URL's ``Resource/cacheKey``,
    /// Kingfisher's local-file key).
    public let cacheKey: String
    /// The largest file read, in bytes (default 64 MiB).
    public let maximumFileSize: Int
    /// Where the file is read. Default `.dispatch(DispatchQueue.global(qos: .userInitiated))`.
    public let loadingQueue: ExecutionQueue

    /// A provider of the file at `fileURL`, cached under `cacheKey` (default `nil`: the URL's
    /// ``Resource/cacheKey``, Kingfisher's stable local-file key), read on `loadingQueue`
    /// (default the global `.userInitiated` queue; `.mainCurrentOrAsync` or `.untouch` read at
    /// once on the calling thread when it may block), refusing files over `maximumFileSize`
    /// bytes (default 64 MiB).
    public init(
        fileURL: URL,
        cacheKey: String? = nil,
        loadingQueue: ExecutionQueue = .dispatch(DispatchQueue.global(qos: .userInitiated)),
        maximumFileSize: Int = 64 << 20
    ) {
        self.fileURL = fileURL
        self.cacheKey = cacheKey ?? fileURL.localFileCacheKey
        self.loadingQueue = loadingQueue
        self.maximumFileSize = maximumFileSize
    }

    public var contentURL: URL? { fileURL }

    public func data() async throws(AlcedoError) -> Data {
        let url = fileURL
        let limit = maximumFileSize
        let queue = loadingQueue
        let result: Result<Data, AlcedoError> = await withCheckedContinuation { continuation in
            queue.execute { continuation.resume(returning: Self.read(url, limit: limit)) }
        }
        return try result.get()
    }

    /// The file's bytes, read on ``loadingQueue`` (Kingfisher's `data` property).
    public var data: Data {
        get async throws { try await data() }
    }

    /// Reads the file on ``loadingQueue`` and calls `handler` there.
    public func data(handler: @escaping @Sendable (Result<Data, any Error>) -> Void) {
        let url = fileURL
        let limit = maximumFileSize
        loadingQueue.execute { handler(Self.read(url, limit: limit).mapError { $0 }) }
    }

    /// Reads the whole file with POSIX calls, checking its kind and size first.
    static func read(_ url: URL, limit: Int) -> Result<Data, AlcedoError> {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            return .failure(.imageSettingError(reason: .localFile(url, code == ENOENT || code == ENOTDIR ? .fileNotFound(url) : .fileReadFailed(url, errno: code))))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(.imageSettingError(reason: .localFile(url, .fileReadFailed(url, errno: errno)))) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return .failure(.imageSettingError(reason: .localFile(url, .notARegularFile(url)))) }
        let size = Int(info.st_size)
        guard size <= limit else { return .failure(.imageSettingError(reason: .localFile(url, .fileTooLarge(url, size: size, limit: limit)))) }
        var data = Data(count: size)
        var offset = 0
        while offset < size {
            let count = data.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return pread(fd, base + offset, size - offset, off_t(offset))
            }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(.imageSettingError(reason: .localFile(url, .fileReadFailed(url, errno: errno))))
            }
            if count == 0 { break }
            offset += count
        }
        // A file that shrank while being read gives what it had.
        if offset < size { data.count = offset }
        return .success(data)
    }
}

import Crypto
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads `local:///path` sources from inside one folder, the root, and nowhere else: the
/// rooted, safe access to a mounted volume that an image server needs.
///
/// ```swift
/// let local = LocalFolderImageDataLoader(root: URL(fileURLWithPath: "/srv/images"))
/// let downloader = ImageDownloader(name: "local", loader: CompositeImageDataLoader([HTTPImageLoader(), local]))
/// let result = try await ImageManager(downloader: downloader).retrieveImage(with: URL(string: "local:///logos/a.png")!)
/// ```
///
/// The path of a URL is resolved inside the root only (see ``resolve(_:)``): a `..` segment,
/// also written `%2e%2e`, an encoded `/` (`%2F`) or a NUL is refused with
/// ``RequestErrorReason/sourceNotAllowed(_:reason:)``, and so is a symbolic link whose
/// target leaves the root (links that stay inside are followed). Only regular files are
/// read: a folder, a FIFO, a socket or a device answers 404 at once, without being opened
/// (a FIFO is never waited on). A missing file answers 404.
///
/// Answers are HTTP's: `Content-Length`, `Last-Modified` (the file's modification time), an
/// `ETag` made of the size and the modification time in nanoseconds, and
/// `Cache-Control: no-cache`, so a cached entry is checked with a `stat` each time it is used
/// under ``AlcedoOptionsInfoItem/respectHTTPFreshness`` and a 304 keeps it while the file is
/// unchanged. The downloader's byte limit applies before any byte is read (by the announced
/// length), and its time limit as for HTTP. Files are read on a dispatch queue, never on the
/// cooperative pool.
///
/// ``LocalFileImageDataProvider`` and ``AlcedoOptionsInfoItem/allowLocalFiles`` keep their
/// meaning for `file://` URLs; this loader serves only `local://`.
public final class LocalFolderImageDataLoader: ImageDataLoading {
    /// The folder sources are read from, as given.
    public let root: URL
    /// How many bytes are read at a time (default 256 KiB).
    public let chunkSize: Int

    private static let queue = DispatchQueue(label: "alcedo.local-folder-loader", qos: .userInitiated, attributes: .concurrent)

    /// A loader of `local:///path` inside `root`; files are streamed `chunkSize` bytes at a time
    /// (default 256 KiB).
    public init(root: URL, chunkSize: Int = 256 * 1024) {
        self.root = root
        self.chunkSize = max(4096, chunkSize)
    }

    public var supportedSchemes: Set<String> { ["local"] }

    public func load(_ request: DownloadRequest) async throws -> ImageDataLoaderResponse {
        guard let url = request.url else { throw AlcedoError.requestError(reason: .invalidURL(request: .missingURL)) }
        let segments = try Self.segments(of: url)
        let rootPath = root.path
        let outcome: Result<OpenedFile?, AlcedoError> = await withCheckedContinuation { continuation in
            Self.queue.async { continuation.resume(returning: Self.openFile(segments, root: rootPath, url: url)) }
        }
        guard let file = try outcome.get() else {
            return ImageDataLoaderResponse(statusCode: 404, headers: ["Content-Length": "0"], body: ImageDataBody(data: Data()))
        }
        var headers = HTTPHeaderFields()
        headers["ETag"] = file.etag
        headers["Last-Modified"] = HTTPDate.string(from: file.modified)
        headers["Cache-Control"] = "no-cache"
        if Self.notModified(request.headers, etag: file.etag, modified: file.modified) {
            file.release()
            return ImageDataLoaderResponse(statusCode: 304, headers: headers, body: ImageDataBody(data: Data()))
        }
        headers["Content-Length"] = String(file.size)
        if let type = Self.contentType(for: segments.last ?? "") { headers["Content-Type"] = type }
        return ImageDataLoaderResponse(statusCode: 200, headers: headers,
                                       body: ImageDataBody(FileChunks(file: file, chunkSize: chunkSize, queue: Self.queue)))
    }

    public func shutdown() async {}

    // MARK: Resolving

    /// The path segments of a `local:///path` URL, each percent-decoded once (`.` dropped):
    /// the checks made before any file is looked at.
    /// - Throws: `.invalidURL` for another scheme, a host (`local://host/…`) or bad
    ///   percent-encoding; `.sourceNotAllowed` for `..`, an encoded `/`, a NUL or an empty path.
    public static func segments(of url: URL) throws(AlcedoError) -> [String] {
        guard url.scheme?.lowercased() == "local", (url.host(percentEncoded: true) ?? "").isEmpty else {
            throw .requestError(reason: .invalidURL(url.absoluteString))
        }
        let path = url.path(percentEncoded: true)
        var segments: [String] = []
        for raw in path.split(separator: "/", omittingEmptySubsequences: true) {
            guard let segment = String(raw).percentDecoded else {
                throw .requestError(reason: .invalidURL(url.absoluteString))
            }
            if segment == "." { continue }
            if segment == ".." {
                throw .requestError(reason: .sourceNotAllowed(url, reason: "the path has a .. segment"))
            }
            if segment.contains(literal: "/") || segment.contains(literal: "\0") {
                throw .requestError(reason: .sourceNotAllowed(url, reason: "a path segment holds an encoded / or a NUL"))
            }
            segments.append(segment)
        }
        guard !segments.isEmpty else { throw .requestError(reason: .sourceNotAllowed(url, reason: "the path names the root itself")) }
        return segments
    }

    /// The real path a URL names inside `root`, symbolic links resolved, or `nil` when nothing
    /// is there. Refuses (`.sourceNotAllowed`) a path whose links lead outside the root.
    public func resolve(_ url: URL) throws(AlcedoError) -> String? {
        let segments = try Self.segments(of: url)
        return try Self.resolvedPath(segments, root: root.path, url: url)
    }

    private static func resolvedPath(_ segments: [String], root: String, url: URL) throws(AlcedoError) -> String? {
        guard let realRoot = realPath(root) else {
            throw .requestError(reason: .sourceNotAllowed(url, reason: "the root folder \(root) does not exist"))
        }
        let candidate = (realRoot == "/" ? "" : realRoot) + "/" + segments.joined(separator: "/")
        guard let resolved = realPath(candidate) else { return nil }
        let prefix = realRoot == "/" ? "/" : realRoot + "/"
        guard resolved.hasPrefix(prefix) else {
            throw .requestError(reason: .sourceNotAllowed(url, reason: "a symbolic link leads outside the root folder"))
        }
        return resolved
    }

    /// Resolves and opens the file, or `nil` (404) when it is missing or not a regular file.
    private static func openFile(_ segments: [String], root: String, url: URL) -> Result<OpenedFile?, AlcedoError> {
        let resolved: String?
        do {
            resolved = try resolvedPath(segments, root: root, url: url)
        } catch {
            return .failure(error)
        }
        guard let resolved else { return .success(nil) }
        // Looked at before opening: a FIFO, a device or a folder is never opened.
        var before = stat()
        guard lstat(resolved, &before) == 0, (before.st_mode & S_IFMT) == S_IFREG else { return .success(nil) }
        // O_NONBLOCK: should the entry have become a FIFO meanwhile, open returns at once;
        // O_NOFOLLOW: nor may it have become a link.
        let fd = open(resolved, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return .success(nil) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
              info.st_dev == before.st_dev, info.st_ino == before.st_ino else {
            _ = close(fd)
            return .success(nil)
        }
        let size = Int(info.st_size)
        #if canImport(Darwin)
        let seconds = Int(info.st_mtimespec.tv_sec), nanoseconds = Int(info.st_mtimespec.tv_nsec)
        #else
        let seconds = Int(info.st_mtim.tv_sec), nanoseconds = Int(info.st_mtim.tv_nsec)
        #endif
        let modified = Date(timeIntervalSince1970: TimeInterval(seconds))
        let etag = "\"" + String(size, radix: 16) + "-" + String(seconds, radix: 16) + String(nanoseconds, radix: 16) + "\""
        return .success(OpenedFile(fd: fd, size: size, modified: modified, etag: etag))
    }

    private static func realPath(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    // MARK: Conditional requests

    /// `If-None-Match` when present (weak comparison, `*`), else `If-Modified-Since` at
    /// one-second precision.
    static func notModified(_ headers: HTTPHeaderFields, etag: String, modified: Date) -> Bool {
        let tags = headers.listElements(for: "If-None-Match")
        if !tags.isEmpty {
            let bare = { (tag: String) in tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag }
            return tags.contains { $0 == "*" || bare($0) == bare(etag) }
        }
        if let since = headers["If-Modified-Since"], let date = HTTPDate.parse(since) {
            return modified.timeIntervalSince1970.rounded(.down) <= date.timeIntervalSince1970
        }
        return false
    }

    static func contentType(for name: String) -> String? {
        let ext = name.filePathExtension.lowercased()
        guard !ext.isEmpty, let format = ImageFormat(fileExtension: ext) else { return nil }
        return format.mimeType
    }
}

/// An open regular file: closed once read, or when dropped.
final class OpenedFile: Sendable {
    let fd: Int32
    let size: Int
    let modified: Date
    let etag: String
    private let closed = Mutex(false)

    init(fd: Int32, size: Int, modified: Date, etag: String) {
        self.fd = fd
        self.size = size
        self.modified = modified
        self.etag = etag
    }

    func release() {
        let wasOpen = closed.withLock { closed -> Bool in
            defer { closed = true }
            return !closed
        }
        if wasOpen { _ = close(fd) }
    }

    deinit { release() }
}

/// A file's bytes in chunks, each read with `pread` on a dispatch queue when asked for.
private struct FileChunks: AsyncSequence, Sendable {
    typealias Element = Data

    let file: OpenedFile
    let chunkSize: Int
    let queue: DispatchQueue

    func makeAsyncIterator() -> Iterator { Iterator(file: file, chunkSize: chunkSize, queue: queue) }

    struct Iterator: AsyncIteratorProtocol {
        let file: OpenedFile
        let chunkSize: Int
        let queue: DispatchQueue
        var offset = 0

        mutating func next() async throws -> Data? {
            // A file that grew is read up to the size announced; one that shrank ends early
            // (the downloader reports the difference from Content-Length).
            let wanted = Swift.min(chunkSize, file.size - offset)
            guard wanted > 0 else {
                file.release()
                return nil
            }
            let (file, start) = (self.file, offset)
            let result: Result<Data, any Error> = await withCheckedContinuation { continuation in
                queue.async {
                    var data = Data(count: wanted)
                    var filled = 0
                    while filled < wanted {
                        let count = data.withUnsafeMutableBytes { buffer in
                            pread(file.fd, buffer.baseAddress! + filled, wanted - filled, off_t(start + filled))
                        }
                        if count < 0 {
                            if errno == EINTR || errno == EAGAIN { continue }
                            continuation.resume(returning: .failure(POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)))
                            return
                        }
                        if count == 0 { break }
                        filled += count
                    }
                    data.count = filled
                    continuation.resume(returning: .success(data))
                }
            }
            let data = try result.get()
            if data.isEmpty {
                file.release()
                return nil
            }
            offset += data.count
            return data
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension DiskStorage {
    /// Kingfisher's disk storage: values of one type, each in a file of its bytes alone, in a
    /// folder (Kingfisher's `DiskStorage.Backend<T: DataTransformable>`, with its API and
    /// behaviour).
    ///
    /// A value's file holds ``DataTransformable/toData()``'s bytes; its last access is the
    /// file's access time and its estimated expiration the file's modification time (see
    /// ``FileMeta``). A file is written to a hidden temporary file in the folder, given its
    /// dates, then renamed over the value's name, so no reader sees a partial file or a file
    /// without its dates.
    ///
    /// ``Config/sizeLimit`` counts the values' bytes and is applied only by
    /// ``removeSizeExceededValues()``, as in Kingfisher: between clean-ups the folder can grow
    /// past it. ``ImageCache`` keeps its disk tier in an ``EntryStore`` instead, whose limit holds
    /// after every store and whose files keep HTTP validators.
    ///
    /// When created, the backend lists its folder once in the background; until then every
    /// lookup reads the file's dates, after it a key whose file was not listed and not stored
    /// since is a miss without any file-system call. Files that other processes write after the
    /// listing are therefore not found by this backend (as in Kingfisher).
    ///
    /// Thread-safe. Every method is synchronous and blocking: call it from a thread of your
    /// own, not from the cooperative thread pool.
    public final class Backend<T: DataTransformable>: Sendable where T: Sendable {
        private let settings: Mutex<Config>

        /// The settings. The folder is fixed when the backend is created; the other settings
        /// apply from the next call.
        public var config: Config {
            get { settings.withLock { $0 } }
            set { settings.withLock { $0 = newValue } }
        }

        /// The storage's folder: ``Config/cachePathBlock`` applied to ``Config/directory`` and
        /// the cache's folder name.
        public let directoryURL: URL

        /// The queue that extends expirations after reads.
        let metaChangingQueue: DispatchQueue

        /// The queue on which the initial listing of the folder is applied to ``maybeCached``.
        let maybeCachedCheckingQueue = DispatchQueue(label: "Alcedo.DiskStorage.Backend.maybeCachedChecking")

        private struct ScanState {
            /// The file names listed at start plus those stored since; `nil` when the listing failed.
            var maybeCached: Set<String>?
            var setupCompleted = false
            /// Files stored while the listing ran, added to it when it is applied.
            var storedDuringSetup = Set<String>()
        }
        private let scanState = Mutex(ScanState())

        /// The names of the files that may be in the folder (false positives allowed): the
        /// initial listing plus every file stored since. `nil` when the listing failed: every
        /// lookup then reads the file's dates.
        var maybeCached: Set<String>? {
            get { scanState.withLock { $0.maybeCached } }
            set { scanState.withLock { $0.maybeCached = newValue } }
        }

        /// Whether the initial listing has been applied to ``maybeCached``.
        var maybeCachedSetupCompleted: Bool {
            get { scanState.withLock { $0.setupCompleted } }
            set { scanState.withLock { $0.setupCompleted = newValue } }
        }

        /// `false` when the folder could not be created: every lookup and store then fails with
        /// `.diskStorageIsNotReady`.
        private let storageReady = Atomic<Bool>(true)
        private let temporaryCounter = Atomic<Int>(0)

        /// Creates a disk storage with `config`, creating its folder now; the folder is then
        /// listed in the background.
        /// - Throws: `.cacheError(.cannotCreateDirectory)` when the folder cannot be created.
        public convenience init(config: Config) throws(AlcedoError) {
            self.init(noThrowConfig: config, creatingDirectory: false)
            try prepareDirectory()
            setupCacheChecking()
        }

        /// Creates a disk storage; with `creatingDirectory`, creates the folder (a failure marks
        /// the storage not ready instead of throwing) and starts the listing. Without it, the
        /// caller does both.
        init(noThrowConfig config: Config, creatingDirectory: Bool) {
            var config = config
            directoryURL = config.folderURL
            // The block is used once; dropping it releases what it captured.
            config.cachePathBlock = nil
            settings = Mutex(config)
            metaChangingQueue = DispatchQueue(label: config.cacheName)
            if creatingDirectory {
                try? prepareDirectory()
                setupCacheChecking()
            }
        }

        /// Lists the folder in the background and applies the names to ``maybeCached``, with
        /// the files stored meanwhile.
        private func setupCacheChecking() {
            DispatchQueue.global(qos: .default).async {
                let listed = try? self.config.fileManager.contentsOfDirectory(atPath: self.directoryURL.path)
                self.maybeCachedCheckingQueue.async {
                    self.scanState.withLock { state in
                        // A failed listing disables the shortcut: lookups read the file's dates.
                        state.maybeCached = listed.map { Set($0).union(state.storedDuringSetup) }
                        state.storedDuringSetup.removeAll()
                        state.setupCompleted = true
                    }
                }
            }
        }

        /// Creates the folder when it does not exist; a failure marks the storage not ready.
        private func prepareDirectory() throws(AlcedoError) {
            let fileManager = config.fileManager
            let path = directoryURL.path
            guard !fileManager.fileExists(atPath: path) else { return }
            do {
                try fileManager.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: nil)
            } catch {
                storageReady.store(false, ordering: .sequentiallyConsistent)
                throw .cacheError(reason: .cannotCreateDirectory(path: path, errno: Self.errnoCode(of: error)))
            }
        }

        private func checkReady() throws(AlcedoError) {
            guard storageReady.load(ordering: .sequentiallyConsistent) else {
                throw .cacheError(reason: .diskStorageIsNotReady(cacheURL: directoryURL))
            }
        }

        // MARK: Store

        /// Stores `value` under `key`, replacing the value there, atomically.
        /// - Parameters:
        ///   - value: the value.
        ///   - key: its key.
        ///   - expiration: its expiration; `nil` (default) uses ``Config/expiration``. An
        ///     expiration already past stores nothing.
        ///   - writeOptions: `.withoutOverwriting` fails when a file is under the name already;
        ///     the other options are Apple's file protection and are not used (default `[]`).
        ///     The write is always atomic.
        ///   - forcedExtension: an extension for this file name instead of the configured one
        ///     (default `nil`).
        /// - Throws: `.cacheError` with `.diskStorageIsNotReady`, `.cannotConvertToData` (the value
        ///   gave no bytes), `.cannotCreateCacheFile` (writing failed: disk full, read-only folder…)
        ///   or `.cannotSetCacheFileAttribute` (the file's dates could not be set).
        public func store(value: T, forKey key: String, expiration: StorageExpiration? = nil,
                          writeOptions: Data.WritingOptions = [], forcedExtension: String? = nil) throws(AlcedoError) {
            try checkReady()
            let now = Date()
            let expiration = expiration ?? config.expiration
            guard !expiration.isExpired(at: now) else { return }
            let data: Data
            do {
                data = try value.toData()
            } catch {
                throw .cacheError(reason: .cannotConvertToData(object: value, error: error))
            }
            let fileURL = cacheFileURL(forKey: key, forcedExtension: forcedExtension)
            let expirationDate = expiration.estimatedExpiration(since: now)
            let overwrite = !writeOptions.contains(.withoutOverwriting)
            var failure = write(data, to: fileURL.path, accessed: now, expires: expirationDate, overwrite: overwrite)
            if case .folder(let error)? = failure, error.code == ENOENT {
                // The folder was removed underneath: make it again, then write again.
                try prepareDirectory()
                failure = write(data, to: fileURL.path, accessed: now, expires: expirationDate, overwrite: overwrite)
            }
            switch failure {
            case nil:
                break
            case .folder(let error), .file(let error):
                let reason = CacheErrorReason.writeError(path: fileURL.path, errno: error.code)
                throw .cacheError(reason: .cannotCreateCacheFile(
                    fileURL: fileURL, key: key, data: data,
                    error: reason.storageFailure ?? .writeFailed(path: fileURL.path, errno: error.code)))
            case .dates(let error):
                throw .cacheError(reason: .cannotSetCacheFileAttribute(
                    filePath: fileURL.path, attributes: [.modificationDate: expirationDate],
                    error: .writeFailed(path: fileURL.path, errno: error.code)))
            }
            let name = fileURL.lastPathComponent
            scanState.withLock { state in
                if !state.setupCompleted { state.storedDuringSetup.insert(name) }
                state.maybeCached?.insert(name)
            }
        }

        private enum WriteFailure: Error {
            /// The temporary file could not be created.
            case folder(POSIXFile.Errno)
            /// Writing or renaming failed.
            case file(POSIXFile.Errno)
            /// The dates could not be set.
            case dates(POSIXFile.Errno)
        }

        /// The start of every temporary file's name (a hidden file: listings skip it).
        static var temporaryPrefix: String { DiskStorage.EntryStore.temporaryPrefix }

        /// Writes `data` to a temporary file with its dates, then renames it to `path` (or, without
        /// `overwrite`, links it there, failing with `EEXIST` when a file is there).
        private func write(_ data: Data, to path: String, accessed: Date, expires: Date, overwrite: Bool) -> WriteFailure? {
            let temporaryPath = directoryURL.path + "/" + Self.temporaryPrefix
                + "\(getpid())-\(temporaryCounter.add(1, ordering: .relaxed).newValue)"
            let fd: Int32
            switch POSIXFile.open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL) {
            case .success(let descriptor): fd = descriptor
            case .failure(let error): return .folder(error)
            }
            var failure: WriteFailure? = data.withUnsafeBytes { bytes in
                POSIXFile.write(fd, bytes, UnsafeRawBufferPointer(start: nil, count: 0)).map { .file($0) }
            }
            if failure == nil, let error = FileTime.set(descriptor: fd, accessed: accessed, modified: expires) {
                failure = .dates(error)
            }
            if close(fd) != 0, failure == nil, errno != EINTR { failure = .file(POSIXFile.Errno(errno)) }
            if failure == nil {
                if overwrite {
                    failure = POSIXFile.rename(temporaryPath, path).map { .file($0) }
                } else if link(temporaryPath, path) != 0 {
                    failure = .file(POSIXFile.Errno(errno))
                }
            }
            if failure != nil || !overwrite { _ = POSIXFile.unlink(temporaryPath) }
            return failure
        }

        // MARK: Read

        /// The value under `key`, or `nil` when there is none or it has expired. A hit extends the
        /// expiration as `extendingExpiration` says, shortly after, on another queue.
        /// - Parameters:
        ///   - key: the value's key.
        ///   - forcedExtension: the extension the value was stored with, if it was given one
        ///     (default `nil`).
        ///   - extendingExpiration: what the read does to the expiration (default `.cacheTime`:
        ///     the value's original duration again, counted from now).
        /// - Throws: `.cacheError` with `.diskStorageIsNotReady`, `.invalidURLResource` (the file
        ///   exists but its dates cannot be read) or `.cannotLoadDataFromDisk` (the file cannot be
        ///   read, or ``DataTransformable/fromData(_:)`` failed).
        public func value(forKey key: String, forcedExtension: String? = nil,
                          extendingExpiration: ExpirationExtending = .cacheTime) throws(AlcedoError) -> T? {
            try value(forKey: key, referenceDate: Date(), actuallyLoad: true, extendingExpiration: extendingExpiration,
                      forcedExtension: forcedExtension)
        }

        /// The value under `key` if it has not expired at `referenceDate`; with `actuallyLoad`
        /// `false`, ``DataTransformable/empty`` instead of the value, without reading the file.
        func value(forKey key: String, referenceDate: Date, actuallyLoad: Bool, extendingExpiration: ExpirationExtending,
                   forcedExtension: String?) throws(AlcedoError) -> T? {
            try checkReady()
            let fileURL = cacheFileURL(forKey: key, forcedExtension: forcedExtension)
            let name = fileURL.lastPathComponent
            let maybeCached = scanState.withLock { !$0.setupCompleted || ($0.maybeCached?.contains(name) ?? true) }
            guard maybeCached else { return nil }

            let meta: FileMeta
            do {
                meta = try FileMeta(fileURL: fileURL)
            } catch {
                // A missing file is a miss; so is a file that cannot be confirmed on disk. A file
                // that exists but whose dates cannot be read is an error.
                if error.code == ENOENT || error.code == ENOTDIR { return nil }
                guard config.fileManager.fileExists(atPath: fileURL.path) else { return nil }
                throw .cacheError(reason: .invalidURLResource(
                    error: CacheErrorReason.StorageFailure.readFailed(path: fileURL.path, errno: error.code),
                    key: key, url: fileURL))
            }
            if meta.expired(referenceDate: referenceDate) { return nil }
            if !actuallyLoad { return T.empty }

            let data: Data
            switch Self.readFile(fileURL.path) {
            case .success(let bytes): data = bytes
            case .failure(let error):
                throw .cacheError(reason: .cannotLoadDataFromDisk(
                    url: fileURL, error: .readFailed(path: fileURL.path, errno: error.code)))
            }
            let object: T
            do {
                object = try T.fromData(data)
            } catch {
                throw .cacheError(reason: .cannotLoadDataFromDisk(
                    url: fileURL, error: .corruptEntry(path: fileURL.path, reason: "\(error)")))
            }
            metaChangingQueue.async {
                meta.extendExpiration(extendingExpiration: extendingExpiration)
            }
            return object
        }

        /// The bytes of the regular file at `path`, read without following a symbolic link and,
        /// where the system lets the owner, without changing its access time (the last access is
        /// the backend's to set).
        static func readFile(_ path: String) -> Result<Data, POSIXFile.Errno> {
            var opened = POSIXFile.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | POSIXFile.noAccessTime)
            if case .failure(let error) = opened, error.code == EPERM, POSIXFile.noAccessTime != 0 {
                opened = POSIXFile.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
            }
            let fd: Int32
            switch opened {
            case .success(let descriptor): fd = descriptor
            case .failure(let error): return .failure(error)
            }
            defer { POSIXFile.close(fd) }
            switch FileKind(descriptor: fd) {
            case .regular: break
            case .directory: return .failure(POSIXFile.Errno(EISDIR))
            case .other: return .failure(POSIXFile.Errno(EINVAL))
            case .unreadable(let code): return .failure(POSIXFile.Errno(code))
            }
            let size: Int
            switch POSIXFile.size(fd) {
            case .success(let count): size = count
            case .failure(let error): return .failure(error)
            }
            var data = Data(count: size)
            let read: Result<Int, POSIXFile.Errno> = data.withUnsafeMutableBytes { buffer in
                guard let base = buffer.baseAddress else { return .success(0) }
                return POSIXFile.read(fd, into: base, count: size, at: 0)
            }
            switch read {
            case .success(let count):
                if count < size { data.removeSubrange(count...) }
                return .success(data)
            case .failure(let error):
                return .failure(error)
            }
        }

        /// Whether an unexpired value is stored under `key`, without reading it (one `lstat`;
        /// none for a key the initial listing did not find and that was not stored since).
        /// - Parameters:
        ///   - key: the value's key.
        ///   - forcedExtension: the extension the value was stored with, if any (default `nil`).
        public func isCached(forKey key: String, forcedExtension: String? = nil) -> Bool {
            isCached(forKey: key, referenceDate: Date(), forcedExtension: forcedExtension)
        }

        /// Whether a value is stored under `key` that has not expired at `referenceDate` (pass a
        /// future date to ask whether it will still be cached then).
        /// - Parameters:
        ///   - key: the value's key.
        ///   - referenceDate: the moment the expiration is compared with.
        ///   - forcedExtension: the extension the value was stored with, if any (default `nil`).
        public func isCached(forKey key: String, referenceDate: Date, forcedExtension: String? = nil) -> Bool {
            let result = try? value(forKey: key, referenceDate: referenceDate, actuallyLoad: false,
                                    extendingExpiration: .none, forcedExtension: forcedExtension)
            return result != nil
        }

        // MARK: Remove

        /// Removes the value under `key`. A key with no value is not an error.
        /// - Parameters:
        ///   - key: the value's key.
        ///   - forcedExtension: the extension the value was stored with, if any (default `nil`).
        /// - Throws: `.cacheError(.cannotSetCacheFileAttribute)` with `.removeFailed` when the
        ///   file exists but cannot be removed.
        public func remove(forKey key: String, forcedExtension: String? = nil) throws(AlcedoError) {
            try removeFile(at: cacheFileURL(forKey: key, forcedExtension: forcedExtension))
        }

        func removeFile(at url: URL) throws(AlcedoError) {
            if let error = POSIXFile.unlink(url.path) {
                throw .cacheError(reason: .removeFailed(path: url.path, errno: error.code))
            }
        }

        /// Removes the folder with every value in it, and makes it again, empty.
        /// - Throws: `.cacheError` with `.removeFailed` or `.cannotCreateDirectory`.
        public func removeAll() throws(AlcedoError) {
            try removeAll(skipCreatingDirectory: false)
        }

        /// Removes the folder with every value in it; unless `skipCreatingDirectory`, makes it
        /// again, empty. A folder that is not there is not an error.
        /// - Throws: `.cacheError` with `.removeFailed` or `.cannotCreateDirectory`.
        public func removeAll(skipCreatingDirectory: Bool) throws(AlcedoError) {
            let fileManager = config.fileManager
            let path = directoryURL.path
            do {
                try fileManager.removeItem(atPath: path)
            } catch {
                let code = Self.errnoCode(of: error)
                if code != ENOENT {
                    throw .cacheError(reason: .removeFailed(path: path, errno: code))
                }
            }
            if !skipCreatingDirectory { try prepareDirectory() }
        }

        // MARK: Names

        /// The URL where the value of `key` is stored (whether or not it is). `key` is the
        /// computed key: for an image, the source's cache key with the processor's identifier.
        /// - Parameters:
        ///   - key: the value's key.
        ///   - forcedExtension: an extension instead of the configured one (default `nil`).
        public func cacheFileURL(forKey key: String, forcedExtension: String? = nil) -> URL {
            directoryURL.appendingPathComponent(cacheFileName(forKey: key, forcedExtension: forcedExtension),
                                                isDirectory: false)
        }

        /// The file name of `key`: its SHA-256 in hex (or, with ``Config/usesHashedFileName``
        /// `false`, the key itself when it is a plain file name), then `.` and the extension, if any.
        func cacheFileName(forKey key: String, forcedExtension: String? = nil) -> String {
            let config = self.config
            let baseName = config.usesHashedFileName || !Self.isPlainFileName(key) ? key.kf.sha256 : key
            if let ext = fileExtension(key: key, forcedExtension: forcedExtension, config: config) {
                return "\(baseName).\(ext)"
            }
            return baseName
        }

        /// The extension of `key`'s file: `forcedExtension`, else ``Config/pathExtension``, else
        /// the key's own with hashed names and ``Config/autoExtAfterHashedFileName``.
        func fileExtension(key: String, forcedExtension: String?, config: Config) -> String? {
            if let ext = forcedExtension ?? config.pathExtension {
                return ext.isEmpty || ext.contains("/") || ext.contains("\0") ? nil : ext
            }
            if config.usesHashedFileName && config.autoExtAfterHashedFileName {
                return key.kf.ext
            }
            return nil
        }

        /// Whether `key` can name a file in the folder as it is: one visible path component.
        private static func isPlainFileName(_ key: String) -> Bool {
            !key.isEmpty && !key.hasPrefix(".") && key.utf8.count <= 255
                && !key.contains("/") && !key.contains("\0")
        }

        // MARK: Clean-up

        /// The metadata of the files in the folder, hidden files left out; none when the folder
        /// is not there.
        private func allFileMetas() throws(AlcedoError) -> [FileMeta] {
            let path = directoryURL.path
            let names: [String]
            do {
                names = try config.fileManager.contentsOfDirectory(atPath: path)
            } catch {
                let code = Self.errnoCode(of: error)
                if code == ENOENT || code == ENOTDIR { return [] }
                throw .cacheError(reason: .cannotListDirectory(path: path, errno: code))
            }
            return names.filter { !$0.hasPrefix(".") }.compactMap { name in
                try? FileMeta(fileURL: directoryURL.appendingPathComponent(name, isDirectory: false))
            }
        }

        /// Removes the values that have expired and returns their files' URLs. Temporary files
        /// left by writes that were interrupted more than ten minutes ago are removed too (not
        /// listed).
        /// - Throws: `.cacheError` with `.cannotListDirectory` (as `.cannotLoadDataFromDisk`) or
        ///   `.removeFailed`.
        public func removeExpiredValues() throws(AlcedoError) -> [URL] {
            try removeExpiredValues(referenceDate: Date())
        }

        func removeExpiredValues(referenceDate: Date) throws(AlcedoError) -> [URL] {
            removeStaleTemporaryFiles(before: referenceDate.addingTimeInterval(-600))
            let expired = try allFileMetas().filter { !$0.isDirectory && $0.expired(referenceDate: referenceDate) }
            for meta in expired { try removeFile(at: meta.url) }
            return expired.map(\.url)
        }

        /// Removes the temporary files of this folder last changed before `cutoff`.
        private func removeStaleTemporaryFiles(before cutoff: Date) {
            let names = (try? config.fileManager.contentsOfDirectory(atPath: directoryURL.path)) ?? []
            for name in names where name.hasPrefix(Self.temporaryPrefix) {
                let path = directoryURL.path + "/" + name
                // The status change time: the modification time of a temporary file already holds
                // the expiration its entry was to get.
                var info = stat()
                guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
                #if canImport(Darwin)
                let changed = FileTime.date(info.st_ctimespec)
                #else
                let changed = FileTime.date(info.st_ctim)
                #endif
                if changed < cutoff { _ = POSIXFile.unlink(path) }
            }
        }

        /// When the values take ``Config/sizeLimit`` or more, removes the least recently used
        /// ones until they take at most half of it, and returns their files' URLs. Nothing with
        /// a limit of 0.
        /// - Throws: `.cacheError` with `.cannotListDirectory` (as `.cannotLoadDataFromDisk`) or
        ///   `.removeFailed`.
        public func removeSizeExceededValues() throws(AlcedoError) -> [URL] {
            let sizeLimit = config.sizeLimit
            guard sizeLimit > 0 else { return [] }
            var size = try totalSize()
            guard size >= sizeLimit else { return [] }
            // Most recently used first: the least recently used are taken from the end.
            var pending = try allFileMetas().filter { !$0.isDirectory }.sorted(by: FileMeta.lastAccessDate)
            var removed: [URL] = []
            let target = sizeLimit / 2
            while size > target, let meta = pending.popLast() {
                size -= min(size, UInt(meta.fileSize))
                try removeFile(at: meta.url)
                removed.append(meta.url)
            }
            return removed
        }

        /// The bytes the files in the folder take (the values' bytes), hidden files left out.
        /// - Throws: `.cacheError(.cannotLoadDataFromDisk)` with `.cannotListDirectory`.
        public func totalSize() throws(AlcedoError) -> UInt {
            try allFileMetas().reduce(0) { $1.isDirectory ? $0 : $0 + UInt($1.fileSize) }
        }

        /// The `errno` behind a file manager's error (`EIO` when it has none).
        static func errnoCode(of error: any Error) -> Int32 {
            if let posix = error as? POSIXError { return posix.code.rawValue }
            if let cocoa = error as? CocoaError {
                if let posix = cocoa.underlying as? POSIXError { return posix.code.rawValue }
                switch cocoa.code {
                case .fileNoSuchFile, .fileReadNoSuchFile: return ENOENT
                case .fileWriteNoPermission, .fileReadNoPermission: return EACCES
                case .fileWriteOutOfSpace: return ENOSPC
                case .fileWriteVolumeReadOnly: return EROFS
                default: break
                }
            }
            return EIO
        }
    }
}

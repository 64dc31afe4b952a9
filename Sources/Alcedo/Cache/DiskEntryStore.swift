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

extension DiskStorage {
    /// A disk cache of bytes: one file per entry in a folder, written atomically, with its metadata in a
    /// small header, a hard size limit enforced least-recently-used first, and expiration.
    /// ``Config`` holds its settings.
    ///
    /// ## Files
    /// An entry's file is named by the SHA-256 of its key in hex (swift-crypto), plus
    /// ``Config/pathExtension`` when set, or the extension forced for that entry when it was
    /// stored (`forcedExtension:`, Kingfisher's per-entry extension): no key can name a path
    /// outside the folder. The same key stored with two extensions is two entries. Files are
    /// written to a temporary file in the same folder (`.alcedo-tmp-…`) and renamed over the entry, so
    /// a crash or a kill during a write never leaves a partial entry under the entry's name, and
    /// two processes writing the same folder each replace whole files. Temporary files left by a
    /// killed writer are removed by the next clean-up once older than
    /// ``Config/temporaryFileLifetime``. Writes are not `fsync`ed: after a power loss an entry may
    /// be missing or truncated, and a truncated file fails the header check and is removed
    /// instead of served.
    ///
    /// ## A folder shared with other programs
    /// The folder may hold files Alcedo did not write; they are never read as entries, written or
    /// removed. An entry is a regular file named like one whose first bytes are the entry magic
    /// (`ALCEDOC1`); a temporary file is a regular file whose name starts with `.alcedo-tmp-`.
    /// Anything else (another program's file named with 64 hex digits, a symbolic link, a FIFO, a
    /// folder, a device) is *foreign*: a lookup of its name is a miss, scans and
    /// ``removeAll()`` skip it. Entries are opened with `O_NOFOLLOW | O_NONBLOCK` and
    /// checked with `fstat` to be regular files, so a link or a FIFO planted under an entry's name
    /// neither redirects nor blocks a reader, and the access time is written through the
    /// descriptor that was read and verified, never by reopening the name.
    ///
    /// ## Metadata: a header in the file
    /// Each file starts with a header that holds the expiration date, the last access time, the
    /// original byte size, the key, the creation date and the entry's ``HTTPCacheInfo``
    /// (ETag, Last-Modified, max-age / Expires, Content-Type) — the layout is in
    /// `DiskEntryHeader.swift`. The alternatives were rejected:
    /// - *file dates* (Kingfisher keeps the last access in the creation date, which Linux
    ///   filesystems do not let a program set) cannot hold validators at all;
    /// - *extended attributes* are missing or limited on tmpfs before Linux 6.6, some overlay and
    ///   network filesystems, and are dropped by many copy and backup tools;
    /// - *an index file* is a second file that must be kept consistent with the entries across
    ///   crashes and between processes, which needs locking or a journal.
    ///
    /// A header is written with the data in the same atomic rename, so data and metadata can never
    /// disagree; it survives restarts, copies and every filesystem. The last access and the
    /// expiration sit at fixed offsets and are updated in place by one small `pwrite`, at most once
    /// per ``Config/accessTimeGranularity`` (a minute) per entry, as `relatime` does for atime: the
    /// least-recently-used order is kept on disk, shared by every process and restart, exact to the
    /// minute (and exact in the memory of the process that made the accesses).
    /// The key and HTTP metadata sit in two checksummed slots: an update (a `304 Not Modified`
    /// refreshing freshness, through ``updateMetadata(forKey:httpCacheInfo:expiration:forcedExtension:)``)
    /// writes the slot not in use, under an advisory `flock`, and never rewrites the data; a torn
    /// update leaves the previous slot valid. Only an update that outgrows the slot rewrites the
    /// file, atomically.
    ///
    /// ## Limits
    /// After any store that takes the folder over ``Config/sizeLimit``, the least recently
    /// accessed entries are removed until the total is at most ``Config/lowWaterMarkRatio`` of
    /// the limit (the entry just stored is kept). The total counts whole files, header included.
    /// No app life-cycle event is needed: the limit holds when `store` returns.
    ///
    /// ## Lookups
    /// The storage keeps an index of its entries in memory, loaded by one scan of the folder on
    /// first use: a miss is answered without any filesystem call. Every clean-up and every trim
    /// rescans the folder, so entries written by other processes are counted and found from then on.
    ///
    /// Thread-safe, and safe to share a folder with other stores and other processes.
    /// Every method is synchronous and blocking: call it from a thread of your own, never from
    /// the cooperative thread pool (``ImageCache`` runs them on its I/O queue).
    public final class EntryStore: Sendable {
        /// The folder holding the entries.
        public let directoryURL: URL

        let directoryPath: String
        private let settings: Mutex<Config>
        let index = DiskIndex()
        private let stripes: [Stripe] = (0..<64).map { _ in Stripe() }
        private let broadcast = RemovalBroadcast()
        private let temporaryCounter = Atomic<Int>(0)
        private let processID = getpid()
        private let hooks = Mutex<Hooks>(Hooks())

        /// A lock for the keys whose hashes fall on it: a file operation and the index update
        /// that goes with it happen together.
        private final class Stripe: Sendable {
            let lock = Mutex(())
        }

        private struct Hooks {
            var midWrite: (@Sendable (String) -> Void)?
            var beforeAccessWrite: (@Sendable (String) -> Void)?
        }

        /// Creates a backend on `config.folderURL`. Touches nothing on disk: the folder is
        /// scanned on first use and created on first write.
        public init(config: Config) {
            directoryURL = config.folderURL
            directoryPath = config.folderURL.path
            settings = Mutex(config)
        }

        /// The settings. Changes to ``Config/folderURL`` are ignored: it is fixed when the
        /// backend is created. A new ``Config/pathExtension`` names the files from then on (the entries stored under the
        /// previous one stay, found with it as `forcedExtension:`, until they expire or are evicted). A lower size limit applies from
        /// the next store or clean-up.
        public var config: Config {
            get { settings.withLock { $0 } }
            set { settings.withLock { $0 = newValue } }
        }

        // MARK: Names

        /// The SHA-256 of `key` in hex: the name of its file without the extension.
        public func hash(forKey key: String) -> String { CacheKeyHash(key: key).hex }

        /// The URL of `key`'s file (whether or not it exists). Always inside ``directoryURL``.
        /// - Parameters:
        ///   - key: the entry's key.
        ///   - forcedExtension: the extension the entry was stored with instead of
        ///     ``Config/pathExtension`` (default `nil`: the configured one). It is cleaned as
        ///     ``Config/pathExtension`` is; an extension left empty by the cleaning means none.
        public func cacheFileURL(forKey key: String, forcedExtension: String? = nil) -> URL {
            URL(fileURLWithPath: path(for: name(forKey: key, forcedExtension: forcedExtension)))
        }

        /// The name of `key`'s file: with `forcedExtension` cleaned when given, else with the
        /// configured extension.
        func name(forKey key: String, forcedExtension: String?) -> DiskEntryName {
            let pathExtension = forcedExtension.map { Config.cleanedExtension($0) } ?? config.pathExtension
            return DiskEntryName(key: key, pathExtension: pathExtension)
        }

        func path(for id: DiskEntryName) -> String { directoryPath + "/" + id.fileName }

        private func stripe(_ id: DiskEntryName) -> Stripe { stripes[id.hash.stripe(of: stripes.count)] }

        // MARK: Store

        /// Stores `data` under `key`, replacing any entry there, atomically.
        ///
        /// When the store takes the folder over ``Config/sizeLimit``, least recently used
        /// entries are removed before it returns. Nothing is stored (and an entry already under
        /// `key` is removed) when the expiration is already past or the file would be larger
        /// than the size limit by itself.
        /// - Parameters:
        ///   - data: the bytes to store.
        ///   - key: the entry's key; any string (its SHA-256 names the file).
        ///   - expiration: this entry's expiration; `nil` (default) uses ``Config/expiration``.
        ///   - httpCacheInfo: the HTTP validators and freshness to keep with the entry.
        ///   - forcedExtension: an extension for this entry's file name instead of
        ///     ``Config/pathExtension`` (default `nil`: the configured one); read the entry back
        ///     with the same extension. See ``cacheFileURL(forKey:forcedExtension:)``.
        /// - Throws: `.cacheError` with `.diskFull`, `.readOnly`, `.cannotCreateDirectory` or
        ///   `.writeFailed`; nothing is left under `key`'s name by a failed write.
        public func store(value data: Data, forKey key: String, expiration: StorageExpiration? = nil,
                          httpCacheInfo: HTTPCacheInfo? = nil, forcedExtension: String? = nil) throws(AlcedoError) {
            let config = self.config
            let now = config.now()
            let nowMs = DiskTime.milliseconds(now)
            let expiration = expiration ?? config.expiration
            let id = name(forKey: key, forcedExtension: forcedExtension)
            try ensureLoaded()
            let record = DiskEntryRecord(key: key, creation: nowMs, httpCacheInfo: httpCacheInfo).encoded()
            try Self.checkRecordSize(record, key: key)
            let header = DiskEntryHeader(
                slotCapacity: DiskEntryHeader.capacity(forPayload: record.count), dataLength: data.count,
                lastAccess: nowMs, expiration: DiskTime.milliseconds(expiration.estimatedExpiration(since: now)),
                cacheTime: expiration.extensibleDuration.map { Int64($0 * 1000) } ?? -1)
            guard header.expiration > nowMs, config.sizeLimit <= 0 || header.fileSize <= config.sizeLimit else {
                try remove(id)
                return
            }
            try write(header: header, record: record, data: data, id: id)
            if config.sizeLimit > 0, index.totalSize > config.sizeLimit {
                try trim(protecting: id)
            }
        }

        /// Throws `.metadataTooLarge` when a record would not fit the largest slot a reader accepts.
        private static func checkRecordSize(_ record: [UInt8], key: String) throws(AlcedoError) {
            let limit = DiskEntryHeader.maxSlotCapacity - DiskEntryHeader.slotSlack - 63
            guard record.count <= limit else {
                throw .cacheError(reason: .metadataTooLarge(key: key, size: record.count, limit: limit))
            }
        }

        /// The start of every temporary file's name: a name no other program uses, so a clean-up
        /// removes only the temporary files Alcedo left.
        static let temporaryPrefix = ".alcedo-tmp-"

        /// Writes a temporary file and renames it over `id`'s file, then records it in the index.
        private func write(header: DiskEntryHeader, record: [UInt8], data: Data, id: DiskEntryName) throws(AlcedoError) {
            let headerBytes = header.encoded(record: record)
            let finalPath = path(for: id)
            let temporaryPath = directoryPath + "/" + Self.temporaryPrefix + String(id.hex.prefix(16))
                + "-\(processID)-\(temporaryCounter.add(1, ordering: .relaxed).newValue)"
            let fd = try createTemporaryFile(temporaryPath, for: finalPath)
            let midWrite = hooks.withLock { $0.midWrite }
            var failure: POSIXFile.Errno? = headerBytes.withUnsafeBytes { head in
                data.withUnsafeBytes { body in
                    guard let midWrite, body.count >= 2 else { return POSIXFile.write(fd, head, body) }
                    let half = body.count / 2
                    if let error = POSIXFile.write(fd, head, UnsafeRawBufferPointer(rebasing: body[..<half])) {
                        return error
                    }
                    midWrite(temporaryPath)
                    return POSIXFile.write(fd, UnsafeRawBufferPointer(start: nil, count: 0),
                                           UnsafeRawBufferPointer(rebasing: body[half...]))
                }
            }
            let stamp = failure == nil ? POSIXFile.stamp(fd) : nil
            if close(fd) != 0, failure == nil, errno != EINTR { failure = POSIXFile.Errno(errno) }
            if let failure {
                _ = POSIXFile.unlink(temporaryPath)
                throw .cacheError(reason: .writeError(path: finalPath, errno: failure.code))
            }
            let entry = DiskIndex.Entry(fileSize: header.fileSize, lastAccess: header.lastAccess,
                                        expiration: header.expiration, stamp: stamp)
            let renameFailure: POSIXFile.Errno? = stripe(id).lock.withLock { _ in
                if let error = POSIXFile.rename(temporaryPath, finalPath) { return error }
                index.set(id, entry)
                return nil
            }
            if let renameFailure {
                _ = POSIXFile.unlink(temporaryPath)
                throw .cacheError(reason: .writeError(path: finalPath, errno: renameFailure.code))
            }
        }

        /// Opens a new temporary file, creating the folder when it is missing (it may have been
        /// deleted underneath, and every entry with it: the index is then rebuilt from the folder
        /// as it is, which keeps the entries concurrent writers put in it meanwhile, where
        /// emptying the index would forget them).
        private func createTemporaryFile(_ temporaryPath: String, for finalPath: String) throws(AlcedoError) -> Int32 {
            let flags = O_WRONLY | O_CREAT | O_EXCL
            switch POSIXFile.open(temporaryPath, flags) {
            case .success(let fd):
                return fd
            case .failure(let error) where error.code == ENOENT:
                if let error = POSIXFile.makeDirectory(directoryPath) {
                    let reason = CacheErrorReason.writeError(path: directoryPath, errno: error.code)
                    if case .writeFailed? = reason.storageFailure {
                        throw .cacheError(reason: .cannotCreateDirectory(path: directoryPath, errno: error.code))
                    }
                    throw .cacheError(reason: reason)
                }
                do throws(AlcedoError) {
                    try index.scanGate.withLock { _ throws(AlcedoError) in _ = try rescan() }
                } catch {
                    // Not listed now: the next operation that needs the index lists it.
                    index.invalidate()
                }
                switch POSIXFile.open(temporaryPath, flags) {
                case .success(let fd): return fd
                case .failure(let error): throw .cacheError(reason: .writeError(path: finalPath, errno: error.code))
                }
            case .failure(let error):
                throw .cacheError(reason: .writeError(path: finalPath, errno: error.code))
            }
        }

        // MARK: Read

        /// The data stored under `key`, or `nil` when there is none, it has expired (it is then
        /// removed) or its file is not a valid entry (it is then removed too).
        ///
        /// A hit records the access in the file, so the least-recently-used order survives
        /// restarts; on a read-only folder the hit is still returned, without that record.
        /// A key the index does not hold is a miss without any filesystem call.
        /// - Parameters:
        ///   - key: the entry's key.
        ///   - extendingExpiration: what the access does to the expiration (default `.cacheTime`).
        ///   - forcedExtension: the extension the entry was stored with, if it was given one
        ///     (default `nil`: the configured one).
        /// - Throws: `.cacheError(.readFailed)` when the file exists but cannot be read.
        public func value(forKey key: String, extendingExpiration: ExpirationExtending = .cacheTime,
                          forcedExtension: String? = nil) throws(AlcedoError) -> Data? {
            try read(key: key, forcedExtension: forcedExtension, extending: extendingExpiration, wantsData: true,
                     wantsMetadata: false)?.data
        }

        /// The data and the metadata stored under `key` (for revalidation with the HTTP
        /// validators), or `nil` as for ``value(forKey:extendingExpiration:forcedExtension:)``.
        /// Counts as an access. `forcedExtension` is the one the entry was stored with, if any
        /// (default `nil`).
        public func entry(forKey key: String, extendingExpiration: ExpirationExtending = .cacheTime,
                          forcedExtension: String? = nil) throws(AlcedoError) -> (data: Data, metadata: DiskEntryMetadata)? {
            guard let result = try read(key: key, forcedExtension: forcedExtension, extending: extendingExpiration,
                                        wantsData: true),
                  let data = result.data, let metadata = result.metadata else { return nil }
            return (data, metadata)
        }

        /// The metadata of `key`'s entry, or `nil` when there is no valid, unexpired entry.
        /// Does not count as an access. `forcedExtension` is the one the entry was stored with,
        /// if any (default `nil`).
        public func metadata(forKey key: String, forcedExtension: String? = nil) throws(AlcedoError) -> DiskEntryMetadata? {
            try read(key: key, forcedExtension: forcedExtension, extending: nil, wantsData: false)?.metadata
        }

        /// `true` when an unexpired entry is stored under `key`. A miss costs no filesystem
        /// call; a hit costs one `stat`. Does not count as an access. `forcedExtension` is the
        /// one the entry was stored with, if any (default `nil`).
        public func isCached(forKey key: String, forcedExtension: String? = nil) -> Bool {
            let id = name(forKey: key, forcedExtension: forcedExtension)
            guard (try? ensureLoaded()) != nil, let entry = index.entry(id),
                  entry.expiration > DiskTime.milliseconds(config.now()) else { return false }
            return POSIXFile.isRegularFile(path(for: id))
        }

        private struct ReadResult {
            var data: Data?
            var metadata: DiskEntryMetadata?
        }

        /// Opens, validates and reads `key`'s entry; with `extending` set, records the access.
        private func read(key: String, forcedExtension: String?, extending: ExpirationExtending?, wantsData: Bool,
                          wantsMetadata: Bool = true) throws(AlcedoError) -> ReadResult? {
            let id = name(forKey: key, forcedExtension: forcedExtension)
            try ensureLoaded()
            guard index.entry(id) != nil else { return nil }
            let config = self.config
            let nowMs = DiskTime.milliseconds(config.now())
            let path = path(for: id)

            // A read that records the access opens the file for writing too: the access is
            // written through this descriptor, the one verified, never by the name again.
            var writable = extending != nil
            var opened = DiskEntryOpening.open(path, access: writable ? O_RDWR : O_RDONLY)
            if writable, case .failed(let error) = opened, [EACCES, EROFS, EPERM, ETXTBSY].contains(error.code) {
                writable = false
                opened = DiskEntryOpening.open(path, access: O_RDONLY)
            }
            let fd: Int32
            switch opened {
            case .opened(let descriptor): fd = descriptor
            case .missing:
                forgetIfMissing(id)
                return nil
            case .foreign:
                forget(id)
                return nil
            case .failed(let error):
                throw .cacheError(reason: .readFailed(path: path, errno: error.code))
            }
            defer { POSIXFile.close(fd) }

            let file: DiskEntryFile
            switch DiskEntryFile.read(fd, includingData: wantsData) {
            case .success(let value): file = value
            case .failure(let error): throw .cacheError(reason: .readFailed(path: path, errno: error.code))
            }
            guard file.hasMagic else {
                // Not written by Alcedo: another program's file under an entry's name. A miss, left alone.
                forget(id)
                return nil
            }
            guard let header = file.header, let record = file.record,
                  DiskEntryRecord.payload(record.payload, hasKey: key) else {
                discard(id, path: path, fd: fd, reason: .corrupt)
                return nil
            }
            guard header.expiration > nowMs else {
                discard(id, path: path, fd: fd, reason: .expired)
                return nil
            }

            var data: Data?
            if wantsData {
                switch file.data(fd) {
                case .success(let bytes): data = bytes
                case .failure(let error): throw .cacheError(reason: .readFailed(path: path, errno: error.code))
                }
            }

            var updated = header
            if let extending {
                if let hook = hooks.withLock({ $0.beforeAccessWrite }) { hook(path) }
                updated = recordAccess(id, fd: writable ? fd : nil, header: header, extending: extending, nowMs: nowMs,
                                       granularity: config.accessTimeGranularity)
            }
            guard wantsMetadata else { return ReadResult(data: data, metadata: nil) }
            let parsed = DiskEntryRecord(payload: record.payload)
            let metadata = DiskEntryMetadata(
                key: key, hash: id.hex, dataSize: header.dataLength, fileSize: header.fileSize,
                creationDate: DiskTime.date(parsed?.creation ?? 0), lastAccessDate: DiskTime.date(updated.lastAccess),
                expirationDate: DiskTime.date(updated.expiration), httpCacheInfo: parsed?.httpCacheInfo)
            return ReadResult(data: data, metadata: metadata)
        }

        /// Records an access in the index and, unless the file already says nearly as much, in
        /// the file's header. The file is written at most once per `granularity` per entry (a
        /// tenth of the entry's cache time when that is shorter), as `relatime` does for atime:
        /// the in-memory order stays exact, the order on disk is exact to that granularity.
        /// Returns the header as updated.
        /// `fd` is the entry's descriptor, open for writing (`nil` when the file could only be
        /// opened read-only): the header is written through it, never through the file's name.
        private func recordAccess(_ id: DiskEntryName, fd: Int32?, header: DiskEntryHeader, extending: ExpirationExtending,
                                  nowMs: Int64, granularity: TimeInterval) -> DiskEntryHeader {
            var updated = header
            updated.lastAccess = max(header.lastAccess, nowMs)
            switch extending {
            case .none: break
            case .cacheTime:
                if header.cacheTime >= 0 { updated.expiration = nowMs.addingClamped(header.cacheTime) }
            case .expirationTime(let expiration):
                updated.expiration = DiskTime.milliseconds(expiration.estimatedExpiration(since: DiskTime.date(nowMs)))
                updated.cacheTime = expiration.extensibleDuration.map { Int64($0 * 1000) } ?? -1
            }
            index.touch(id, lastAccess: updated.lastAccess, expiration: updated.expiration)

            var threshold = Int64(max(0, granularity) * 1000)
            if header.cacheTime >= 0 { threshold = min(threshold, header.cacheTime / 10) }
            let expirationMoved = updated.expiration != header.expiration
                && (updated.expiration == DiskEntryHeader.never || header.expiration == DiskEntryHeader.never
                    || abs(updated.expiration.subtractingClamped(header.expiration)) >= threshold)
            guard updated.lastAccess.subtractingClamped(header.lastAccess) >= threshold || expirationMoved
                    || updated.cacheTime != header.cacheTime else { return updated }
            // A read-only folder is still read: the access is then only in the index.
            guard let fd else { return updated }
            let bytes = updated.mutableBytes(includingExpiration: updated.expiration != header.expiration
                                                || updated.cacheTime != header.cacheTime)
            _ = bytes.withUnsafeBytes { POSIXFile.write(fd, $0, at: Int(DiskEntryHeader.mutableOffset)) }
            return updated
        }

        /// Removes `id`'s file, found invalid or expired through the open `fd`, unless the name
        /// now points to another file (a newer store replaced it meanwhile).
        private func discard(_ id: DiskEntryName, path: String, fd: Int32, reason: DiskStorage.Removal.Reason) {
            let removed: Bool = stripe(id).lock.withLock { _ in
                guard POSIXFile.sameFile(fd, path) else { return false }
                _ = POSIXFile.unlink(path)
                index.remove(id)
                return true
            }
            if removed { broadcast.send(reason, [id.hex]) }
        }

        /// Drops `id` from the index: its name holds something Alcedo did not write (left alone).
        private func forget(_ id: DiskEntryName) {
            stripe(id).lock.withLock { _ in index.remove(id) }
        }

        /// Drops `id` from the index when its file is gone (removed by another process).
        private func forgetIfMissing(_ id: DiskEntryName) {
            stripe(id).lock.withLock { _ in
                if !POSIXFile.exists(path(for: id)) { index.remove(id) }
            }
        }

        // MARK: Metadata update

        /// Replaces the HTTP metadata of `key`'s entry without rewriting its data (the
        /// pipeline calls this after a `304 Not Modified`), and records an access.
        ///
        /// The new record goes to the header slot not in use, under an exclusive `flock`, so a
        /// reader or a crash sees either the old or the new record, whole. Only when the new
        /// record does not fit the slot is the file rewritten, atomically.
        /// - Parameters:
        ///   - key: the entry's key.
        ///   - httpCacheInfo: the new metadata (`nil` removes it).
        ///   - expiration: a new expiration counted from now; `nil` (default) keeps the current one.
        ///   - forcedExtension: the extension the entry was stored with, if any (default `nil`).
        /// - Returns: `false` when there is no valid, unexpired entry under `key`.
        /// - Throws: `.cacheError` with `.readOnly` and the like when the file cannot be written.
        @discardableResult
        public func updateMetadata(forKey key: String, httpCacheInfo: HTTPCacheInfo?,
                                   expiration: StorageExpiration? = nil, forcedExtension: String? = nil) throws(AlcedoError) -> Bool {
            let id = name(forKey: key, forcedExtension: forcedExtension)
            try ensureLoaded()
            guard index.entry(id) != nil else { return false }
            let now = config.now()
            let nowMs = DiskTime.milliseconds(now)
            let path = path(for: id)
            let fd: Int32
            switch DiskEntryOpening.open(path, access: O_RDWR) {
            case .opened(let descriptor): fd = descriptor
            case .missing:
                forgetIfMissing(id)
                return false
            case .foreign:
                forget(id)
                return false
            case .failed(let error):
                throw .cacheError(reason: .writeError(path: path, errno: error.code))
            }
            defer { POSIXFile.close(fd) }
            while flock(fd, LOCK_EX) != 0, errno == EINTR {}

            let file: DiskEntryFile
            switch DiskEntryFile.read(fd, includingData: false) {
            case .success(let value): file = value
            case .failure(let error): throw .cacheError(reason: .readFailed(path: path, errno: error.code))
            }
            guard file.hasMagic else {
                forget(id)
                return false
            }
            guard let header = file.header, let current = file.record,
                  DiskEntryRecord.payload(current.payload, hasKey: key),
                  let old = DiskEntryRecord(payload: current.payload) else {
                discard(id, path: path, fd: fd, reason: .corrupt)
                return false
            }
            guard header.expiration > nowMs else {
                discard(id, path: path, fd: fd, reason: .expired)
                return false
            }
            var updated = header
            updated.lastAccess = max(header.lastAccess, nowMs)
            if let expiration {
                updated.expiration = DiskTime.milliseconds(expiration.estimatedExpiration(since: now))
                updated.cacheTime = expiration.extensibleDuration.map { Int64($0 * 1000) } ?? -1
            }
            let payload = DiskEntryRecord(key: key, creation: old.creation, httpCacheInfo: httpCacheInfo).encoded()

            if payload.count <= header.slotCapacity {
                let slot = DiskEntryHeader.encodedSlot(sequence: current.sequence &+ 1, payload: payload)
                let offset = DiskEntryHeader.slotOffset(1 - current.slot, capacity: header.slotCapacity)
                let failure = slot.withUnsafeBytes { POSIXFile.write(fd, $0, at: offset) }
                    ?? updated.mutableBytes(includingExpiration: true).withUnsafeBytes {
                        POSIXFile.write(fd, $0, at: Int(DiskEntryHeader.mutableOffset))
                    }
                if let failure { throw .cacheError(reason: .writeError(path: path, errno: failure.code)) }
                index.touch(id, lastAccess: updated.lastAccess, expiration: updated.expiration)
                return true
            }

            let data: Data
            switch file.data(fd) {
            case .success(let bytes): data = bytes
            case .failure(let error): throw .cacheError(reason: .readFailed(path: path, errno: error.code))
            }
            try Self.checkRecordSize(payload, key: key)
            updated.slotCapacity = DiskEntryHeader.capacity(forPayload: payload.count)
            try write(header: updated, record: payload, data: data, id: id)
            return true
        }

        // MARK: Remove

        /// Removes the entry under `key`, if any. `forcedExtension` is the one the entry was
        /// stored with, if any (default `nil`: the entry with the configured extension).
        /// - Throws: `.cacheError(.removeFailed)` when the file exists but cannot be removed.
        public func remove(forKey key: String, forcedExtension: String? = nil) throws(AlcedoError) {
            try remove(name(forKey: key, forcedExtension: forcedExtension))
        }

        private func remove(_ id: DiskEntryName) throws(AlcedoError) {
            let path = path(for: id)
            let failure: POSIXFile.Errno? = stripe(id).lock.withLock { _ in
                // Only a file Alcedo wrote is removed; anything else under the name stays.
                if case .opened(let fd) = DiskEntryOpening.open(path, access: O_RDONLY) {
                    defer { POSIXFile.close(fd) }
                    if DiskEntryOpening.hasEntryMagic(fd), POSIXFile.sameFile(fd, path), let error = POSIXFile.unlink(path) {
                        return error
                    }
                }
                index.remove(id)
                return nil
            }
            if let failure { throw .cacheError(reason: .removeFailed(path: path, errno: failure.code)) }
        }

        /// Removes every entry and every stale temporary file. Files that are not cache entries
        /// are left alone, and so is the folder.
        /// - Throws: `.cacheError(.cannotListDirectory)` or `.cacheError(.removeFailed)`.
        public func removeAll() throws(AlcedoError) {
            try index.scanGate.withLock { _ throws(AlcedoError) in
                index.beginScan()
                do throws(AlcedoError) {
                    _ = try scanFolder(removeAll: true)
                } catch {
                    index.abortScan()
                    throw error
                }
                index.finishScan([:])
            }
        }

        // MARK: Clean-up

        /// Removes the expired entries and returns their hashes.
        public func removeExpiredValues() throws(AlcedoError) -> [String] {
            try cleanUp(expired: true, sizeExceeded: false).expired
        }

        /// When the folder is over ``Config/sizeLimit``, removes the least recently used
        /// entries down to the low-water mark and returns their hashes.
        public func removeSizeExceededValues() throws(AlcedoError) -> [String] {
            try cleanUp(expired: false, sizeExceeded: true).sizeLimit
        }

        /// Rescans the folder, then removes expired entries, entries over the size limit (least
        /// recently used first), invalid files and stale temporary files, and reports them.
        /// The same removals are sent to the streams of ``removals()``.
        @discardableResult
        public func cleanUp() throws(AlcedoError) -> CleanUpReport {
            try cleanUp(expired: true, sizeExceeded: true)
        }

        private func cleanUp(expired: Bool, sizeExceeded: Bool) throws(AlcedoError) -> CleanUpReport {
            try index.scanGate.withLock { _ throws(AlcedoError) -> CleanUpReport in
                var report = try rescan()
                if expired {
                    let victims = index.expired(at: DiskTime.milliseconds(config.now()))
                    report.expired = removeVictims(victims)
                    broadcast.send(.expired, report.expired)
                }
                if sizeExceeded {
                    report.sizeLimit = evictLeastRecentlyUsed(protecting: nil)
                }
                return report
            }
        }

        /// Brings the folder under the size limit after a store: rescans (to count what other
        /// processes wrote), then removes the least recently used entries, never `protected`.
        private func trim(protecting protected: DiskEntryName) throws(AlcedoError) {
            try index.scanGate.withLock { _ throws(AlcedoError) in
                let limit = config.sizeLimit
                guard limit > 0, index.totalSize > limit else { return }
                _ = try rescan()
                _ = evictLeastRecentlyUsed(protecting: protected)
            }
        }

        /// With the scan gate held: removes least recently used entries down to the low-water
        /// mark when the total is over the limit.
        private func evictLeastRecentlyUsed(protecting protected: DiskEntryName?) -> [String] {
            let config = self.config
            guard config.sizeLimit > 0, index.totalSize > config.sizeLimit else { return [] }
            let removed = removeVictims(index.leastRecentlyUsed(downTo: config.lowWaterMark, protecting: protected))
            broadcast.send(.sizeLimit, removed)
            return removed
        }

        /// Removes each victim whose index entry has not changed since it was chosen (an entry
        /// stored or read meanwhile is spared), and returns the hashes removed.
        private func removeVictims(_ victims: [(DiskEntryName, DiskIndex.Entry)]) -> [String] {
            var removed: [String] = []
            for (id, entry) in victims {
                let done: Bool = stripe(id).lock.withLock { _ in
                    guard index.entry(id) == entry else { return false }
                    guard POSIXFile.unlink(path(for: id)) == nil else { return false }
                    index.remove(id)
                    return true
                }
                if done { removed.append(id.hex) }
            }
            return removed
        }

        // MARK: Size and statistics

        /// The bytes the entries take (headers included), as the index knows them: exact for
        /// this process's writes, refreshed from the folder by every clean-up.
        public func totalSize() throws(AlcedoError) -> Int {
            try ensureLoaded()
            return index.totalSize
        }

        /// Rescans the folder and reports its entries, size and limits.
        public func statistics() throws(AlcedoError) -> Statistics {
            try index.scanGate.withLock { _ throws(AlcedoError) -> Statistics in
                _ = try rescan()
                let config = self.config
                return Statistics(
                    path: directoryPath, entryCount: index.count, totalSize: index.totalSize,
                    expiredCount: index.expired(at: DiskTime.milliseconds(config.now())).count,
                    sizeLimit: max(0, config.sizeLimit), lowWaterMark: max(0, config.sizeLimit) > 0 ? config.lowWaterMark : 0,
                    expiration: config.expiration.description)
            }
        }

        /// A stream of the removals the storage makes on its own (expired, over the size limit,
        /// corrupt). Each call makes a new stream; the newest 1,024 undelivered removals are kept.
        public func removals() -> AsyncStream<Removal> { broadcast.makeStream() }

        // MARK: Scanning

        /// Loads the index with one scan of the folder, on first use.
        private func ensureLoaded() throws(AlcedoError) {
            if index.isLoaded { return }
            try index.scanGate.withLock { _ throws(AlcedoError) in
                if index.isLoaded { return }
                _ = try rescan()
            }
        }

        /// With the scan gate held: rebuilds the index from the folder.
        private func rescan() throws(AlcedoError) -> CleanUpReport {
            index.beginScan()
            let result: (entries: [DiskEntryName: DiskIndex.Entry], report: CleanUpReport)
            do {
                result = try scanFolder(removeAll: false)
            } catch {
                index.abortScan()
                throw error
            }
            index.finishScan(result.entries)
            broadcast.send(.corrupt, result.report.corrupt)
            return result.report
        }

        /// Lists the folder and reads the fixed header of every entry it does not know: one
        /// `openat`, `fstat`, `pread` and `close` per file; an entry whose file has the same
        /// inode, time and size as when this backend last read or wrote it costs one `fstatat`.
        ///
        /// Only Alcedo's own files are ever removed: entries (regular files named like an entry
        /// that start with the entry magic) that are invalid or whose name's tail is no extension
        /// an entry can have, and
        /// stale temporary files (regular files named ``temporaryPrefix``…); with `removeAll`,
        /// every entry too. Anything else (another program's file named with 64 hex digits,
        /// symbolic links, FIFOs, folders) is skipped without being opened for long or removed.
        private func scanFolder(removeAll: Bool) throws(AlcedoError) -> (entries: [DiskEntryName: DiskIndex.Entry], report: CleanUpReport) {
            guard let directory = opendir(directoryPath) else {
                // No folder (or a file where a parent folder should be): no entries yet.
                if errno == ENOENT || errno == ENOTDIR { return ([:], CleanUpReport()) }
                throw .cacheError(reason: .cannotListDirectory(path: directoryPath, errno: errno))
            }
            defer { closedir(directory) }
            let directoryFD = dirfd(directory)
            let config = self.config
            let temporaryCutoff = config.now().timeIntervalSince1970 - config.temporaryFileLifetime
            let temporaryPrefix: [UInt8] = Array(Self.temporaryPrefix.utf8)
            let known = index.snapshot
            var entries: [DiskEntryName: DiskIndex.Entry] = [:]
            entries.reserveCapacity(known.count)
            var report = CleanUpReport()
            var noAccessTime = POSIXFile.noAccessTime
            var fixed = [UInt8](repeating: 0, count: DiskEntryHeader.fixedSize)
            var removeFailure: (String, Int32)?

            while let item = readdir(directory) {
                withUnsafePointer(to: &item.pointee.d_name) { rawName in
                    rawName.withMemoryRebound(to: CChar.self, capacity: 256) { cName in
                        let name = UnsafeBufferPointer(start: UnsafeRawPointer(cName).assumingMemoryBound(to: UInt8.self),
                                                       count: strlen(cName))
                        if name.starts(with: temporaryPrefix) {
                            var info = stat()
                            guard fstatat(directoryFD, cName, &info, AT_SYMLINK_NOFOLLOW) == 0,
                                  (info.st_mode & S_IFMT) == S_IFREG else { return }
                            if POSIXFile.modificationTime(info) < temporaryCutoff, unlinkat(directoryFD, cName, 0) == 0 {
                                report.temporaryFiles += 1
                            }
                            return
                        }
                        guard let hash = CacheKeyHash(hexBytes: name), name.count == 64 || name[64] == UInt8(ascii: ".")
                        else { return }
                        // An entry's name: its key's hash, with the configured extension or the one
                        // forced when it was stored. Another tail makes it no entry of this store.
                        let entryName = DiskEntryName(fileName: name)
                        let ours = !removeAll && entryName != nil
                        if ours, let id = entryName, let old = known[id], let stamp = old.stamp,
                           POSIXFile.stamp(at: directoryFD, cName) == stamp {
                            // Unchanged since this process last read or wrote it: one `fstatat`.
                            entries[id] = old
                            return
                        }
                        guard case .opened(let fd) = DiskEntryOpening.open(at: directoryFD, cName, noAccessTime: &noAccessTime)
                        else { return }
                        defer { POSIXFile.close(fd) }
                        let stamp = POSIXFile.stamp(fd)
                        let bytes: (count: Int, header: DiskEntryHeader?)? = fixed.withUnsafeMutableBytes { buffer in
                            guard let base = buffer.baseAddress, let stamp,
                                  case .success(let count) = POSIXFile.read(fd, into: base, count: buffer.count, at: 0)
                            else { return nil }
                            let head = UnsafeRawBufferPointer(rebasing: buffer[..<count])
                            return (count, DiskEntryHeader(fixedBytes: head, fileSize: stamp.size))
                        }
                        // Not written by Alcedo (no magic), or unreadable: not ours to index or remove.
                        guard let bytes, let stamp, bytes.count >= DiskEntryHeader.magic.count,
                              fixed.starts(with: DiskEntryHeader.magic) else { return }
                        if ours, let id = entryName, let header = bytes.header {
                            entries[id] = DiskIndex.Entry(fileSize: header.fileSize, lastAccess: header.lastAccess,
                                                          expiration: header.expiration, stamp: stamp)
                            return
                        }
                        // Alcedo's file, to be removed: unless the name meanwhile holds another file.
                        guard POSIXFile.stamp(at: directoryFD, cName)?.inode == stamp.inode else { return }
                        if unlinkat(directoryFD, cName, 0) == 0 || errno == ENOENT {
                            if !removeAll { report.corrupt.append(hash.hex) }
                        } else if removeFailure == nil {
                            removeFailure = (String(decoding: name, as: UTF8.self), errno)
                        }
                    }
                }
            }
            if removeAll, let (name, code) = removeFailure {
                throw .cacheError(reason: .removeFailed(path: directoryPath + "/" + name, errno: code))
            }
            return (entries, report)
        }

        // MARK: Testing

        /// Makes the next writes call `hook` with the temporary file's path after writing the
        /// header and half of the data (the crash tests kill the process there).
        @_spi(Testing)
        public func setMidWriteHook(_ hook: (@Sendable (String) -> Void)?) {
            hooks.withLock { $0.midWrite = hook }
        }

        /// Makes the next reads that record an access call `hook` with the entry's path after
        /// reading and verifying the file, before writing the access (the tests replace the
        /// name there).
        @_spi(Testing)
        public func setBeforeAccessWriteHook(_ hook: (@Sendable (String) -> Void)?) {
            hooks.withLock { $0.beforeAccessWrite = hook }
        }
    }
}

private extension Int64 {
    func addingClamped(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    func subtractingClamped(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : difference
    }
}

import Alcedo
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

/// An ``ObjectStore`` in a folder of this machine: one file per entry, named
/// `NAME.alcedo`, holding a header line (``magic``), the entry's metadata as one line of JSON,
/// then its bytes.
///
/// Writes are atomic (a temporary file in the same folder, then `rename`), so a reader never
/// sees half an entry, even after a crash. Listing and deleting touch only files this store
/// writes (a name ending in `.alcedo` whose first bytes are ``magic``): other files in the
/// folder are left alone. Blocking file calls run on Dispatch's global queue, off Swift's
/// cooperative threads.
public struct FolderObjectStore: ObjectStore {
    /// The first line of every entry file.
    public static let magic = "ALCEDO-STORE 1\n"
    /// The extension of entry files.
    public static let fileExtension = ".alcedo"

    /// The folder.
    public let root: URL

    /// Creates a store in `root` (made on the first write when missing).
    public init(root: URL) {
        self.root = root
    }

    public var location: ObjectStoreLocation { .folder(root) }

    private func path(_ name: String) -> String {
        root.appendingPathComponent(name + Self.fileExtension).path
    }

    public func read(_ name: String) async throws -> SharedCacheEntry? {
        let path = self.path(name)
        return try await Self.offload { () throws(ObjectStoreError) -> SharedCacheEntry? in
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
                throw .fileSystem(path: path, message: "\(error)")
            }
            return Self.decode(data)
        }
    }

    public func write(_ entry: SharedCacheEntry, as name: String) async throws {
        let path = self.path(name)
        let file = Self.encode(entry)
        try await Self.offload { () throws(ObjectStoreError) in
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw .fileSystem(path: folder, message: "\(error)")
            }
            let temporary = folder + "/." + UUID().uuidString + ".tmp"
            guard FileManager.default.createFile(atPath: temporary, contents: file) else {
                throw .fileSystem(path: temporary, message: "could not be written (disk full or read-only?)")
            }
            guard rename(temporary, path) == 0 else {
                let message = String(cString: strerror(errno))
                unlink(temporary)
                throw .fileSystem(path: path, message: message)
            }
        }
    }

    public func list(prefix: String, limit: Int?) async throws -> [ObjectStoreListing] {
        let root = self.root.path
        return try await Self.offload { () throws(ObjectStoreError) -> [ObjectStoreListing] in
            guard FileManager.default.fileExists(atPath: root) else { return [] }
            let all: [String]
            do { all = try FileManager.default.subpathsOfDirectory(atPath: root) } catch {
                throw .fileSystem(path: root, message: "\(error)")
            }
            var found: [ObjectStoreListing] = []
            for relative in all.sorted() where relative.hasSuffix(Self.fileExtension) {
                let name = String(relative.dropLast(Self.fileExtension.count))
                guard name.hasPrefix(prefix), Self.isEntryFile(root + "/" + relative) else { continue }
                let attributes = (try? FileManager.default.attributesOfItem(atPath: root + "/" + relative)) ?? [:]
                let size = (attributes[.size] as? Int) ?? (attributes[.size] as? UInt64).map { Int($0) } ?? 0
                let modified = (attributes[.modificationDate] as? Date).map { String(Int($0.timeIntervalSince1970)) }
                found.append(ObjectStoreListing(name: name, size: size, lastModified: modified))
                if let limit, found.count >= limit { break }
            }
            return found
        }
    }

    public func delete(_ names: [String]) async throws -> Int {
        let paths = names.map(path)
        return try await Self.offload { () throws(ObjectStoreError) -> Int in
            var deleted = 0
            for path in paths where Self.isEntryFile(path) {
                if unlink(path) == 0 { deleted += 1 }
            }
            return deleted
        }
    }

    // MARK: The file format

    /// The file of `entry`: ``magic``, its metadata as one JSON line, its bytes.
    static func encode(_ entry: SharedCacheEntry) -> Data {
        var file = Data(magic.utf8)
        file.append((try? JSONEncoder().encode(entry.metadata)) ?? Data("{}".utf8))
        file.append(UInt8(ascii: "\n"))
        file.append(entry.data)
        return file
    }

    /// The entry in a file's bytes, or `nil` when they are not an entry file.
    static func decode(_ file: Data) -> SharedCacheEntry? {
        let header = Data(magic.utf8)
        guard file.starts(with: header) else { return nil }
        let rest = file.dropFirst(header.count)
        guard let newline = rest.firstIndex(of: UInt8(ascii: "\n")),
              let metadata = try? JSONDecoder().decode(SharedCacheEntry.Metadata.self, from: Data(rest[..<newline])) else { return nil }
        return SharedCacheEntry(data: Data(rest[(newline + 1)...]), metadata: metadata)
    }

    /// Whether the file at `path` starts with ``magic`` (a file this store wrote).
    static func isEntryFile(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: magic.utf8.count)
        let count = buffer.withUnsafeMutableBytes { readBytes(descriptor, $0.baseAddress, $0.count) }
        return count == buffer.count && buffer.elementsEqual(magic.utf8)
    }

    /// Runs blocking file work on Dispatch's global queue.
    static func offload<T: Sendable>(_ work: @escaping @Sendable () throws(ObjectStoreError) -> T) async throws(ObjectStoreError) -> T {
        let result: Result<T, ObjectStoreError> = await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .utility).async {
                continuation.resume(returning: Result { () throws(ObjectStoreError) -> T in try work() })
            }
        }
        return try result.get()
    }
}

/// POSIX `read`, named apart from ``FolderObjectStore/read(_:)``.
private func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

import Foundation
import Logging
import Synchronization
import Testing
@testable import Alcedo

/// A log handler that keeps every message, for the tests.
struct CapturingLogHandler: LogHandler {
    final class Store: Sendable {
        let entries = Mutex<[(Logger.Level, String)]>([])
        var all: [(Logger.Level, String)] { entries.withLock { $0 } }
    }

    let store: Store
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        store.entries.withLock { $0.append((event.level, event.message.description)) }
    }
}

@Suite("ImageCache disk failures")
struct ImageCacheDiskFailureTests {
    @Test("a cache folder that is a regular file: stores fail, the first failure is logged as a warning once, memory keeps working",
          arguments: ["file", "dangling"])
    func unusableFolderIsLoggedOnce(kind: String) async throws {
        let folder = try TemporaryDirectory()
        let cacheURL = folder.url.appendingPathComponent("cache")
        if kind == "file" {
            try Data("x".utf8).write(to: cacheURL)
        } else {
            try FileManager.default.createSymbolicLink(atPath: cacheURL.path, withDestinationPath: folder.url.appendingPathComponent("gone/away").path)
        }
        let store = CapturingLogHandler.Store()
        let cache = ImageCache(memoryStorage: MemoryStorage.Backend(config: MemoryStorage.Config()),
                               diskStorage: DiskStorage.EntryStore(config: .init(folderURL: cacheURL)),
                               logger: Logger(label: "test", factory: { _ in CapturingLogHandler(store: store) }))
        #expect(throws: AlcedoError.self) { try cache.diskStorage.prepareFolder() }
        let image = AlcedoImage(width: 2, height: 2, pixels: [UInt8](repeating: 9, count: 16))
        for index in 0..<3 {
            await #expect(throws: AlcedoError.self) { try await cache.store(image, forKey: "k\(index)") }
            await #expect(throws: AlcedoError.self) { try await cache.storeToDisk(Data("x".utf8), forKey: "d\(index)") }
            #expect(cache.retrieveImageInMemoryCache(forKey: "k\(index)") != nil)
        }
        let warnings = store.all.filter { $0.0 == .warning }
        #expect(warnings.count == 1, "\(store.all)")
        #expect(warnings.first?.1.contains(cacheURL.path) == true)
        #expect(store.all.filter { $0.0 == .debug }.count == 5)
    }

    @Test("prepareFolder makes a missing folder, and says when it cannot")
    func prepareFolder() throws {
        let folder = try TemporaryDirectory()
        let nested = folder.url.appendingPathComponent("a/b/c")
        try DiskStorage.EntryStore(config: .init(folderURL: nested)).prepareFolder()
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: nested.path, isDirectory: &isDirectory) && isDirectory.boolValue)
        let file = folder.url.appendingPathComponent("file")
        try Data().write(to: file)
        let error = #expect(throws: AlcedoError.self) { try DiskStorage.EntryStore(config: .init(folderURL: file)).prepareFolder() }
        guard case .cacheError(.cannotCreateDirectory(let path, _)) = error else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(path == file.path)
    }
}

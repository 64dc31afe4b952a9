import Foundation
import Testing
@testable import Alcedo
#if canImport(Glibc)
import Glibc
#endif

/// `local:///path` inside a root folder: files served with validators and 304s, and every
/// way out of the root refused without blocking.
@Suite("Local folder sources")
struct LocalFolderImageDataLoaderTests {
    /// A root with `a.png`, `dir/b b é.png`, a folder, a FIFO, a link inside and links out,
    /// and a `secret.png` beside the root; removed after `body`.
    static func withRoot<T>(_ body: (URL, LocalFolderImageDataLoader, Data) async throws -> T) async throws -> T {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-local-\(UUID().uuidString)")
        let root = base.appendingPathComponent("root")
        defer { try? FileManager.default.removeItem(at: base) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("dir/sub"), withIntermediateDirectories: true)
        let png = try ImageCodecRegistry.shared.encode(AlcedoImage(width: 6, height: 4, pixels: [UInt8](repeating: 200, count: 6 * 4 * 4)), as: .png)
        try png.write(to: root.appendingPathComponent("a.png"))
        try png.write(to: root.appendingPathComponent("dir/b b é.png"))
        try png.write(to: base.appendingPathComponent("secret.png"))
        #expect(mkfifo(root.appendingPathComponent("pipe.png").path, 0o644) == 0)
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("inside.png").path, withDestinationPath: "dir/b b é.png")
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("out.png").path, withDestinationPath: "../secret.png")
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("outdir").path, withDestinationPath: base.path)
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("null.png").path, withDestinationPath: "/dev/null")
        return try await body(root, LocalFolderImageDataLoader(root: root), png)
    }

    static func load(_ loader: LocalFolderImageDataLoader, _ text: String, headers: HTTPHeaderFields = [:]) async throws -> (Int, HTTPHeaderFields, Data) {
        let response = try await loader.load(DownloadRequest(url: URL(string: text)!, headers: headers))
        var body = Data()
        for try await chunk in response.body { body.append(chunk) }
        return (response.statusCode, response.headers, body)
    }

    @Test func filesAreServedWithValidatorsAnd304s() async throws {
        try await Self.withRoot { root, loader, png in
            let (status, headers, body) = try await Self.load(loader, "local:///a.png")
            #expect(status == 200)
            #expect(body == png)
            #expect(headers["Content-Length"] == String(png.count))
            #expect(headers["Content-Type"] == "image/png")
            let etag = try #require(headers["ETag"])
            let modified = try #require(headers["Last-Modified"])
            #expect(try await Self.load(loader, "local:///a.png", headers: ["If-None-Match": etag]).0 == 304)
            #expect(try await Self.load(loader, "local:///a.png", headers: ["If-None-Match": "W/" + etag]).0 == 304)
            #expect(try await Self.load(loader, "local:///a.png", headers: ["If-Modified-Since": modified]).0 == 304)
            #expect(try await Self.load(loader, "local:///a.png", headers: ["If-None-Match": "\"other\""]).0 == 200)
            // Spaces and non-ASCII letters, percent-encoded; a link that stays inside; `.` segments.
            #expect(try await Self.load(loader, "local:///dir/b%20b%20%C3%A9.png").2 == png)
            #expect(try await Self.load(loader, "local:///inside.png").2 == png)
            #expect(try await Self.load(loader, "local:///./dir/./b%20b%20%C3%A9.png").0 == 200)
            // A changed file gets a new ETag.
            try png.dropLast(1).write(to: root.appendingPathComponent("a.png"))
            let changed = try await Self.load(loader, "local:///a.png", headers: ["If-None-Match": etag])
            #expect(changed.0 == 200 && changed.1["ETag"] != etag && changed.2.count == png.count - 1)
        }
    }

    @Test func escapesAreRefusedAndSpecialFilesAreNotFound() async throws {
        try await Self.withRoot { _, loader, _ in
            for escape in ["local:///../secret.png", "local:///%2e%2e/secret.png", "local:///dir/%2E%2E/%2e%2e/secret.png",
                           "local:///dir%2F..%2F..%2Fsecret.png", "local:///out.png", "local:///outdir/secret.png", "local:///null.png",
                           // An encoded slash followed by a combining mark (one character with it).
                           "local:///..%2F%CC%81secret.png", "local:///dir%2F%CC%81..%2F%CC%81..%2F%CC%81secret.png"] {
                do {
                    let (status, _, _) = try await Self.load(loader, escape)
                    Issue.record("\(escape) answered \(status)")
                } catch {
                    guard case .requestError(.invalidURL(.sourceNotAllowed))? = error as? AlcedoError else {
                        Issue.record("\(escape): expected sourceNotAllowed, got \(error)")
                        continue
                    }
                }
            }
            // A FIFO answers at once (no writer ever comes), as does a folder, a missing file, a device.
            for notFound in ["local:///pipe.png", "local:///dir", "local:///dir/sub/", "local:///missing.png", "local:///a.png/x"] {
                let status = try await Self.load(loader, notFound).0
                #expect(status == 404, "\(notFound)")
            }
            // An absolute path is read inside the root: local:///etc/passwd is ROOT/etc/passwd.
            let passwd = try await Self.load(loader, "local:///etc/passwd").0
            #expect(passwd == 404)
            await #expect(throws: AlcedoError.self) { _ = try await Self.load(loader, "local://host/a.png") }
            await #expect(throws: AlcedoError.self) { _ = try await Self.load(loader, "local:///") }
        }
        // A device inside a root (/dev as the root): 404 without opening it.
        let devices = LocalFolderImageDataLoader(root: URL(fileURLWithPath: "/dev"))
        #expect(try await Self.load(devices, "local:///zero").0 == 404)
    }

    @Test func throughTheManagerWithRevalidationAndTheByteLimit() async throws {
        try await Self.withRoot { root, loader, png in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-local-cache-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let downloader = ImageDownloader(name: "local", loader: CompositeImageDataLoader([HTTPImageLoader(), loader]))
            let cache = ImageCache(memoryStorage: MemoryStorage.Backend(config: MemoryStorage.Config(totalCostLimit: 1 << 20)),
                                   diskStorage: DiskStorage.EntryStore(config: DiskStorage.EntryStore.Config(folderURL: folder)))
            let manager = ImageManager(downloader: downloader, cache: cache, defaultOptions: [.waitForCache, .respectHTTPFreshness])
            let url = try #require(URL(string: "local:///dir/b%20b%20%C3%A9.png"))
            let first = try await manager.retrieveImage(with: url)
            #expect(first.cacheType == .none && first.image.width == 6)
            cache.clearMemoryCache()
            // no-cache: checked on use; the unchanged file answers 304 and the disk entry is used.
            let second = try await manager.retrieveImage(with: url)
            #expect(second.cacheType == .disk)
            #expect(second.response?.statusCode == 304)
            // Without a local loader the scheme is an invalid URL; file:// keeps its own rule.
            await #expect(throws: AlcedoError.self) { _ = try await ImageManager(cache: cache).retrieveImage(with: url) }
            // The downloader's byte limit holds for local files too.
            let small = ImageDownloader(name: "local-small", configuration: .init(maximumBodySize: png.count - 1), loader: loader)
            await #expect(throws: AlcedoError.self) {
                _ = try await small.downloadData(with: URL(string: "local:///a.png")!)
            }
            await downloader.shutdown()
            _ = root
        }
    }
}

import Foundation
import Synchronization
import Testing
@testable import Alcedo

/// A provider that counts its loads and waits for ``open()`` before answering.
final class GatedProvider: ImageDataProvider {
    let cacheKey: String
    let bytes: Data
    let loads = Counter()
    private let isOpen = Mutex(false)

    init(cacheKey: String, bytes: Data) {
        self.cacheKey = cacheKey
        self.bytes = bytes
    }

    func open() { isOpen.withLock { $0 = true } }

    func data() async throws(AlcedoError) -> Data {
        loads.increment()
        while !isOpen.withLock({ $0 }) {
            do { try await Task.sleep(for: .milliseconds(2)) } catch { throw .requestError(reason: .cancelled) }
        }
        return bytes
    }
}

@Suite("Sources, resources and data providers", .serialized)
struct SourceTests {
    @Test func cacheKeyRulesStripTokens() {
        let url = URL(string: "https://cdn.example.com/a/b.jpg?size=2&token=abc&expires=99#frag")!
        #expect(CacheKeyRule.absoluteString.cacheKey(for: url) == url.absoluteString)
        #expect(CacheKeyRule.removingQuery.cacheKey(for: url) == "https://cdn.example.com/a/b.jpg")
        #expect(CacheKeyRule.removingQueryItems(named: ["token", "expires"]).cacheKey(for: url)
            == "https://cdn.example.com/a/b.jpg?size=2#frag")
        let onlyToken = URL(string: "https://cdn.example.com/c.jpg?token=1")!
        #expect(CacheKeyRule.removingQueryItems(named: ["token"]).cacheKey(for: onlyToken) == "https://cdn.example.com/c.jpg")
        #expect(CacheKeyRule { $0.lastPathComponent }.cacheKey(for: url) == "b.jpg")
    }

    @Test func globalRuleMakesSignedURLsShareOneEntry() async throws {
        try await withPipeline { h in
            h.server.route("/signed.jpg", .ok(TestImages.jpeg()))
            CacheKeyRule.global = .removingQueryItems(named: ["token"])
            defer { CacheKeyRule.global = .absoluteString }
            let first = URL(string: h.server.url("/signed.jpg").absoluteString + "?token=one")!
            let second = URL(string: h.server.url("/signed.jpg").absoluteString + "?token=two")!
            #expect(first.cacheKey == second.cacheKey)
            _ = try await h.manager.retrieveImage(with: first)
            let hit = try await h.manager.retrieveImage(with: second)
            #expect(hit.cacheType == .memory)
            #expect(h.server.requestCount("/signed.jpg") == 1)
        }
    }

    @Test func imageResourceNamesItsKey() async throws {
        try await withPipeline { h in
            h.server.route("/r.jpg", .ok(TestImages.jpeg()))
            let a = ImageResource(downloadURL: URL(string: h.server.url("/r.jpg").absoluteString + "?sig=1")!, cacheKey: "avatar-42")
            let b = ImageResource(downloadURL: URL(string: h.server.url("/r.jpg").absoluteString + "?sig=2")!, cacheKey: "avatar-42")
            _ = try await h.manager.retrieveImage(with: a, options: [.waitForCache])
            #expect(h.cache.imageCachedType(forKey: "avatar-42") == .memory)
            let hit = try await h.manager.retrieveImage(with: b)
            #expect(hit.cacheType == .memory)
            #expect(h.server.requests("/r.jpg").map(\.uri).count == 1)
            #expect(ImageResource(downloadURL: h.server.url("/r.jpg")).cacheKey == h.server.url("/r.jpg").absoluteString)
        }
    }

    @Test func fileURLsAreReadFromDiskWhenAllowed() async throws {
        try await withPipeline { h in
            let file = h.folder.url.appendingPathComponent("local.jpg")
            try TestImages.jpeg(width: 14, height: 7).write(to: file)
            let result = try await h.manager.retrieveImage(with: file, options: [.waitForCache, .allowLocalFiles])
            guard case .provider(let provider) = result.source else {
                Issue.record("an allowed file URL should be read by a provider, got \(result.source)")
                return
            }
            #expect(provider is LocalFileImageDataProvider)
            #expect(result.image.pixelSize == PixelSize(width: 14, height: 7))
            #expect(result.cacheType == .none)
            #expect(result.response == nil)
            #expect(h.cache.imageCachedType(forKey: file.cacheKey) == .memory)
            #expect(h.server.requestLog.isEmpty)
        }
    }

    @Test func localFileFailuresAreTyped() async throws {
        try await withPipeline { h in
            let missing = h.folder.url.appendingPathComponent("missing.jpg")
            let missingError = await #expect(throws: AlcedoError.self) {
                try await h.manager.retrieveImage(with: missing, options: [.allowLocalFiles])
            }
            guard case .fileNotFound? = missingError?.settingReason?.dataProviderFailure else {
                Issue.record("unexpected \(String(describing: missingError))")
                return
            }
            let folderError = await #expect(throws: AlcedoError.self) {
                try await h.manager.retrieveImage(with: .provider(LocalFileImageDataProvider(fileURL: h.folder.url)))
            }
            guard case .notARegularFile? = folderError?.settingReason?.dataProviderFailure else {
                Issue.record("unexpected \(String(describing: folderError))")
                return
            }
            let big = h.folder.url.appendingPathComponent("big.jpg")
            try TestImages.jpeg().write(to: big)
            let bigError = await #expect(throws: AlcedoError.self) {
                try await h.manager.retrieveImage(with: .provider(LocalFileImageDataProvider(fileURL: big, maximumFileSize: 10)))
            }
            guard case .fileTooLarge(_, _, 10)? = bigError?.settingReason?.dataProviderFailure else {
                Issue.record("unexpected \(String(describing: bigError))")
                return
            }
            let text = h.folder.url.appendingPathComponent("text.jpg")
            try Data("plain text".utf8).write(to: text)
            let textError = await #expect(throws: AlcedoError.self) {
                try await h.manager.retrieveImage(with: text, options: [.allowLocalFiles])
            }
            guard case .decodingFailed? = textError?.processorCause else {
                Issue.record("unexpected \(String(describing: textError))")
                return
            }
        }
    }

    @Test func base64ProviderAcceptsPlainAndDataURIs() async throws {
        try await withPipeline { h in
            let jpeg = TestImages.jpeg(width: 6, height: 5)
            let base64 = jpeg.base64EncodedString()
            let plain = try await h.manager.retrieveImage(with: .provider(Base64ImageDataProvider(base64String: base64, cacheKey: "b64")))
            #expect(plain.image.pixelSize == PixelSize(width: 6, height: 5))
            let wrapped = stride(from: 0, to: base64.count, by: 60).map { offset -> String in
                let start = base64.index(base64.startIndex, offsetBy: offset)
                return String(base64[start..<(base64.index(start, offsetBy: 60, limitedBy: base64.endIndex) ?? base64.endIndex)])
            }.joined(separator: "\n")
            let unpadded = "data:image/jpeg;base64," + wrapped.replacingOccurrences(of: "=", with: "")
            let uri = try await h.manager.retrieveImage(with: .provider(Base64ImageDataProvider(base64String: unpadded, cacheKey: "uri")))
            #expect(uri.image == plain.image)
        }
    }

    @Test(arguments: ["", "!!!!", "ab=c", "data:image/png,abcd", "data:image/png;base64", "@@@@====", String(repeating: "A", count: 5)])
    func badBase64IsATypedError(_ text: String) async throws {
        let provider = Base64ImageDataProvider(base64String: text, cacheKey: "bad")
        let error = await #expect(throws: AlcedoError.self) { try await provider.data() }
        guard case .invalidBase64(let key, let length)? = error?.settingReason?.dataProviderFailure else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(key == "bad")
        #expect(length == text.count)
    }

    @Test func rawDataProviderDecodesAndCaches() async throws {
        try await withPipeline { h in
            let webp = TestImages.webp(width: 9, height: 3)
            let source = Source.provider(RawImageDataProvider(data: webp, cacheKey: "raw-1"))
            #expect(source.cacheKey == "raw-1")
            #expect(source.url == nil)
            let result = try await h.manager.retrieveImage(with: source, options: [.waitForCache])
            #expect(result.image.pixelSize == PixelSize(width: 9, height: 3))
            #expect(result.originalData == webp)
            h.cache.clearMemoryCache()
            let hit = try await h.manager.retrieveImage(with: source)
            #expect(hit.cacheType == .disk)
        }
    }

    @Test func providerLoadsAreCoalesced() async throws {
        try await withPipeline { h in
            let provider = GatedProvider(cacheKey: "gated", bytes: TestImages.jpeg())
            let runs = Counter()
            let processor = InvertingCountingProcessor(name: "gated", runs: runs)
            let manager = h.manager
            let tasks = (0..<10).map { _ in
                Task { try await manager.retrieveImage(with: .provider(provider), options: [.processor(processor)]) }
            }
            #expect(await eventually { manager.pipelines.inFlightCount == 1 && provider.loads.count == 1 })
            let key = LoadRequest(source: .provider(provider), options: manager.parsedOptions([.processor(processor)]),
                                  manager: manager).pipelineKey
            #expect(await eventually { manager.pipelines.callerCount(key) == 10 })
            provider.open()
            for task in tasks { _ = try await task.value }
            #expect(provider.loads.count == 1)
            #expect(runs.count == 1)
        }
    }

    @Test func customProviderErrorsPassThrough() async throws {
        struct Failing: ImageDataProvider {
            var cacheKey: String { "failing" }
            struct NoSuchRecord: Error {}
            func data() async throws(AlcedoError) -> Data {
                throw .imageSettingError(reason: .dataProviderError(provider: self, error: NoSuchRecord()))
            }
        }
        try await withPipeline { h in
            let error = await #expect(throws: AlcedoError.self) { try await h.manager.retrieveImage(with: .provider(Failing())) }
            guard case .dataProviderError(let provider, _ as Failing.NoSuchRecord) = error?.settingReason, provider.cacheKey == "failing" else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
        }
    }
}

import Foundation
import Testing
@testable import Alcedo

/// `file://` URLs are read only when the caller says so.
@Suite("Local file safety")
struct LocalFileSafetyTests {
    static func error(_ body: () async throws(AlcedoError) -> Void) async -> AlcedoError? {
        do throws(AlcedoError) {
            try await body()
            return nil
        } catch {
            return error
        }
    }

    @Test func fileURLsAreRefusedWithoutTheOptionAndRevealNothing() async throws {
        try await withPipeline { h in
            let existing = h.folder.url.appendingPathComponent("secret.jpg")
            try TestImages.jpeg().write(to: existing)
            let missing = h.folder.url.appendingPathComponent("missing.jpg")
            let folder = h.folder.url

            var descriptions: [String] = []
            for url in [existing, missing, folder] {
                let failure = await Self.error { () async throws(AlcedoError) in _ = try await h.manager.retrieveImage(with: url) }
                guard case .requestError(.invalidURL(.localFileNotAllowed(let refused)))? = failure else {
                    Issue.record("\(url.path) gave \(String(describing: failure))")
                    continue
                }
                #expect(refused == url)
                descriptions.append(failure!.description.replacingOccurrences(of: url.absoluteString, with: "<url>"))
            }
            // The same words whether the path is a file, nothing or a folder.
            #expect(Set(descriptions).count == 1, "\(descriptions)")
            // An ImageResource, the KF builder, the callback form and a prefetcher are refused too.
            let resource = ImageResource(downloadURL: existing, cacheKey: "k")
            let viaResource = await Self.error { () async throws(AlcedoError) in _ = try await h.manager.retrieveImage(with: resource) }
            #expect(viaResource?.description == descriptions.first?.replacingOccurrences(of: "<url>", with: existing.absoluteString))
            let viaKF = await Self.error { () async throws(AlcedoError) in _ = try await KF.url(existing).manager(h.manager).retrieve() }
            guard case .requestError(.invalidURL(.localFileNotAllowed))? = viaKF else {
                Issue.record("KF gave \(String(describing: viaKF))")
                return
            }
            let prefetched = await ImagePrefetcher(urls: [existing], manager: h.manager, completion: nil).prefetch()
            guard case .requestError(.invalidURL(.localFileNotAllowed))? = prefetched.failures.first?.error else {
                Issue.record("the prefetcher gave \(prefetched.failures)")
                return
            }
        }
    }

    @Test func aCachedFileIsNotServedWithoutTheOption() async throws {
        try await withPipeline { h in
            let file = h.folder.url.appendingPathComponent("cached.jpg")
            try TestImages.jpeg().write(to: file)
            _ = try await h.manager.retrieveImage(with: file, options: [.allowLocalFiles, .waitForCache])
            #expect(h.cache.isCached(forKey: file.cacheKey))
            let failure = await Self.error { () async throws(AlcedoError) in _ = try await h.manager.retrieveImage(with: file) }
            guard case .requestError(.invalidURL(.localFileNotAllowed))? = failure else {
                Issue.record("a cached file URL gave \(String(describing: failure))")
                return
            }
        }
    }

    @Test func theProviderAndTheOptionReadFiles() async throws {
        try await withPipeline { h in
            let file = h.folder.url.appendingPathComponent("ok.jpg")
            try TestImages.jpeg(width: 9, height: 4).write(to: file)
            let viaProvider = try await h.manager.retrieveImage(with: .provider(LocalFileImageDataProvider(fileURL: file)))
            #expect(viaProvider.image.pixelSize == PixelSize(width: 9, height: 4))
            let viaOption = try await h.manager.retrieveImage(with: file, options: [.allowLocalFiles, .forceRefresh])
            #expect(viaOption.image.pixelSize == PixelSize(width: 9, height: 4))
            let defaults = ImageManager(downloader: h.downloader, cache: h.cache, defaultOptions: [.allowLocalFiles])
            #expect(try await defaults.retrieveImage(with: file).image.pixelSize == PixelSize(width: 9, height: 4))
        }
    }

    @Test func otherSchemesAreInvalidURLsBeforeAnyCacheLookup() async throws {
        try await withPipeline { h in
            let url = URL(string: "ftp://example.com/a.jpg")!
            let failure = await Self.error { () async throws(AlcedoError) in _ = try await h.manager.retrieveImage(with: url) }
            guard case .requestError(.invalidURL(.malformed("ftp://example.com/a.jpg")))? = failure else {
                Issue.record("ftp gave \(String(describing: failure))")
                return
            }
        }
    }
}

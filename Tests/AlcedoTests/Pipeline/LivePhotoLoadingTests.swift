import Foundation
import Testing
@testable import Alcedo

/// The manager's Live Photo calls: the files of a Live Photo loaded once into the disk cache,
/// each under the extension of its type.
@Suite("Live Photo loading")
struct LivePhotoLoadingTests {
    /// The first bytes of a HEIC file and of a QuickTime movie: an `ftyp` box and its brand.
    static let heicHead = Data([0, 0, 0, 24]) + Data("ftypheic".utf8) + Data(count: 12)
    static let movHead = Data([0, 0, 0, 20]) + Data("ftypqt  ".utf8) + Data(count: 8)

    @Test func aFileTypeIsGuessedFromTheSignatureOnlyWhenNotKnown() {
        typealias FileType = LivePhotoResource.FileType
        #expect(FileType.other("").determinedFileExtension(Self.heicHead) == "heic")
        #expect(FileType.other("").determinedFileExtension(Self.movHead) == "mov")
        #expect(FileType.other("").determinedFileExtension(Data("not a media file".utf8)) == nil)
        #expect(FileType.other("").determinedFileExtension(Data("ftyp".utf8)) == nil)
        #expect(FileType.mov.determinedFileExtension(Self.heicHead) == "mov")
        #expect(FileType.other("bin").determinedFileExtension(Self.heicHead) == "bin")
    }

    @Test func filesAreLoadedOnceAndNamedByType() async throws {
        try await withPipeline { h in
            h.server.route("/still", .ok(Self.heicHead))
            let video = RawImageDataProvider(data: Self.movHead, cacheKey: "video")
            let source = LivePhotoSource([
                LivePhotoResource(downloadURL: h.server.url("/still")),
                LivePhotoResource(source: .provider(video), fileType: .mov),
            ])
            let first = try await h.manager.retrieveLivePhoto(with: source)
            #expect(first.cacheType == .none)
            #expect(first.fileURLs.map(\.pathExtension) == ["heic", "mov"])
            #expect(first.data() == [Self.heicHead, Self.movHead])
            for url in first.fileURLs { #expect(FileManager.default.fileExists(atPath: url.path)) }

            let again = try await h.manager.retrieveLivePhoto(with: source)
            #expect(again.cacheType == .disk)
            #expect(again.fileURLs == first.fileURLs)
            #expect(again.data().isEmpty)
            #expect(h.server.requestCount("/still") == 1)

            let refreshed = try await h.manager.retrieveLivePhoto(with: source, options: [.forceRefresh])
            #expect(refreshed.cacheType == .none)
            #expect(h.server.requestCount("/still") == 2)
        }
    }

    @Test func aFailedLoadIsThrownAndNothingIsFound() async throws {
        try await withPipeline { h in
            h.server.route("/gone.mov", .status(404))
            h.server.route("/unknown", .ok(Data("neither HEIC nor QuickTime".utf8)))
            let gone = LivePhotoSource(urls: [h.server.url("/gone.mov")])
            let error = await #expect(throws: AlcedoError.self) { try await h.manager.retrieveLivePhoto(with: gone) }
            #expect(error?.isInvalidResponseStatusCode(404) == true)

            // Stored without an extension, so not found as a Live Photo file.
            let unknown = LivePhotoSource(urls: [h.server.url("/unknown")])
            let missing = await #expect(throws: AlcedoError.self) { try await h.manager.retrieveLivePhoto(with: unknown) }
            guard case .cacheError(.missingLivePhotoResourceOnDisk)? = missing else {
                Issue.record("unexpected \(String(describing: missing))")
                return
            }
        }
    }
}

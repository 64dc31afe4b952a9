import Foundation
import Testing
@testable import Alcedo

/// Kingfisher's options without a screen, `.downloadPriority(Float)` and `setValue(_:forHTTPHeaderField:)`.
@Suite("Kingfisher options")
struct KingfisherOptionsTests {
    @Test func screenOptionsAreAcceptedAndChangeNothing() async throws {
        try await withPipeline { h in
            h.server.route("/a.jpg", .ok(TestImages.jpeg(width: 12, height: 8)))
            let pasted: AlcedoOptionsInfo = [
                .transition(.fade(0.2)), .forceTransition, .backgroundDecode, .preloadAllAnimationData,
                .loadDiskFileSynchronously, .keepCurrentImageWhileLoading, .cacheOriginalImage,
            ]
            let parsed = AlcedoParsedOptionsInfo(pasted)
            #expect(parsed.transition == .fade(0.2))
            #expect(parsed.forceTransition && parsed.backgroundDecode && parsed.preloadAllAnimationData && parsed.loadDiskFileSynchronously)
            let plain = try await h.manager.retrieveImage(with: h.server.url("/a.jpg"), options: [.forceRefresh])
            let withOptions = try await h.manager.retrieveImage(with: h.server.url("/a.jpg"), options: pasted + [.forceRefresh])
            #expect(withOptions.image == plain.image)
            #expect(withOptions.source.cacheKey == plain.source.cacheKey)
        }
    }

    @Test func downloadPriorityTakesURLSessionTaskFloats() {
        func priority(_ item: AlcedoOptionsInfoItem) -> DownloadPriority { AlcedoParsedOptionsInfo([item]).downloadPriority }
        let low: Float = 0.25, normal: Float = 0.5, high: Float = 0.75
        #expect(priority(.downloadPriority(low)) == .low)
        #expect(priority(.downloadPriority(normal)) == .normal)
        #expect(priority(.downloadPriority(high)) == .high)
        #expect(priority(.downloadPriority(1.0)) == .high)
        #expect(priority(.downloadPriority(0)) == .low)
        #expect(priority(.downloadPriority(.high)) == .high)
    }

    @Test func requestModifiersUseURLRequestsHeaderSpelling() async throws {
        try await withPipeline { h in
            h.server.route("/auth.jpg", .ok(TestImages.jpeg()))
            let modifier = AnyModifier { request in
                var request = request
                request.setValue("Bearer token-1", forHTTPHeaderField: "Authorization")
                request.addValue("a", forHTTPHeaderField: "X-Tag")
                request.addValue("b", forHTTPHeaderField: "X-Tag")
                request.setValue(nil, forHTTPHeaderField: "User-Agent")
                return request
            }
            _ = try await h.manager.retrieveImage(with: h.server.url("/auth.jpg"), options: [.requestModifier(modifier)])
            let headers = try #require(h.server.requests("/auth.jpg").first?.headers)
            #expect(headers["Authorization"] == ["Bearer token-1"])
            #expect(headers["X-Tag"] == ["a", "b"])
            #expect(headers["User-Agent"].isEmpty)

            var request = DownloadRequest(url: h.server.url("/x"))
            request.setValue("1", forHTTPHeaderField: "x-one")
            #expect(request.value(forHTTPHeaderField: "X-One") == "1")
            #expect(request.allHTTPHeaderFields == ["x-one": "1"])
            request.allHTTPHeaderFields = ["A": "b"]
            #expect(request.headers["a"] == "b")
        }
    }
}

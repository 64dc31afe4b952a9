import Foundation
import Testing

/// `alcedo serve --result-cache-bytes` and `--memory-cache-bytes`, run as a user runs them.
@Suite("alcedo serve memory cache sizes")
struct ServeCacheSizeFlagsTests {
    /// Starts `alcedo serve` with `arguments`, asks for one variant twice and returns /metrics.
    func metricsAfterTwoRequests(_ arguments: [String], environment: [String: String] = [:]) async throws -> String {
        try await ServeProcess.withJPEGOrigin(arguments, environment: environment, options: "w:32") { server, path in
            let client = OneShotClient()
            for _ in 0..<2 { #expect(try await client.get(server.baseURL + path + "@jpg").status == 200) }
            return String(decoding: try await client.get(server.baseURL + "/metrics").body, as: UTF8.self)
        }
    }

    @Test func zeroKeepsNothingInMemorySoTheRepeatIsADiskHit() async throws {
        let defaults = try await metricsAfterTwoRequests([])
        #expect(defaults.contains("alcedo_cache_hits_total{tier=\"result\"} 1"), "\(defaults)")

        let none = try await metricsAfterTwoRequests(["--result-cache-bytes", "0"])
        #expect(none.contains("alcedo_cache_hits_total{tier=\"disk\"} 1"), "\(none)")
        #expect(!none.contains("tier=\"result\""))
        #expect(!none.contains("tier=\"memory\""))

        let fromEnvironment = try await metricsAfterTwoRequests([], environment: ["ALCEDO_RESULT_CACHE_BYTES": "0"])
        #expect(fromEnvironment.contains("alcedo_cache_hits_total{tier=\"disk\"} 1"), "\(fromEnvironment)")
        // Decoded images kept in memory when asked: the repeat is a memory hit.
        let decoded = try await metricsAfterTwoRequests(["--result-cache-bytes", "0", "--memory-cache-bytes", "8388608"])
        #expect(decoded.contains("alcedo_cache_hits_total{tier=\"memory\"} 1"), "\(decoded)")
    }

    @Test func aNegativeSizeIsRefused() throws {
        let (status, text) = try ServeCommandTests.runToEnd(["serve", "--port", "0", "--memory-cache-bytes=-1"])
        #expect(status != 0)
        #expect(text.contains("must not be negative"), "\(text)")
    }
}

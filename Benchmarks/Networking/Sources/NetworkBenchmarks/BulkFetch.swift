import Alcedo
import Foundation

/// Downloads a list of URLs with Alcedo, as a client application would: every URL requested
/// at once when `concurrency` > 1 (the downloader's per-host limit, set to `concurrency`, does
/// the queuing), or one after the other when it is 1.
enum BulkFetch {
    static func run(urls: [URL], concurrency: Int, runs: Int) async throws {
        let configuration = ImageDownloader.Configuration(maximumConcurrentRequestsPerHost: concurrency, timeout: .seconds(60))
        let downloader = ImageDownloader(name: "bench", configuration: configuration)
        var samples: [Double] = []
        var bytes = 0
        let clock = ContinuousClock()
        for _ in 0..<runs {
            let start = clock.now
            if concurrency == 1 {
                bytes = 0
                for url in urls { bytes += try await downloader.downloadData(with: url).data.count }
            } else {
                bytes = try await withThrowingTaskGroup(of: Int.self) { group in
                    for url in urls { group.addTask { try await downloader.downloadData(with: url).data.count } }
                    return try await group.reduce(0, +)
                }
            }
            samples.append(milliseconds(clock.now - start))
        }
        await downloader.shutdown()
        let result: [String: Any] = ["client": "alcedo", "concurrency": concurrency, "files": urls.count, "bytes": bytes,
                                     "median_ms": samples.sorted()[samples.count / 2], "samples_ms": samples]
        print(String(decoding: try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys]), as: UTF8.self))
    }
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

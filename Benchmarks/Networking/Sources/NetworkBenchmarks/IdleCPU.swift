import Alcedo
import AlcedoURLSession
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Sends `count` requests to a server that stalls, waits until they are all in flight, then
/// measures the process's CPU time (user + system, getrusage) over `seconds` of waiting.
enum IdleCPU {
    static func run(url: URL, count: Int, seconds: Double, loader name: String) async {
        let loader: any ImageDataLoading
        switch name {
        case "urlsession": loader = URLSessionImageLoader()
        default: loader = HTTPImageLoader()
        }
        let configuration = ImageDownloader.Configuration(maximumConcurrentRequestsPerHost: count, timeout: .seconds(600))
        let downloader = ImageDownloader(name: "idle", configuration: configuration, loader: loader)
        var tasks: [Task<Void, Never>] = []
        for index in 0..<count {
            // Distinct URLs, so that coalescing does not merge them into one request.
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
            components.queryItems = [URLQueryItem(name: "n", value: String(index))]
            let target = components.url!
            tasks.append(Task { _ = try? await downloader.downloadData(with: target) })
        }
        // Let the requests reach the server and the body start.
        try? await Task.sleep(for: .seconds(1))
        let clock = ContinuousClock()
        let cpuBefore = cpuSeconds()
        let start = clock.now
        try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        let wall = milliseconds(clock.now - start) / 1000
        let cpu = cpuSeconds() - cpuBefore
        for task in tasks { task.cancel() }
        await downloader.shutdown()
        let result: [String: Any] = ["loader": name, "requests": count, "wall_s": wall, "cpu_s": cpu,
                                     "cpu_percent_of_one_core": cpu / wall * 100]
        print(String(decoding: try! JSONSerialization.data(withJSONObject: result, options: [.sortedKeys]), as: UTF8.self))
    }

    /// User plus system CPU time of this process so far, in seconds.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

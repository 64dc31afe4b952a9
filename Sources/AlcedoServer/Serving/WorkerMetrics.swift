#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Alcedo

/// The metrics of every worker of `alcedo serve --processes N` in one scrape.
///
/// Each worker keeps its own counters. Besides its public address, each one serves its own
/// exposition on a loopback port of its own (`/metrics/worker`); whichever worker answers a scrape
/// of `/metrics` (on the shared port, or the first worker's `--prometheus-bind` address) reads the
/// others' there and answers all of them, each series labelled `worker="INDEX"`, so that
/// `sum without (worker) (…)` gives the service's totals. A worker that does not answer within a
/// second is left out of that scrape (`alcedo_worker_scrape_failures` counts them).
public struct WorkerMetrics: Sendable, Hashable {
    /// This worker's index.
    public var index: Int
    /// The loopback port of every worker's own exposition, by index.
    public var ports: [Int]

    /// Creates the settings of worker `index` among workers whose expositions are on `ports`.
    public init(index: Int, ports: [Int]) {
        self.index = index
        self.ports = ports
    }

    /// The path each worker serves its own exposition at, on its loopback port.
    public static let workerPath = "/metrics/worker"

    /// The combined exposition: `own` and every other worker's, read with `loader`.
    func combined(own: String, loader: HTTPImageLoader) async -> String {
        var parts: [(worker: Int, text: String)] = [(index, own)]
        var failures = 0
        await withTaskGroup(of: (Int, String?).self) { group in
            for (worker, port) in ports.enumerated() where worker != index {
                group.addTask {
                    (worker, await Self.read(port: port, loader: loader))
                }
            }
            for await (worker, text) in group {
                if let text { parts.append((worker, text)) } else { failures += 1 }
            }
        }
        parts.sort { $0.worker < $1.worker }
        let failureLine = "# HELP alcedo_worker_scrape_failures Workers whose metrics were not read for this scrape.\n"
            + "# TYPE alcedo_worker_scrape_failures gauge\nalcedo_worker_scrape_failures \(failures)\n"
        return PrometheusText.merge(parts.map { ("worker", String($0.worker), $0.text) }) + failureLine
    }

    private static func read(port: Int, loader: HTTPImageLoader) async -> String? {
        guard let url = URL(string: "http://127.0.0.1:\(port)\(workerPath)") else { return nil }
        do {
            return try await withThrowingTaskGroup(of: String?.self) { group in
                group.addTask {
                    let response = try await loader.load(DownloadRequest(url: url))
                    guard response.statusCode == 200 else { return nil }
                    var body = Data()
                    for try await chunk in response.body {
                        body.append(chunk)
                        if body.count > 16 << 20 { return nil }
                    }
                    return String(decoding: body, as: UTF8.self)
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(1))
                    return nil
                }
                let first = try await group.next() ?? nil
                group.cancelAll()
                return first
            }
        } catch {
            return nil
        }
    }
}

/// Prometheus' text exposition format, as far as merging needs it.
enum PrometheusText {
    /// The expositions of `parts` as one: each sample labelled `name="value"` of its part, the
    /// samples of one metric family together under one `# HELP` and `# TYPE`, families in the
    /// order they first appear.
    static func merge(_ parts: [(label: String, value: String, text: String)]) -> String {
        var order: [String] = []
        var headers: [String: [String]] = [:]
        var samples: [String: [String]] = [:]
        for part in parts {
            var family = ""
            for line in part.text.split(separator: "\n", omittingEmptySubsequences: true) {
                if line.hasPrefix("#") {
                    let words = line.split(separator: " ", maxSplits: 3)
                    guard words.count >= 3, words[1] == "HELP" || words[1] == "TYPE" else { continue }
                    family = String(words[2])
                    if headers[family] == nil { order.append(family); headers[family] = [] }
                    if !(headers[family]?.contains(where: { $0.hasPrefix("# \(words[1]) ") }) ?? false) {
                        headers[family]?.append(String(line))
                    }
                    continue
                }
                let name = String(line.prefix { $0 != "{" && $0 != " " })
                // A sample outside a declared family (or of another family's name) is its own.
                if family.isEmpty || !name.hasPrefix(family) {
                    family = name
                    if headers[family] == nil { order.append(family); headers[family] = [] }
                }
                samples[family, default: []].append(labelled(String(line), name: name, label: part.label, value: part.value))
            }
        }
        var out = ""
        for family in order {
            for header in headers[family] ?? [] { out += header + "\n" }
            for sample in samples[family] ?? [] { out += sample + "\n" }
        }
        return out
    }

    /// `line` (`name{a="b"} 1` or `name 1`) with `label="value"` first among its labels.
    static func labelled(_ line: String, name: String, label: String, value: String) -> String {
        let rest = line.dropFirst(name.count)
        let pair = "\(label)=\"\(value)\""
        if rest.hasPrefix("{}") { return name + "{" + pair + "}" + rest.dropFirst(2) }
        if rest.hasPrefix("{") { return name + "{" + pair + "," + rest.dropFirst() }
        return name + "{" + pair + "}" + rest
    }
}

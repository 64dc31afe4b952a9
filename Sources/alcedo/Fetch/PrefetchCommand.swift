import Alcedo
import ArgumentParser
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// `alcedo prefetch --from FILE|- [--cache-dir DIR] [--concurrency N] [--json]`
struct PrefetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefetch",
        abstract: "Load a list of images into the disk cache ahead of need.",
        discussion: """
            Reads one URL per line (http, https, file: or data: URLs, or local paths; blank \
            lines and lines starting with # are ignored) and retrieves them with Alcedo's \
            ImagePrefetcher at low priority: an image already cached is skipped, the others \
            are loaded, decoded and stored. On a terminal a progress bar shows completed, \
            skipped and failed counts, the download rate and the time left; the summary is \
            printed at the end. With --json, one JSON object per URL as it ends, with the \
            keys url, result (completed, skipped or failed) and error (why it failed, null \
            unless it failed); without --json each failed URL is printed with its reason on \
            standard error. Bytes count downloaded bodies. \
            Exit status 0 when nothing failed, 1 otherwise.
            """
    )

    @Option(name: .customLong("from"), help: ArgumentHelp("The file listing the URLs, or - for standard input.", valueName: "file"))
    var from: String

    @OptionGroup var cache: CacheLocationOptions

    @Option(help: ArgumentHelp("How many images are retrieved at once, 1-64.", valueName: "n"))
    var concurrency = 4

    @Flag(help: "One JSON object per line per URL.")
    var json = false

    func validate() throws {
        guard (1...64).contains(concurrency) else { throw ValidationError("--concurrency must be in 1...64, got \(concurrency)") }
    }

    func run() async throws {
        let lines: [String]
        do {
            lines = try readList()
        } catch {
            error.report()
            throw ExitCode.failure
        }
        let progress = ProgressBar(title: "prefetch", total: lines.count)
        let reporter = PrefetchReporter(progress: progress, json: json)

        // Lines that are not URLs fail at once; the others go to the prefetcher.
        var sources: [Source] = []
        var lineForKey: [String: String] = [:]
        for line in lines {
            switch FetchTarget.parse(line) {
            case .success(let target):
                let source = target.source
                sources.append(source)
                if lineForKey[source.cacheKey] == nil { lineForKey[source.cacheKey] = line }
            case .failure(let error):
                reporter.report(url: line, outcome: .failed, error: error.description)
            }
        }
        progress.show()
        let urlForKey = lineForKey

        let meter = DownloadMeter(progress: progress)
        let downloader = ImageDownloader(name: "alcedo-prefetch", configuration: ImageDownloader.Configuration(delegate: meter))
        let manager = ImageManager(downloader: downloader,
                                   cache: ImageRetriever.makeCache(cacheDirectory: cache.cacheDirectory.map {
                                       URL(fileURLWithPath: $0, isDirectory: true)
                                   }, memoryOnly: false).cache)
        let seen = Mutex((skipped: 0, failed: 0, completed: 0))
        let callbacks = DispatchQueue(label: "alcedo.prefetch.progress")
        let prefetcher = ImagePrefetcher(
            sources: sources, options: [.waitForCache, .allowLocalFiles, .callbackQueue(.dispatch(callbacks))], manager: manager,
            progress: { result in
                // The lists only grow, and the callbacks come in order on one queue: what is
                // new since the last call is what just ended.
                let new = seen.withLock { seen -> [(Source, ProgressBar.Outcome, AlcedoError?)] in
                    var ended: [(Source, ProgressBar.Outcome, AlcedoError?)] = []
                    for source in result.skipped.dropFirst(seen.skipped) { ended.append((source, .skipped, nil)) }
                    for failure in result.failures.dropFirst(seen.failed) { ended.append((failure.source, .failed, failure.error)) }
                    for source in result.completed.dropFirst(seen.completed) { ended.append((source, .completed, nil)) }
                    seen = (result.skipped.count, result.failures.count, result.completed.count)
                    return ended
                }
                for (source, outcome, error) in new {
                    reporter.report(url: urlForKey[source.cacheKey] ?? source.description, outcome: outcome,
                                    error: error?.description)
                }
            }, completion: nil)
        prefetcher.maxConcurrentDownloads = concurrency
        await prefetcher.prefetch()
        // Let the progress callbacks still on their queue run.
        await withCheckedContinuation { continuation in callbacks.async { continuation.resume() } }
        await downloader.shutdown()

        let counts = progress.finish()
        let seconds = ProgressBar.seconds(progress.elapsed)
        let rate = seconds > 0 ? Double(counts.bytes) / seconds : 0
        let summary = "prefetched \(lines.count) URLs in \(Formatting.elapsed(seconds)): \(counts.completed) completed, "
            + "\(counts.skipped) skipped (already cached), \(counts.failed) failed; "
            + "\(Formatting.bytes(counts.bytes)) downloaded (\(Formatting.bytes(Int(rate)))/s)"
        if json { Console.error(summary) } else { Console.line(summary) }
        if counts.failed > 0 { throw ExitCode.failure }
    }

    /// The non-blank lines of the list that are not comments, trimmed.
    private func readList() throws(CLIFailure) -> [String] {
        let data: Data
        if from == "-" {
            data = Console.readStandardInput()
        } else {
            data = try readFile(from)
        }
        // Split and trimmed as bytes: a line may be a data: URL of many megabytes.
        let blank: Set<UInt8> = [0x20, 0x09, 0x0D, 0x0B, 0x0C]
        return data.split(whereSeparator: { $0 == 0x0A || $0 == 0x0D })
            .map { line -> Data in
                var start = line.startIndex, end = line.endIndex
                while start < end, blank.contains(line[start]) { start += 1 }
                while end > start, blank.contains(line[end - 1]) { end -= 1 }
                return line[start..<end]
            }
            .filter { !$0.isEmpty && $0.first != UInt8(ascii: "#") }
            .map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Prints each ended URL of a prefetch and counts it on the progress bar.
private struct PrefetchReporter: Sendable {
    let progress: ProgressBar
    let json: Bool

    func report(url: String, outcome: ProgressBar.Outcome, error: String?) {
        progress.record(outcome)
        let result = switch outcome {
        case .completed: "completed"
        case .skipped: "skipped"
        case .failed: "failed"
        }
        if json {
            progress.printLine(Console.jsonText(["url": FetchReport.shown(url), "result": result, "error": error.orJSONNull]))
        } else if outcome == .failed {
            progress.printLine("alcedo: \(FetchReport.shown(url)): \(error ?? "failed")", toStandardError: true)
        }
    }
}

/// Counts the bytes of every downloaded body onto a progress bar.
private struct DownloadMeter: ImageDownloaderDelegate {
    let progress: ProgressBar

    func imageDownloader(_ downloader: ImageDownloader, didDownload data: Data,
                         with response: DownloadResponse) async throws(AlcedoError) -> Data {
        progress.addBytes(data.count)
        return data
    }
}

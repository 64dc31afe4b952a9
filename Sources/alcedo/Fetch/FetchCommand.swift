import Alcedo
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `alcedo fetch URL... [--out DIR] [--cache-dir DIR] [processing] [--format F] [--quality Q]
/// [--force-refresh] [--only-from-cache] [--memory-only] [--concurrency N] [--memory-limit MiB] [--max-memory MiB] [--json]`
struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Retrieve images through the cache and the downloader, process them and write them to a folder.",
        discussion: """
            Each URL (http, https, s3://BUCKET/KEY, file: or data: URL, or a local path) is retrieved through \
            the image manager: the memory cache, then the disk cache, then the network or the \
            file. The processors run in this order, whatever the order of the options: \
            --downsample, --resize, --round-corner, --blur. Each result is written to DIR as \
            NAME-HASH.EXT: NAME from the URL's last path component (letters, digits, - and _ \
            only, never starting with - or _), HASH 8 hex digits of the URL, EXT the output format's (--format, else the \
            source's; PNG when the source format cannot be written, or is JPEG and the result has \
            transparency, as --round-corner gives). Animations keep their \
            frames in GIF and WebP; JPEG and PNG get the first frame.

            One line per URL, in the order given: URL, cache type (none: loaded, memory, disk), \
            result size, bytes of the written file, milliseconds from the start of the retrieval \
            to the file written, and the file; or the error. With --json, exactly one JSON \
            object per line per URL with the keys url, cacheType, width, height, bytes, ms, \
            file and error (null when missing). A progress bar is drawn on standard error when \
            it is a terminal. Exit status 0 when every URL succeeded, 1 when any failed.
            """
    )

    @Argument(help: ArgumentHelp("Image URLs: http, https, s3, file: or data: URLs, or local paths.", valueName: "url"))
    var urls: [String]

    @Option(help: ArgumentHelp("The folder results are written to; made when missing.", valueName: "dir"))
    var out = "."

    @OptionGroup var cache: CacheLocationOptions

    @OptionGroup(title: "Processing") var processing: ProcessingArguments

    @OptionGroup(title: "Object storage") var s3: S3Options

    @Option(help: ArgumentHelp("The output format: jpeg, png, webp, gif, avif, tiff, bmp or ico (default: the source's).", valueName: "format"))
    var format: String?

    @Option(help: ArgumentHelp("Quality for JPEG, WebP and AVIF output, 1-100.", valueName: "q"))
    var quality = 90

    @Flag(name: .customLong("force-refresh"), help: "Skip the caches and load again (a download revalidates what the disk holds).")
    var forceRefresh = false

    @Flag(name: .customLong("only-from-cache"), help: "Never load: a URL that is in neither cache fails.")
    var onlyFromCache = false

    @Flag(name: .customLong("memory-only"), help: "Use only the memory cache: nothing is read from or written to the disk cache.")
    var memoryOnly = false

    @Option(help: ArgumentHelp("How many URLs are retrieved at once, 1-64.", valueName: "n"))
    var concurrency = 4

    @Option(name: .customLong("memory-limit"), help: ArgumentHelp(
        "The memory cache's limit in MiB of decoded pixels, 1-1048576 (default 256). Each result is written and released as it finishes; only this much is kept for repeated URLs.",
        valueName: "MiB"))
    var memoryLimit = ImageRetriever.defaultMemoryLimit >> 20

    @Option(name: .customLong("max-memory"), help: ArgumentHelp(
        "The working memory in MiB the decodes and downloads of a run share, the memory cache's limit included: each decode waits for its working set and each download counts its body while it arrives, so big photos run fewer at once than --concurrency (default: 75% of the cgroup limit, else 1024).",
        valueName: "MiB"))
    var maxMemory: Int?

    @Option(name: .customLong("color"), help: ColorManagement.argumentHelp)
    var color: ColorManagement = .convertToSRGB

    @Flag(help: "One JSON object per line per URL.")
    var json = false

    func validate() throws {
        guard !urls.isEmpty else { throw ValidationError("give at least one URL") }
        guard (1...100).contains(quality) else { throw ValidationError("--quality must be in 1...100, got \(quality)") }
        guard (1...64).contains(concurrency) else { throw ValidationError("--concurrency must be in 1...64, got \(concurrency)") }
        guard (1...(1 << 20)).contains(memoryLimit) else {
            throw ValidationError("--memory-limit must be in 1...1048576 (MiB), got \(memoryLimit)")
        }
        if let maxMemory, maxMemory <= memoryLimit {
            throw ValidationError("--max-memory (\(maxMemory) MiB) must be more than --memory-limit (\(memoryLimit) MiB), which it includes")
        }
        if let format, Self.outputFormat(format) == nil {
            throw ValidationError("--format takes jpeg, png, webp, gif, avif, tiff, bmp or ico; got \(format)")
        }
        if forceRefresh && onlyFromCache {
            throw ValidationError("--force-refresh and --only-from-cache cannot be used together")
        }
        if memoryOnly && cache.cacheDirectory != nil {
            throw ValidationError("--memory-only uses no disk cache: leave out --cache-dir")
        }
    }

    /// The output format named by `word`, when the tool writes it.
    static func outputFormat(_ word: String) -> ImageFormat? {
        guard let format = ImageFormat(fileExtension: word), [.jpeg, .png, .webp, .gif, .avif, .tiff, .bmp, .ico].contains(format) else { return nil }
        return format
    }

    func run() async throws {
        let folder = URL(fileURLWithPath: out, isDirectory: true).standardizedFileURL
        // A folder that cannot be made is reported by every URL's write, with the system's reason.
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let settings = FetchSettings(outputFolder: folder, format: format.flatMap(Self.outputFormat), quality: quality)
        // An s3:// argument reads through an S3 loader set by the --s3-* options and the environment.
        var s3Loader: S3ImageDataLoader?
        if urls.contains(where: { $0.trimmingSpaces().lowercased().hasPrefix("s3://") }) {
            do {
                s3Loader = try s3.loader(ServeEnvironment(ProcessInfo.processInfo.environment))
            } catch {
                throw ValidationError("\(error)")
            }
        }
        let retriever = ImageRetriever.make(cacheDirectory: cache.cacheDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) },
                                            memoryOnly: memoryOnly, memoryLimit: memoryLimit << 20,
                                            maxMemory: maxMemory.map { $0 << 20 } ?? ImageRetriever.defaultMaxMemory(memoryLimit: memoryLimit << 20),
                                            s3: s3Loader)
        let fetcher = ImageFetcher(settings: settings, retriever: retriever)
        let processor = processing.processor
        let options = RetrievalOptions(forceRefresh: forceRefresh, onlyFromCache: onlyFromCache, colorManagement: color)
        let urls = self.urls
        let progress = ProgressBar(title: "fetch", total: urls.count)
        progress.show()
        let reports = await FetchBatch.run(count: urls.count, concurrency: concurrency, progress: progress) { index in
            await fetcher.fetch(urls[index], processor: processor, options: options)
        } report: { report in
            if json {
                progress.printLine(Console.jsonText(report.jsonObject))
            } else {
                progress.printLine(report.succeeded ? report.textLine : "alcedo: " + report.textLine,
                                   toStandardError: !report.succeeded)
            }
        }
        progress.finish()
        let failed = reports.filter { !$0.succeeded }.count
        if !json && urls.count > 1 {
            Console.error("fetched \(urls.count - failed) of \(urls.count)" + (failed > 0 ? ", \(failed) failed" : "")
                          + " in \(Formatting.elapsed(ProgressBar.seconds(progress.elapsed)))")
        }
        if failed > 0 { throw ExitCode.failure }
    }
}

/// Runs a batch of fetches with a bounded number in flight, reporting each in input order as
/// soon as it and those before it are done, and counting each on `progress`.
enum FetchBatch {
    static func run(count: Int, concurrency: Int, progress: ProgressBar,
                    work: @escaping @Sendable (Int) async -> FetchReport,
                    report: (FetchReport) -> Void = { _ in }) async -> [FetchReport] {
        await withTaskGroup(of: (Int, FetchReport).self, returning: [FetchReport].self) { group in
            var next = 0
            func launch() {
                let index = next
                next += 1
                group.addTask { (index, await work(index)) }
            }
            while next < min(max(1, concurrency), count) { launch() }
            var done: [FetchReport?] = Array(repeating: nil, count: count)
            var reported = 0
            for await (index, result) in group {
                done[index] = result
                progress.record(result.succeeded ? .completed : .failed, bytes: result.bytes ?? 0)
                while reported < count, let ready = done[reported] {
                    report(ready)
                    reported += 1
                }
                if next < count { launch() }
            }
            return done.compactMap { $0 }
        }
    }
}

import Alcedo
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One run of `alcedo demo`: serve the samples, fetch them four times, print, write the sheet.
struct DemoRun {
    let outputFolder: URL
    let port: Int

    /// The demo's disk cache, inside the output folder, emptied at the start.
    var cacheFolder: URL { outputFolder.appendingPathComponent("demo-cache", isDirectory: true) }

    func run() async throws {
        let start = ContinuousClock.now
        let samples = try DemoSamples.load()
        try prepareFolders()
        let server: DemoHTTPServer
        do {
            server = try await DemoHTTPServer.start(samples: samples, port: port)
        } catch let failure as CLIFailure {
            throw failure
        } catch {
            throw CLIFailure(path: "127.0.0.1:\(port)", reason: "cannot start the demo server: \(error)")
        }
        do {
            try await show(samples: samples, server: server, start: start)
            await server.shutdown()
        } catch {
            await server.shutdown()
            throw error
        }
    }

    private func prepareFolders() throws(CLIFailure) {
        let fileManager = FileManager.default
        do {
            if fileManager.fileExists(atPath: cacheFolder.path) { try fileManager.removeItem(at: cacheFolder) }
            try fileManager.createDirectory(at: cacheFolder, withIntermediateDirectories: true)
        } catch {
            throw CLIFailure(path: outputFolder.path, reason: "cannot prepare the output folder: \(errorReason(error))")
        }
    }

    private func show(samples: [DemoSample], server: DemoHTTPServer, start: ContinuousClock.Instant) async throws {
        let jobs = DemoJob.all(for: samples, server: server)
        let total = samples.reduce(0) { $0 + $1.data.count }
        Console.line("Alcedo demo: \(samples.count) sample images (\(Formatting.bytes(total))) served on "
                     + "http://127.0.0.1:\(server.port)/ (loopback only); results in \(outputFolder.path)")
        Console.line("")

        // 1. Cold: everything is downloaded, decoded, processed, stored, and written out.
        let firstRetriever = ImageRetriever.make(cacheDirectory: cacheFolder, memoryOnly: false)
        let writer = ImageFetcher(settings: FetchSettings(outputFolder: outputFolder, keepsImages: true), retriever: firstRetriever)
        Console.line("1. Empty caches: every image is downloaded, decoded (scaled down by the decoder where it can), processed and cached")
        let first = await fetchAll(jobs, title: "download", with: writer)
        printFirstTable(jobs, first)
        let afterFirst = server.statistics
        Console.line("   server: \(afterFirst.ok) responses 200 (\(Formatting.bytes(afterFirst.bodyBytes))) for \(jobs.count) requests"
                     + (afterFirst.ok < jobs.count ? "; requests for the same URL shared one download" : ""))
        Console.line("")

        // 2. The same manager again: memory hits. 3. A new memory cache over the same disk: disk hits.
        // 4. Forced refresh: the downloads are revalidated and the server answers 304.
        Console.line("2. The same requests again, 3. with a new memory cache over the same disk cache, 4. with a forced refresh")
        let again = await fetchAll(jobs, title: "again", with: ImageFetcher(settings: FetchSettings(), retriever: firstRetriever))
        let diskRetriever = firstRetriever.withEmptyMemoryCache()
        let fromDisk = await fetchAll(jobs, title: "from disk", with: ImageFetcher(settings: FetchSettings(), retriever: diskRetriever))
        let beforeRefresh = server.statistics
        let refreshed = await fetchAll(jobs, title: "refresh", with: ImageFetcher(settings: FetchSettings(), retriever: diskRetriever),
                                       options: RetrievalOptions(forceRefresh: true))
        let afterRefresh = server.statistics
        printRunsTable(jobs, again, fromDisk, refreshed)
        let notModified = afterRefresh.notModified - beforeRefresh.notModified
        let reloaded = afterRefresh.ok - beforeRefresh.ok
        Console.line("   server during the forced refresh: \(notModified) answered 304 Not Modified, \(reloaded) answered 200")
        Console.line("")

        try writeContactSheet(jobs, first: first, runs: [again, fromDisk, refreshed])
        let failures = [first, again, fromDisk, refreshed].joined().filter { !$0.succeeded }
        for failure in failures { Console.error("alcedo: demo: \(failure.url): \(failure.error ?? "failed")") }
        Console.line("Done in \(Formatting.elapsed(ProgressBar.seconds(ContinuousClock.now - start))); nothing left the machine.")
        if !failures.isEmpty { throw ExitCode.failure }
    }

    private func fetchAll(_ jobs: [DemoJob], title: String, with fetcher: ImageFetcher,
                          options: RetrievalOptions = RetrievalOptions()) async -> [FetchReport] {
        let progress = ProgressBar(title: "   " + title, total: jobs.count)
        progress.show()
        let reports = await FetchBatch.run(count: jobs.count, concurrency: 4, progress: progress) { index in
            // The processor is part of the file name: one URL can have several results.
            let job = jobs[index]
            return await fetcher.fetch(job.url.absoluteString, processor: job.processor, options: options,
                                       nameKey: job.url.absoluteString + "#" + job.processor.identifier)
        }
        progress.finish()
        return reports
    }

    private func printFirstTable(_ jobs: [DemoJob], _ reports: [FetchReport]) {
        var table = TextTable([.init("image"), .init("processors"), .init("source"), .init("result"),
                               .init("file size", .right), .init("cache"), .init("ms", .right)])
        for (job, report) in zip(jobs, reports) {
            table.append([job.name, job.processing, report.sourceSize?.description ?? "-", report.size?.description ?? "-",
                          report.bytes.map(Formatting.bytes) ?? "-", report.cacheType ?? "failed",
                          report.retrievalMilliseconds.map(Formatting.milliseconds) ?? "-"])
        }
        for line in table.lines() { Console.line("   " + line) }
    }

    private func printRunsTable(_ jobs: [DemoJob], _ runs: [FetchReport]...) {
        var table = TextTable([.init("image"), .init("2. again"), .init("ms", .right), .init("3. new memory"), .init("ms", .right),
                               .init("4. forced refresh"), .init("ms", .right)])
        for (index, job) in jobs.enumerated() {
            var cells = [job.name]
            for run in runs {
                let report = run[index]
                cells += [Self.where(report), report.retrievalMilliseconds.map(Formatting.milliseconds) ?? "-"]
            }
            table.append(cells)
        }
        for line in table.lines() { Console.line("   " + line) }
    }

    /// The cache type, with the HTTP status when a download answered (`disk, 304`).
    private static func `where`(_ report: FetchReport) -> String {
        guard let cacheType = report.cacheType else { return "failed" }
        return report.httpStatus.map { "\(cacheType), \($0)" } ?? cacheType
    }

    private func writeContactSheet(_ jobs: [DemoJob], first: [FetchReport], runs: [[FetchReport]]) throws(CLIFailure) {
        var entries: [ContactSheet.Entry] = []
        var items: [ContactSheetPage.Item] = []
        for (index, (job, report)) in zip(jobs, first).enumerated() {
            guard let image = report.image, let size = report.size else { continue }
            let ms = report.retrievalMilliseconds.map(Formatting.milliseconds) ?? "-"
            entries.append(ContactSheet.Entry(image: image, caption: [
                job.name, "\(report.sourceSize?.description ?? "?") -> \(size)", "\(report.cacheType ?? "?") \(ms) ms",
            ]))
            var figures: [(label: String, value: String)] = [
                ("processors", job.processing),
                ("source", "\(report.sourceSize?.description ?? "-")"),
                ("result", size.description),
                ("file", report.bytes.map { "\(Formatting.bytes($0)) (\($0) bytes)" } ?? "-"),
                ("1. empty caches", "\(report.cacheType ?? "failed"), \(ms) ms"),
            ]
            for (number, run) in zip(["2. again", "3. new memory cache", "4. forced refresh"], runs) {
                let later = run[index]
                figures.append((number, "\(Self.where(later)), \(later.retrievalMilliseconds.map(Formatting.milliseconds) ?? "-") ms"))
            }
            items.append(ContactSheetPage.Item(file: report.file.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "",
                                               title: job.name, figures: figures))
        }
        let sheetPath = outputFolder.appendingPathComponent("contact-sheet.png").path
        let pagePath = outputFolder.appendingPathComponent("contact-sheet.html").path
        let png: Data
        do {
            png = try ContactSheet().png(entries)
        } catch {
            throw CLIFailure(path: sheetPath, error: error)
        }
        try writeFile(png, to: sheetPath)
        var page = ContactSheetPage()
        page.title = "Alcedo demo"
        page.sheetFile = "contact-sheet.png"
        page.notes = ["\(entries.count) images fetched from a loopback HTTP server through Alcedo's pipeline, "
                      + "then again from the memory cache, the disk cache, and with a forced refresh."]
        try writeFile(Data(page.html(items).utf8), to: pagePath)
        Console.line("Contact sheet: \(sheetPath) (\(entries.count) images); page: \(pagePath)")
    }
}

import Alcedo
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What `alcedo fetch` does with every URL it retrieves.
struct FetchSettings: Sendable {
    /// Where result files are written (nil: nothing is written).
    var outputFolder: URL?
    /// The output format; nil writes the source's format (PNG when it has no encoder, or when
    /// it is JPEG and the result has transparency).
    var format: ImageFormat?
    /// Quality for JPEG and lossy WebP (default 90).
    var quality = 90
    /// Keep each result image in its report (the demo's contact sheet).
    var keepsImages = false
}

/// Retrieves images, encodes them in the output format and writes them, reporting each URL.
struct ImageFetcher: Sendable {
    let settings: FetchSettings
    let retriever: ImageRetriever

    /// Retrieves `text` (a URL as given on the command line) with `processor` and writes its
    /// file, named after `nameKey` (default: the URL; see ``OutputFileName``); never throws:
    /// a failure is the report's ``FetchReport/error``.
    func fetch(_ text: String, processor: (any ImageProcessor)?, options: RetrievalOptions = RetrievalOptions(),
               nameKey: String? = nil) async -> FetchReport {
        let start = ContinuousClock.now
        var report = FetchReport(url: text)
        do throws(FetchFailure) {
            let target: FetchTarget
            switch FetchTarget.parse(text) {
            case .success(let parsed): target = parsed
            case .failure(let error): throw FetchFailure(error.description)
            }
            let retrieved = try await retriever.retrieve(target, processor: processor, options: options)
            report.retrievalMilliseconds = ProgressBar.seconds(ContinuousClock.now - start) * 1000
            report.cacheType = retrieved.cacheType.description
            report.httpStatus = retrieved.httpStatus
            report.sourceSize = retrieved.sourceSize
            report.size = retrieved.image.pixelSize
            if let folder = settings.outputFolder {
                let written = try await Blocking.run { () throws(FetchFailure) in try write(retrieved.image, for: nameKey ?? text, into: folder) }
                report.bytes = written.bytes
                report.file = written.path
            }
            if settings.keepsImages { report.image = retrieved.image }
        } catch {
            report = FetchReport(url: text)
            report.error = error.description
        }
        report.milliseconds = ProgressBar.seconds(ContinuousClock.now - start) * 1000
        return report
    }

    /// Encodes `image` and writes it atomically into the output folder.
    private func write(_ image: AlcedoImage, for url: String, into folder: URL) throws(FetchFailure) -> (path: String, bytes: Int) {
        let registry = ImageCodecRegistry.shared
        var format = settings.format
            ?? (registry.encodableFormats.contains(image.sourceFormat) ? image.sourceFormat : .png)
        // Without --format, transparency a processor added to a JPEG (round corners) is kept.
        if settings.format == nil && format == .jpeg && image.hasAlpha { format = .png }
        let data: Data
        do {
            data = try registry.encode(image, as: format, options: EncodingOptions(quality: settings.quality))
        } catch {
            throw FetchFailure(error.description)
        }
        let name = OutputFileName.make(for: url, extension: format.preferredFileExtension)
        let path = folder.appendingPathComponent(name).path
        do {
            try writeFile(data, to: path)
        } catch {
            throw FetchFailure("\(error.path): \(error.reason)")
        }
        return (path, data.count)
    }
}

/// Why one URL failed, in one line.
struct FetchFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }

    init(_ error: AlcedoError) {
        description = error.description
    }
}

/// Runs blocking work (file I/O, encoding) on a Dispatch queue, off Swift's cooperative pool.
enum Blocking {
    static func run<T: Sendable, E: Error>(_ work: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: Result { () throws(E) -> T in try work() })
            }
        }
        return try result.get()
    }
}

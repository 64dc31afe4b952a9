import Alcedo
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `alcedo info FILE|URL... [--json]`
struct InfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Print the format, size, frames, pages, loop count, durations, orientation, bit depth, compression, icon entries and colour profile of image files.",
        discussion: "Files are read from disk; http(s):// and s3://BUCKET/KEY URLs are downloaded first (s3 with the --s3-* options, as for serve)."
    )

    @Argument(help: "Image files, or http(s) or s3 URLs, to inspect.")
    var files: [String]

    @OptionGroup(title: "Object storage") var s3: S3Options

    @Flag(help: "One JSON object per line per file.")
    var json = false

    @Option(name: .customLong("color"), help: ColorManagement.argumentHelp)
    var color: ColorManagement = .convertToSRGB

    func run() async throws {
        var failed = false
        let remote = files.filter { Self.remoteScheme($0) != nil }
        var downloader: ImageDownloader?
        if !remote.isEmpty {
            var loaders: [any ImageDataLoading] = [HTTPImageLoader()]
            if remote.contains(where: { Self.remoteScheme($0) == "s3" }) {
                do {
                    loaders.append(try s3.loader(ServeEnvironment(ProcessInfo.processInfo.environment)))
                } catch {
                    throw ValidationError("\(error)")
                }
            }
            downloader = ImageDownloader(name: "alcedo-info", loader: CompositeImageDataLoader(loaders))
        }
        defer { if let downloader { Task { await downloader.shutdown() } } }
        for path in files {
            do throws(CLIFailure) {
                let data: Data
                if let downloader, Self.remoteScheme(path) != nil, let url = URL(string: path) {
                    do { data = try await downloader.downloadData(with: url).data } catch { throw CLIFailure(path: path, error: error) }
                } else {
                    data = try readFile(path)
                }
                let info: ImageInfo
                do { info = try ImageCodecRegistry.shared.info(for: data, options: DecodingOptions(colorManagement: color)) } catch { throw CLIFailure(path: path, error: error) }
                report(info, path: path, byteCount: data.count)
            } catch {
                error.report()
                failed = true
            }
        }
        if failed { throw ExitCode.failure }
    }

    /// `http`, `https` or `s3` when `text` is such a URL, else `nil` (a file path).
    static func remoteScheme(_ text: String) -> String? {
        let lower = text.lowercased()
        for scheme in ["http", "https", "s3"] where lower.hasPrefix(scheme + "://") { return scheme }
        return nil
    }

    private func report(_ info: ImageInfo, path: String, byteCount: Int) {
        if json {
            var object = info.jsonObject(byteCount: byteCount)
            object["file"] = path
            Console.jsonLine(object)
        } else {
            var text = "\(path): \(info.format) \(info.width)x\(info.height)"
            text += info.frameCount == 1 ? ", 1 frame" : ", \(info.frameCount) frames"
            if info.frameCount > 1 {
                text += ", loop \(info.loopCount == 0 ? "forever" : String(info.loopCount))"
                text += ", \(String(cFormat: "%.3f", info.totalDuration)) s"
            }
            if info.pageCount > 1 { text += ", \(info.pageCount) pages" }
            text += ", orientation \(info.orientation.rawValue)"
            if let model = info.colorModel { text += ", \(model)" }
            if let depth = info.bitDepth { text += ", \(depth)-bit" }
            if let compression = info.compression { text += ", compression \(compression)" }
            if info.hasAlpha { text += ", alpha" }
            if let profile = info.colorProfile { text += ", " + profile.textPhrase }
            text += ", \(byteCount) bytes"
            Console.line(text)
            for (index, entry) in info.entries.enumerated() {
                var line = "  entry \(index): \(entry.width)x\(entry.height), \(entry.bitDepth)-bit \(entry.encoding), \(entry.byteCount) bytes"
                if let hotSpot = entry.hotSpot { line += ", hot spot \(hotSpot.x),\(hotSpot.y)" }
                Console.line(line)
            }
        }
    }
}

import Alcedo
import ArgumentParser
import Foundation

/// `alcedo info FILE... [--json]`
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Print the format, size, frames, loop count, durations, orientation and colour profile of image files."
    )

    @Argument(help: "Image files to inspect.")
    var files: [String]

    @Flag(help: "One JSON object per line per file.")
    var json = false

    @Option(name: .customLong("color"), help: ColorManagement.argumentHelp)
    var color: ColorManagement = .convertToSRGB

    func run() throws {
        var failed = false
        for path in files {
            do throws(CLIFailure) {
                let data = try readFile(path)
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
                text += ", \(String(format: "%.3f", info.totalDuration)) s"
            }
            text += ", orientation \(info.orientation.rawValue)"
            if info.hasAlpha { text += ", alpha" }
            if let bitDepth = info.bitDepth { text += ", \(bitDepth)-bit" }
            if let compression = info.compression { text += ", \(compression)" }
            if let profile = info.colorProfile { text += ", " + profile.textPhrase }
            text += ", \(byteCount) bytes"
            Console.line(text)
        }
    }
}

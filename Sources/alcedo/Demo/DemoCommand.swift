import Alcedo
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `alcedo demo [--port 0] [--out DIR]`
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Show the whole pipeline on the bundled samples, served by a loopback HTTP server.",
        discussion: """
            Starts an HTTP server on 127.0.0.1 serving the sample images bundled with alcedo \
            (JPEG photos, a PNG with alpha, an animated GIF and an animated WebP), then fetches \
            them all through the image manager with a few processors: first with empty caches \
            (downloads), again (memory hits), with a new memory cache over the same disk cache \
            (disk hits), and with --force-refresh semantics (revalidation, answered 304 Not \
            Modified). It prints a table per run and writes the results, contact-sheet.png (all \
            results on one grid) and contact-sheet.html into DIR. The demo's disk cache is \
            DIR/demo-cache, emptied at the start. Nothing leaves the machine.
            """
    )

    @Option(help: ArgumentHelp("The port of the demo server (0: a free port).", valueName: "port"))
    var port = 0

    @Option(help: ArgumentHelp("The folder the results and the contact sheet are written to; made when missing.", valueName: "dir"))
    var out = "alcedo-demo"

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be in 0...65535, got \(port)") }
    }

    func run() async throws {
        do {
            try await DemoRun(outputFolder: URL(fileURLWithPath: out, isDirectory: true), port: port).run()
        } catch let failure as CLIFailure {
            failure.report()
            throw ExitCode.failure
        }
    }
}

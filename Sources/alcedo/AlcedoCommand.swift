import Alcedo
import ArgumentParser

@main
struct AlcedoCommand: AsyncParsableCommand {
    /// The release version, printed first by `alcedo --version`.
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "alcedo",
        abstract: "Download, decode, process and cache images.",
        version: versionText,
        subcommands: [FetchCommand.self, PrefetchCommand.self, DemoCommand.self, InfoCommand.self, ConvertCommand.self, CacheCommand.self,
                      ServeCommand.self]
    )

    /// `alcedo --version`: the version, then one line per C library with its version, and the
    /// trace exporter when this build has it (the `OpenTelemetry` trait).
    static var versionText: String {
        let tracing = OpenTelemetrySettings.exporterBuiltIn ? ["  OpenTelemetry trace export (OTLP/HTTP, OTLP/gRPC; swift-otel)"] : []
        return (["alcedo \(version)"] + CodecLibrary.all.map { "  \($0)" } + tracing).joined(separator: "\n")
    }
}

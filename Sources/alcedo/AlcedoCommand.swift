import Alcedo
import ArgumentParser

@main
struct AlcedoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "alcedo",
        abstract: "Download, decode, process and cache images.",
        version: "0.1.0",
        subcommands: [FetchCommand.self, PrefetchCommand.self, DemoCommand.self, InfoCommand.self, ConvertCommand.self, CacheCommand.self,
                      ServeCommand.self]
    )
}

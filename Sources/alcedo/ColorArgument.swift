import Alcedo
import ArgumentParser

/// `--color srgb|preserve|ignore`: ``ColorManagement`` on the command line.
extension ColorManagement: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(rawValue: argument.lowercased())
    }

    /// The help text of every `--color` option.
    static let argumentHelp = ArgumentHelp(
        "Colour profiles: srgb converts to sRGB (default), preserve keeps the source's colours and embeds its profile in JPEG, PNG and WebP output, ignore reads no profile.",
        valueName: "mode")
}

extension ImageColorProfile {
    /// One phrase for text output: `ICC "Display P3" RGB, 536 bytes`.
    var textPhrase: String {
        "ICC \"\(description)\" \(colorSpace.rawValue), \(byteCount) bytes"
    }
}

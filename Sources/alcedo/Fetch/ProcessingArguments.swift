import Alcedo
import ArgumentParser

/// The processing options of `alcedo fetch`, turned into one processor chain.
///
/// The processors run in a fixed order whatever the order on the command line:
/// downsample, resize, round-corner, blur.
struct ProcessingArguments: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Fit inside WxH, keeping the aspect ratio, never enlarging; the decoder scales down where the format allows (JPEG, WebP).",
        valueName: "WxH"))
    var downsample: String?

    @Option(help: ArgumentHelp(
        "Resize to WxH exactly, or :fit inside it, or :fill it (keeping the aspect ratio).",
        valueName: "WxH[:fit|fill]"))
    var resize: String?

    @Option(name: .customLong("round-corner"), help: ArgumentHelp(
        "Round the corners with radius R pixels (the outside becomes transparent).", valueName: "R"))
    var roundCorner: Double?

    @Option(help: ArgumentHelp("Gaussian blur with radius R pixels.", valueName: "R"))
    var blur: Double?

    func validate() throws {
        if let downsample, PixelSize(parsing: downsample) == nil {
            throw ValidationError("--downsample takes WxH with positive integers, for example 256x256; got \(downsample)")
        }
        if let resize, Self.parseResize(resize) == nil {
            throw ValidationError("--resize takes WxH, WxH:fit or WxH:fill with positive integers; got \(resize)")
        }
        if let roundCorner, !(roundCorner.isFinite && roundCorner >= 0) {
            throw ValidationError("--round-corner must be 0 or more, got \(roundCorner)")
        }
        if let blur, !(blur.isFinite && blur >= 0 && blur <= BlurImageProcessor.maximumRadius) {
            throw ValidationError("--blur must be in 0...\(Int(BlurImageProcessor.maximumRadius)), got \(blur)")
        }
    }

    /// The chain for the options given, or nil when none is given.
    var processor: (any ImageProcessor)? {
        var chain: [any ImageProcessor] = []
        if let size = downsample.flatMap({ PixelSize(parsing: $0) }) {
            chain.append(DownsamplingImageProcessor(size: size))
        }
        if let (size, mode) = resize.flatMap(Self.parseResize) {
            chain.append(ResizingImageProcessor(referenceSize: size, mode: mode))
        }
        if let roundCorner { chain.append(RoundCornerImageProcessor(cornerRadius: roundCorner)) }
        if let blur { chain.append(BlurImageProcessor(blurRadius: blur)) }
        guard let first = chain.first else { return nil }
        return chain.dropFirst().reduce(first) { $0 |> $1 }
    }

    /// `WxH` (exact), `WxH:fit` or `WxH:fill`.
    static func parseResize(_ text: String) -> (PixelSize, ResizingImageProcessor.Mode)? {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let sizeText = parts.first, let size = PixelSize(parsing: sizeText) else { return nil }
        guard parts.count == 2 else { return (size, .none) }
        switch parts[1].lowercased() {
        case "fit": return (size, .aspectFit)
        case "fill": return (size, .aspectFill)
        default: return nil
        }
    }
}

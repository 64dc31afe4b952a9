import Alcedo
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `alcedo convert IN OUT [--format png|jpeg|gif|webp|avif|heic|jxl|tiff|bmp|ico|pam] [--quality Q] [--lossless] [--downsample WxH] [--frame N] [--color MODE]`
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Decode an image, optionally downsample it, and encode it in another format.",
        discussion: """
            The output format comes from --format or OUT's extension. --downsample fits the image \
            inside WxH, keeping its aspect ratio and never upscaling, with decoder-side scaling \
            where the format allows (JPEG, WebP). pam writes a binary PAM (TUPLTYPE RGB_ALPHA, \
            RGBA8 with straight alpha) of one frame. Colour profiles are converted to sRGB unless \
            --color says otherwise (preserve keeps the source's colours and embeds its profile).
            """
    )

    @Argument(help: "The image to read.")
    var input: String

    @Argument(help: "The file to write.")
    var output: String

    @Option(help: "Output format: png, jpeg, gif, webp, avif, heic, jxl, tiff, bmp, ico or pam (default: from OUT's extension).")
    var format: String?

    @Option(help: "Quality for JPEG, lossy WebP, AVIF, HEIC and JPEG XL, 1-100.")
    var quality: Int = 90

    @Flag(help: "Write WebP, AVIF, HEIC or JPEG XL losslessly.")
    var lossless = false

    @Option(help: "Fit inside WxH (for example 256x256), keeping the aspect ratio, never upscaling.")
    var downsample: String?

    @Option(help: "Write only frame N of an animation (default: all frames for gif, webp, avif and jxl, frame 0 otherwise).")
    var frame: Int?

    @Option(name: .customLong("color"), help: ColorManagement.argumentHelp)
    var color: ColorManagement = .convertToSRGB

    func validate() throws {
        guard (1...100).contains(quality) else { throw ValidationError("--quality must be in 1...100, got \(quality)") }
        if let downsample, PixelSize(parsing: downsample) == nil {
            throw ValidationError("--downsample takes WxH with positive integers, for example 256x256; got \(downsample)")
        }
        if let frame, frame < 0 { throw ValidationError("--frame must be 0 or more, got \(frame)") }
    }

    func run() throws {
        do {
            try convert()
        } catch {
            error.report()
            throw ExitCode.failure
        }
    }

    private func convert() throws(CLIFailure) {
        let target = try outputTarget()

        // Still outputs need one frame only; skip decoding the rest when it is the first.
        let frameIndex = frame ?? 0
        let needsOneFrame = frame != nil || !target.isAnimatable
        var options = DecodingOptions(firstFrameOnly: needsOneFrame && frameIndex == 0, colorManagement: color)
        let bounds = downsample.flatMap { PixelSize(parsing: $0) }
        if let bounds {
            options.targetSize = bounds
            options.contentMode = .aspectFit
        }

        var image: AlcedoImage
        var finalSize: PixelSize?
        let file = try InputFile(path: input)
        do {
            let sniffed = file.sniff()
            if sniffed == .jpeg {
                // A JPEG is read from the file through a small buffer, never held whole.
                let jpeg = JPEGDecoder()
                if case .pam = target, bounds == nil, frameIndex == 0, try streamPAM(file, options: options, decodeRows: { start, rows throws(AlcedoError) in
                    try jpeg.decodeRows(fileDescriptor: file.fd, options: options, start: start, rows: rows)
                }) { return }
                if let bounds {
                    try file.rewind()
                    let info = try jpeg.info(fileDescriptor: file.fd, options: options)
                    finalSize = PixelSize(width: info.width, height: info.height).fitting(in: bounds)
                }
                try file.rewind()
                image = try jpeg.decode(fileDescriptor: file.fd, options: options)
            } else if case .pam = target, bounds == nil, frameIndex == 0, sniffed == .tiff,
                      try streamPAM(file, options: options, decodeRows: { start, rows throws(AlcedoError) in
                          // The strips or tiles are read from the file as they are needed.
                          try TIFFDecoder().decodeRows(fileDescriptor: file.fd, options: options, start: start, rows: rows)
                      }) {
                return
            } else {
                let data = try readFile(input)
                if let bounds {
                    // The exact output size comes from the stored size: a decoder-side scale may round.
                    let info = try ImageCodecRegistry.shared.info(for: data, options: options)
                    finalSize = PixelSize(width: info.width, height: info.height).fitting(in: bounds)
                }
                image = try ImageCodecRegistry.shared.decode(data, options: options)
            }
        } catch let error as AlcedoError {
            throw CLIFailure(path: input, error: error)
        } catch let error as CLIFailure {
            throw error
        } catch {
            throw CLIFailure(path: input, reason: "\(error)")
        }
        if needsOneFrame {
            guard frameIndex < image.frames.count else {
                throw CLIFailure(path: input, reason: "has \(image.frames.count) frame(s); frame \(frameIndex) does not exist")
            }
            if image.frames.count > 1 { image = image.frame(at: frameIndex) }
        }
        if let finalSize, finalSize != image.pixelSize { image = image.resized(to: finalSize) }

        switch target {
        case .pam:
            // The header, then the frame's own pixels: no second full-size buffer.
            try writeFile([PAMWriter.header(width: image.width, height: image.height), image.frames[0].pixels], to: output)
        case .format(let format):
            let encoded: Data
            do {
                encoded = try ImageCodecRegistry.shared.encode(image, as: format, options: EncodingOptions(quality: quality, lossless: lossless))
            } catch {
                throw CLIFailure(path: output, error: error)
            }
            try writeFile(encoded, to: output)
        }
    }

    /// A JPEG or a TIFF written as PAM without a whole-picture buffer: the header, then each
    /// strip of rows as it is decoded. `false` when the rows cannot come in order (a picture to
    /// turn, a TIFF read through libtiff's whole-picture interface), leaving the ordinary decode
    /// to do it.
    private func streamPAM(
        _ file: InputFile, options: DecodingOptions,
        decodeRows: (_ start: (PixelSize) -> Void,
                     _ rows: (UnsafeBufferPointer<UInt8>, Int, Int) -> Bool) throws(AlcedoError) -> Bool
    ) throws -> Bool {
        var writer: AtomicFileWriter?
        var openFailure: CLIFailure?
        let streamed = try decodeRows({ size in
            do throws(CLIFailure) {
                let opened = try AtomicFileWriter(path: output)
                PAMWriter.header(width: size.width, height: size.height).withUnsafeBytes { opened.write($0) }
                writer = opened
            } catch {
                openFailure = error
            }
        }, { strip, _, _ in
            guard let writer else { return false }
            writer.write(UnsafeRawBufferPointer(strip))
            return true
        })
        if let openFailure { throw openFailure }
        guard streamed else { return false }
        try writer?.commit()
        return true
    }

    private enum OutputTarget {
        case pam
        case format(ImageFormat)

        var isAnimatable: Bool {
            if case .format(let format) = self { return format == .gif || format == .webp || format == .avif || format == .jxl }
            return false
        }
    }

    private func outputTarget() throws(CLIFailure) -> OutputTarget {
        let word = format ?? URL(fileURLWithPath: output).pathExtension
        if word.lowercased() == "pam" { return .pam }
        guard let format = ImageFormat(fileExtension: word),
              ImageCodecRegistry.shared.encodableFormats.contains(format) else {
            let known = (ImageCodecRegistry.shared.encodableFormats.map(\.rawValue) + ["pam"]).sorted().joined(separator: ", ")
            let what = word.isEmpty ? "no output format: give --format or an extension" : "cannot write format \"\(word)\""
            throw CLIFailure(path: output, reason: "\(what) (known: \(known))")
        }
        return .format(format)
    }
}

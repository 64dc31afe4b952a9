#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The memory one decode, process and encode of an image needs at its peak, estimated from the
/// source's header before any pixel is decoded: what a ``MemoryBudget`` reservation is made of.
///
/// The parts, all in bytes:
/// - ``sourceBytes``: the encoded source, held while it decodes;
/// - ``decoded``: the decoded frames, at the size the decoder produces for the target
///   (JPEG's DCT scaling to 1/2, 1/4 or 1/8, WebP's scaled decode, the box shrink of PNG and
///   GIF), RGBA8, all frames held unless only the first is decoded;
/// - ``decoderWorking``: the decoder's own buffers (a progressive JPEG's whole-image
///   coefficient buffer, a box shrink's sums, an animation's canvas, AVIF's planes at the
///   header's bit depth and chroma layout, HEIF's planes);
/// - ``processing``: the resampler's intermediate rows and the processed frames;
/// - ``encoding``: the encoder's copy of the pixels, its own state and its output.
public struct WorkingSetEstimate: Sendable, Equatable, CustomStringConvertible {
    /// The size the decoder produces.
    public var decodedSize: PixelSize
    /// The frames decoded and held at once.
    public var framesHeld: Int
    /// The processed size: what the processor makes of the decoded size
    /// (``DecodingOptions/processedSize``), else the decoding target's size without enlarging,
    /// else the decoded size.
    public var outputSize: PixelSize
    /// Bytes of the encoded source.
    public var sourceBytes: Int
    /// Bytes of the decoded frames.
    public var decoded: Int
    /// Bytes of the decoder's own buffers.
    public var decoderWorking: Int
    /// Bytes of the processing: the resampler's buffers and the processed frames.
    public var processing: Int
    /// Bytes of the encoding of the processed frames.
    public var encoding: Int

    /// The peak: the source and the decoded frames, which stay alive while the processed ones
    /// are made and encoded, plus the larger of the decoder's own buffers (freed when decoding
    /// ends, before processing starts) and the processing with its encoding. Counting both
    /// at once refused a 12 MP AVIF resized to 1300 px (planes 45 MB, resampling 70 MB) at the
    /// default budget, though its resident peak is about 90 MB.
    public var total: Int {
        Self.saturatingSum([sourceBytes, decoded, max(decoderWorking, Self.saturatingSum([processing, encoding]))])
    }

    /// The sum of `parts`, `Int.max` when it does not fit.
    static func saturatingSum(_ parts: [Int]) -> Int {
        parts.reduce(0) { sum, part in
            let (value, overflow) = sum.addingReportingOverflow(part)
            return overflow ? Int.max : value
        }
    }

    /// What is still needed once decoding and processing are done: the processed frames and
    /// their encoding (a reservation can shrink to this for the store step).
    public var afterProcessing: Int {
        let processed = Self.bytes(outputSize, frames: framesHeld)
        let (value, overflow) = processed.addingReportingOverflow(encoding)
        return overflow ? Int.max : value
    }

    public var description: String {
        "\(MemoryBudgetErrorReason.megabytes(total)) (decoded \(decodedSize) x \(framesHeld) frame(s) "
            + "\(MemoryBudgetErrorReason.megabytes(decoded)), decoder \(MemoryBudgetErrorReason.megabytes(decoderWorking)), "
            + "processing \(MemoryBudgetErrorReason.megabytes(processing)), encoding \(MemoryBudgetErrorReason.megabytes(encoding)), "
            + "source \(MemoryBudgetErrorReason.megabytes(sourceBytes)))"
    }

    /// Fixed costs of one encode besides the pixels, by format: libwebp's and the AV1
    /// encoder's state, zlib's window, libjpeg's tables (rounded up).
    static func encoderOverhead(_ format: ImageFormat?) -> Int {
        switch format {
        case .avif, .heic, .heif: return 24 << 20
        case .webp: return 2 << 20
        case .png, .apng: return 1 << 20
        default: return 1 << 20
        }
    }

    /// Bytes of encoder state per output pixel besides the pixels, by format: a JPEG's
    /// optimised Huffman pass keeps every coefficient (3 bytes a pixel at 4:2:0 and 4:4:4 on
    /// average), WebP and AVIF convert to YUV planes and keep reference data.
    static func encoderBytesPerPixel(_ format: ImageFormat?) -> Int {
        switch format {
        case .jpeg: return 3 + 1
        case .webp: return 6
        case .avif, .heic, .heif: return 12
        case .png, .apng, .gif: return 2
        case nil: return 6
        default: return 4
        }
    }

    /// Estimates the working set of decoding an image whose header says `info` with
    /// `options` (its target size, content mode, first-frame setting and the processor's
    /// ``DecodingOptions/processedSize``), then processing it to that size and encoding it as
    /// `outputFormat` (`nil`: not known, costed as WebP).
    /// - Parameters:
    ///   - info: the source's header, as ``ImageCodecRegistry/info(for:options:)`` reads it.
    ///   - sourceBytes: the encoded source's size (default 0).
    ///   - coefficientBytes: a progressive JPEG's coefficient buffer (default 0).
    ///   - options: how it will be decoded.
    ///   - outputFormat: the format the result is encoded in (default `nil`).
    public static func estimate(info: ImageInfo, sourceBytes: Int = 0, coefficientBytes: Int = 0,
                                options: DecodingOptions, outputFormat: ImageFormat? = nil) -> WorkingSetEstimate {
        let width = max(1, info.width), height = max(1, info.height)
        let full = PixelSize(width: width, height: height)
        let frames = options.firstFrameOnly ? 1 : max(1, info.frameCount)
        var decodedSize = full
        var working = 0
        switch info.format {
        case .jpeg:
            let denominator = JPEGDecoder.scaleDenominator(width: width, height: height, options: options)
            decodedSize = PixelSize(width: (width + denominator - 1) / denominator, height: (height + denominator - 1) / denominator)
            // The coefficient buffer, and libjpeg's strip of rows and colour conversion.
            working = coefficientBytes + width * 16 * 4
        case .webp:
            if let scaled = WebPDecoder.scaledSize(width: width, height: height, options: options) {
                decodedSize = PixelSize(width: scaled.width, height: scaled.height)
            }
            // An animation composites on a full canvas and decodes each frame apart.
            working = frames > 1 ? 2 * bytes(full, frames: 1) : decodedSize.width * 64
        case .png, .apng, .gif:
            let factor = options.boxShrinkFactor(width: width, height: height)
            if factor > 1 {
                decodedSize = PixelSize(width: (width + factor - 1) / factor, height: (height + factor - 1) / factor)
                working = BoxShrinker.memory(width: width, height: height, factor: factor)
            } else {
                working = width * 16
            }
            // Animations composite on a full canvas and keep a copy for "previous" disposal.
            if frames > 1 { working += 2 * bytes(full, frames: 1) }
        case .avif:
            working = avifPlaneBytes(info: info, width: width, height: height)
        case .heic, .heif:
            // The decoder's YUV planes (up to 16 bits a sample) and its RGB conversion.
            working = width * height * 8
        default:
            working = bytes(full, frames: 1)
        }
        let decoded = bytes(decodedSize, frames: frames)
        let output = processedSize(decoded: decodedSize, full: full, options: options)
        // The processed frames, the resampler's rows (it streams: boxed rows are made and
        // filtered as its bands need them, into a ring of filtered rows) and whatever the
        // processor holds besides its input and result (a rotated or cropped copy).
        var processing = bytes(output, frames: frames)
        if output != decodedSize {
            processing = saturatingSum([processing, ResamplerPlan.workingMemory(from: decodedSize, to: output)])
        }
        if let hint = options.processedSize {
            let (copies, overflow) = hint.intermediateBytes(for: decodedSize).multipliedReportingOverflow(by: frames)
            processing = saturatingSum([processing, overflow ? Int.max : copies])
        }
        let encoding = bytes(output, frames: frames) + output.width * output.height * encoderBytesPerPixel(outputFormat) * min(frames, 2)
            + encoderOverhead(outputFormat)
        return WorkingSetEstimate(decodedSize: decodedSize, framesHeld: frames, outputSize: output, sourceBytes: max(0, sourceBytes),
                                  decoded: decoded, decoderWorking: working, processing: processing, encoding: encoding)
    }

    /// Estimates the working set of decoding `data` with `options` (reading its header with
    /// `registry`'s decoder), processing it to the target and encoding it as `outputFormat`.
    /// - Throws: the header's error when it does not read (the decode would fail the same way).
    public static func estimate(data: Data, options: DecodingOptions, registry: ImageCodecRegistry = .shared,
                                outputFormat: ImageFormat? = nil) throws(AlcedoError) -> WorkingSetEstimate {
        try estimate(data: data, options: options, registry: registry, outputFormat: { _ in outputFormat })
    }

    /// ``estimate(data:options:registry:outputFormat:)`` with the output format chosen from the header.
    static func estimate(data: Data, options: DecodingOptions, registry: ImageCodecRegistry,
                         outputFormat: (ImageInfo) -> ImageFormat?) throws(AlcedoError) -> WorkingSetEstimate {
        var coefficientBytes = 0
        let info: ImageInfo
        if ImageFormat.sniff(data) == .jpeg, registry.decoder(for: .jpeg) is JPEGDecoder {
            (info, coefficientBytes) = try JPEGDecompression.withHeader(of: .data(data)) { (_, header) throws(AlcedoError) in
                let upright = header.uprightSize(appliesOrientation: options.appliesOrientation)
                return (ImageInfo(format: .jpeg, width: upright.width, height: upright.height), header.coefficientBytes)
            }
        } else {
            info = try registry.info(for: data, options: options)
        }
        return estimate(info: info, sourceBytes: data.count, coefficientBytes: coefficientBytes, options: options,
                        outputFormat: outputFormat(info))
    }

    /// Estimates the working set of processing a decoded `image` to `options`' target and
    /// encoding it as `outputFormat` (nothing to decode).
    public static func estimate(image: AlcedoImage, options: DecodingOptions, outputFormat: ImageFormat? = nil) -> WorkingSetEstimate {
        var info = ImageInfo(format: .unknown, width: image.width, height: image.height, frameCount: image.frames.count)
        info.hasAlpha = false
        var estimate = estimate(info: info, options: options, outputFormat: outputFormat)
        // Already decoded and held by whoever passed it: nothing to decode.
        estimate.decodedSize = image.pixelSize
        estimate.decoded = 0
        estimate.decoderWorking = 0
        return estimate
    }

    /// The size the processing makes of a decode to `decoded` (of a source of `full`): the
    /// processor's own answer (``DecodingOptions/processedSize``, enlarged only when the
    /// processor enlarges), else ``outputSize(of:target:mode:)`` for the target, else the
    /// decoded size. At most 2^17 a side: larger results are refused by the processors.
    static func processedSize(decoded: PixelSize, full: PixelSize, options: DecodingOptions) -> PixelSize {
        if let hint = options.processedSize {
            let size = hint(decoded)
            return PixelSize(width: min(size.width, 1 << 17), height: min(size.height, 1 << 17))
        }
        return options.targetSize.map { outputSize(of: full, target: $0, mode: options.contentMode) } ?? decoded
    }

    /// The size `full` is resampled to for `target` under `mode` when nothing more is known:
    /// scaled to fit inside, or to cover and cropped to the target, never enlarged (a target is
    /// what the decoder may shrink to: see ``DecodingOptions/targetSize``).
    static func outputSize(of full: PixelSize, target: PixelSize, mode: ContentMode) -> PixelSize {
        let sx = Double(max(1, target.width)) / Double(full.width)
        let sy = Double(max(1, target.height)) / Double(full.height)
        let scale = min(1, mode == .aspectFit ? min(sx, sy) : max(sx, sy))
        func side(_ length: Int, _ limit: Int) -> Int {
            let scaled = min(Double(1 << 17), (Double(length) * scale).rounded(.up))
            return max(1, mode == .aspectFill ? min(Int(scaled), max(1, limit)) : Int(scaled))
        }
        return PixelSize(width: side(full.width, target.width), height: side(full.height, target.height))
    }

    /// The AV1 decoder's memory for one frame of `width` x `height`: its coded planes (the
    /// header's bit depth and chroma layout: 1.5 samples a pixel at 4:2:0, 3 at 4:4:4; 2 bytes a
    /// sample above 8 bits) plus an alpha plane, and a quarter more for the decoder's frame
    /// context and filter rows. A 12 MP 8-bit AVIF needs about 23 MB at 4:2:0 and 45 MB at
    /// 4:4:4 (measured: 23 and 38 MB). A header that does not say is costed at 8 bytes a pixel
    /// (16-bit 4:4:4 planes and more).
    static func avifPlaneBytes(info: ImageInfo, width: Int, height: Int) -> Int {
        let pixels = width * height
        let samplesTimesTwo: Int  // samples a pixel, doubled (4:2:0 has 1.5)
        switch info.colorModel {
        case "yuv444": samplesTimesTwo = 6
        case "yuv422": samplesTimesTwo = 4
        case "yuv420": samplesTimesTwo = 3
        case "yuv400": samplesTimesTwo = 2
        default: return pixels * 8
        }
        guard let depth = info.bitDepth, depth > 0 else { return pixels * 8 }
        let bytesPerSample = depth > 8 ? 2 : 1
        let planes = pixels * bytesPerSample * (samplesTimesTwo + (info.hasAlpha ? 2 : 0)) / 2
        return planes + planes / 4
    }

    static func bytes(_ size: PixelSize, frames: Int) -> Int {
        let (pixels, overflow1) = size.width.multipliedReportingOverflow(by: size.height)
        let (perFrame, overflow2) = pixels.multipliedReportingOverflow(by: 4)
        let (all, overflow3) = perFrame.multipliedReportingOverflow(by: max(1, frames))
        return overflow1 || overflow2 || overflow3 ? Int.max : all
    }
}

import CGIF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes GIF files into fully composited RGBA8 frames: giflib reads the records, Alcedo's
/// own LZW decoder (`GIFLZWDecoder`) the image data.
///
/// The file is read record by record (never with `DGifSlurp`), so the limits in
/// ``DecodingOptions/limits`` are checked before anything is allocated: the logical screen
/// against ``DecodingLimits/maxPixelCount`` before the canvas exists, each frame's own size
/// before it is decompressed, and the frame count and total bytes
/// (``DecodingLimits/maxFrameCount``, ``DecodingLimits/maxTotalBytes``) before each frame is
/// kept. Rows that fall below the canvas are skipped undecoded; the pixels decoded for all
/// frames together (at each frame's full width, which may exceed the canvas) are held to
/// ``DecodingLimits/maxTotalBytes`` as well, at 4 bytes a pixel. The canvas is the newest
/// output frame itself (a frame is copied only when the next one draws over it); the working
/// memory besides it (the copy of the area a "restore to previous" frame covers, one row of
/// indices, the LZW dictionary) is checked against ``DecodingLimits/maxWorkingMemory`` before
/// each frame, and ``DecodingLimits/decodingTimeout`` before each frame and every band of rows.
///
/// ## LZW minimum code size
/// Sizes outside the specification's 2-8 decode as browsers decode them: Chromium accepts any
/// size below 12 and decodes the stream as it states, and so does Alcedo (a literal code above
/// 255 stands for its low 8 bits); a size of 12 or more makes the frame `.corrupt`. giflib,
/// which refuses sizes over 8, is not used for image data.
///
/// ## Compositing
/// Frames are composited on the logical screen as browsers do (see `GIFCompositor`): the
/// canvas starts transparent, frames are placed at their offsets and clipped to the canvas,
/// the transparent index of the graphic control extension leaves pixels untouched, and the
/// disposal methods 0-3 are applied. Interlaced frames are de-interlaced. A frame uses its
/// local colour table, else the global one, else a grey ramp (index *i* is grey level *i*);
/// an index past the end of the table is opaque black.
///
/// ## Timing and looping
/// Frame delays (centiseconds) go through ``AlcedoImage/normalizedFrameDuration(_:)``: a
/// missing delay or one of 10 ms or less becomes 100 ms. ``AlcedoImage/loopCount`` counts how
/// many times the animation plays, as browsers play it: no `NETSCAPE2.0` (or `ANIMEXTS1.0`)
/// extension plays once (1); a loop count of 0 plays forever (0); a loop count of N repeats N
/// times after the first play (N + 1). ``GIFEncoder`` writes the inverse. A GIF with a single
/// frame is a still image: duration 0 and loop count 0.
///
/// ## Damaged files
/// A frame whose data stops early (an end code before its last pixel) keeps the rows it has,
/// as browsers show them. A file that ends mid-record is `.truncated`; with
/// ``DecodingOptions/allowTruncated`` the frames completed before the cut are returned instead,
/// provided there is at least one. A file that ends exactly between records (without the
/// trailer byte) is complete. Bytes after the trailer are ignored, and so is anything after the
/// last complete frame that does not start a record (browsers stop there too); before the
/// first frame, such bytes are `.corrupt`.
///
/// ## Decode-time scaling
/// With ``DecodingOptions/targetSize``, a GIF whose picture is one frame (a single-frame file,
/// or the first frame with ``DecodingOptions/firstFrameOnly``) shrinks while it decodes, by the
/// largest integer factor that keeps it at least twice the size the target needs (blocks
/// averaged on premultiplied alpha, the uncovered screen transparent): no full-size canvas is
/// allocated. Animations are decoded at full size.
public struct GIFDecoder: ImageDecoding {
    /// `.gif`.
    public var format: ImageFormat { .gif }

    /// Creates a GIF decoder.
    public init() {}

    /// Reads the screen size, frame count, loop count and delays without decompressing frames
    /// (their compressed data is skipped). `hasAlpha` is `true` when a frame has a transparent
    /// index or does not cover the whole canvas. Limits are not applied.
    public func info(for data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> ImageInfo {
        try withBytes(of: data) { bytes throws(AlcedoError) in
            var reading = try read(bytes, options: options, composite: false)
            if options.colorManagement != .ignore {
                reading.info.colorProfile = EmbeddedProfileReader.gifICCProfile(bytes).flatMap { ImageColorProfile(iccData: $0) }
            }
            return reading
        }.info
    }

    /// Decodes every frame (only the first with ``DecodingOptions/firstFrameOnly``).
    /// - Throws: `.decodingError` with `.emptyData`, `.invalidHeader`, `.truncated`,
    ///   `.corrupt`, `.tooManyPixels`, `.tooManyFrames` or `.animationTooLarge`.
    public func decode(_ data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> AlcedoImage {
        var plan = ColorPlan.none
        let result = try withBytes(of: data) { bytes throws(AlcedoError) in
            if options.colorManagement != .ignore {
                plan = ColorPlan.forRGBA(iccData: EmbeddedProfileReader.gifICCProfile(bytes), mode: options.colorManagement, format: .gif)
            }
            return try read(bytes, options: options, composite: true)
        }
        let info = result.info
        guard !result.frames.isEmpty else {
            throw .decodingError(reason: .corrupt(format: .gif, message: "the file holds no image"))
        }
        let frames = result.frames.count == 1 ? [AlcedoImage.Frame(pixels: result.frames[0].pixels)] : result.frames
        let image = AlcedoImage(width: result.size?.width ?? info.width, height: result.size?.height ?? info.height, frames: frames,
                                loopCount: frames.count == 1 ? 0 : info.loopCount, sourceFormat: .gif)
        return plan.transform == nil && plan.metadata == ImageColorMetadata() ? image : plan.apply(to: image)
    }

    /// The loop count of ``AlcedoImage/loopCount`` (plays, 0 = forever) for a file with
    /// `frameCount` frames whose `NETSCAPE2.0` extension states `loops` (`nil`: no extension).
    static func playCount(netscapeLoops loops: Int?, frameCount: Int) -> Int {
        guard frameCount > 1 else { return 0 }
        guard let loops else { return 1 }
        return loops == 0 ? 0 : loops + 1
    }

    private func withBytes<Result>(of data: Data, _ body: (UnsafeRawBufferPointer) throws(AlcedoError) -> Result)
        throws(AlcedoError) -> Result {
        guard !data.isEmpty else { throw .decodingError(reason: .emptyData) }
        let result: Swift.Result<Result, AlcedoError> = data.withUnsafeBytes { raw in
            Swift.Result { () throws(AlcedoError) -> Result in try body(raw) }
        }
        return try result.get()
    }

    /// What one pass over the file found.
    private struct Reading {
        var info: ImageInfo
        var frames: [AlcedoImage.Frame]
        /// The size of the frames when they were shrunk while decoding.
        var size: PixelSize?
    }

    /// Reads the whole file; with `composite`, decodes and composites the frames too.
    private func read(_ bytes: UnsafeRawBufferPointer, options: DecodingOptions, composite: Bool) throws(AlcedoError) -> Reading {
        let reader = try GIFFileReader(bytes)
        let width = reader.screenWidth, height = reader.screenHeight
        if composite {
            try options.limits.check(width: width, height: height, format: .gif)
        } else if width <= 0 || height <= 0 {
            throw .decodingError(reason: .invalidHeader(format: .gif, message: "image size \(width)x\(height) is not positive"))
        }
        let deadline = options.limits.startDeadline(format: .gif)
        // A still picture (the first frame, or the only one) decoded for a target size shrinks
        // while it decodes: no canvas, only the block sums of a box shrink.
        // The frame count, from a pass that skips the image data: the last frame needs nothing
        // prepared for its disposal. `nil` when the file does not read to its end.
        let frameCount = composite && !options.firstFrameOnly
            ? (try? read(bytes, options: options, composite: false))?.info.frameCount : nil
        var shrinker: BoxShrinker?
        // An animation decoded for a target size keeps each composited frame shrunk.
        var frameShrinker: BoxShrinker?
        if composite, options.targetSize != nil {
            let factor = options.boxShrinkFactor(width: width, height: height)
            if factor > 1 {
                try options.limits.checkWorkingMemory(BoxShrinker.memory(width: width, height: height, factor: factor),
                                                      what: "a \(factor)x shrink of a \(width)x\(height) screen", format: .gif)
                if options.firstFrameOnly || frameCount == 1 {
                    shrinker = BoxShrinker(width: width, height: height, factor: factor)
                } else {
                    frameShrinker = BoxShrinker(width: width, height: height, factor: factor)
                }
            }
        }
        defer {
            shrinker?.deallocate()
            frameShrinker?.deallocate()
        }
        let keptSize = frameShrinker.map { PixelSize(width: $0.outWidth, height: $0.outHeight) }
        // Only a decode allocates the canvas.
        let canvasSize = composite && shrinker == nil
        var compositor = GIFCompositor(width: canvasSize ? width : 0, height: canvasSize ? height : 0,
                                       keepsOutputs: frameShrinker == nil)
        var frames: [AlcedoImage.Frame] = []
        var delays: [Int?] = []
        var loops: Int?
        var hasAlpha = false
        var control: GIFGraphicControl?
        var decodedBytes = 0

        do throws(AlcedoError) {
            reading: while true {
                switch try reader.nextRecord() {
                case .end:
                    // A graphic control extension announces an image: data that stops after one is cut short.
                    if control != nil && !reader.sawTrailer {
                        throw AlcedoError.decodingError(reason: .truncated(format: .gif, message: "the data ends before the image its graphic control extension announces"))
                    }
                    break reading
                case .unknown:
                    // Junk after the last complete frame ends the file, as browsers read it.
                    guard !delays.isEmpty else {
                        throw AlcedoError.decodingError(reason: .corrupt(format: .gif, message: "unknown data before the first image"))
                    }
                    break reading
                case .extension(let label, let firstBlock):
                    if label == Int(ALCEDO_GIF_GRAPHICS_EXT), let firstBlock, let parsed = GIFGraphicControl(firstBlock) {
                        control = parsed
                    }
                    let isLoop = label == Int(ALCEDO_GIF_APPLICATION_EXT) && firstBlock.map(GIFGraphicControl.isLoopExtension) == true
                    // The first sub-block has been read; read or skip the rest, up to the terminator.
                    while firstBlock != nil, let block = try reader.nextExtensionBlock() {
                        if isLoop, loops == nil, block.count >= 3, block[0] == 1 { loops = Int(block[1]) | Int(block[2]) << 8 }
                    }
                case .image(let descriptor):
                    let area = GIFCompositor.Area(left: descriptor.left, top: descriptor.top, frameWidth: descriptor.width,
                                                  frameHeight: descriptor.height, canvasWidth: width, canvasHeight: height)
                    if control?.transparentIndex != nil || area.width < width || area.height < height { hasAlpha = true }
                    if composite {
                        let isLast = frameCount == frames.count + 1
                        try options.limits.check(frameCount: frames.count + 1, width: keptSize?.width ?? width,
                                                 height: keptSize?.height ?? height, format: .gif)
                        if descriptor.width > 0 && descriptor.height > 0 {
                            try options.limits.check(width: descriptor.width, height: descriptor.height, format: .gif)
                        }
                        // Rows are decoded up to the last one that shows on the canvas, at the frame's full
                        // width: frames far larger than the canvas count against the byte limit too.
                        let rows = descriptor.rowOrder
                        let rowsNeeded = area.isEmpty ? 0 : (rows.lastIndex { $0 < area.height }.map { $0 + 1 } ?? 0)
                        decodedBytes += rowsNeeded * descriptor.width * 4
                        if decodedBytes > options.limits.maxTotalBytes {
                            throw AlcedoError.decodingError(reason: .animationTooLarge(format: .gif, bytes: decodedBytes,
                                                                                       limit: options.limits.maxTotalBytes))
                        }
                        try options.limits.checkWorkingMemory(
                            GIFDecoder.workingMemory(restoreCopy: compositor.restoreCopyBytes(area: area, disposal: control?.disposal ?? 0,
                                                                                              isLast: isLast),
                                                     frameWidth: descriptor.width),
                            what: "frame \(frames.count + 1) (its row, LZW dictionary and the canvas area it restores)",
                            format: .gif)
                        try deadline.check()
                        try draw(descriptor, rows: rows[..<rowsNeeded], area: area, control: control,
                                 globalColors: reader.globalColors, reader: reader, on: &compositor, shrinker: shrinker,
                                 isLast: isLast, deadline: deadline)
                        let seconds = control.map { Double($0.delay) / 100 }
                        if let shrinker {
                            let pixels = [UInt8](unsafeUninitializedCapacity: shrinker.outWidth * shrinker.outHeight * 4) { out, count in
                                shrinker.finish(into: out.baseAddress!)
                                count = out.count
                            }
                            frames.append(AlcedoImage.Frame(pixels: pixels))
                            delays.append(control?.delay)
                            break reading
                        }
                        let duration = AlcedoImage.normalizedFrameDuration(seconds)
                        if let frameShrinker {
                            frames.append(AlcedoImage.Frame(pixels: GIFDecoder.shrink(compositor.canvas, with: frameShrinker),
                                                            duration: duration))
                        } else {
                            frames.append(AlcedoImage.Frame(pixels: compositor.canvas, duration: duration))
                        }
                    } else {
                        try reader.skipImageData()
                    }
                    delays.append(control?.delay)
                    control = nil
                    if composite && options.firstFrameOnly { break reading }
                }
            }
        } catch {
            let truncated: Bool
            if case .truncated? = error.decodingReason { truncated = true } else { truncated = false }
            guard truncated, options.allowTruncated, !delays.isEmpty else { throw error }
        }
        if delays.isEmpty {
            throw .decodingError(reason: reader.sawTrailer ? .corrupt(format: .gif, message: "the file holds no image")
                : .truncated(format: .gif, message: "the data ends before the first image"))
        }
        let count = delays.count
        let durations = count == 1 ? [0] : delays.map { AlcedoImage.normalizedFrameDuration($0.map { Double($0) / 100 }) }
        let info = ImageInfo(format: .gif, width: width, height: height, frameCount: count,
                             loopCount: GIFDecoder.playCount(netscapeLoops: loops, frameCount: count),
                             frameDurations: durations, hasAlpha: hasAlpha)
        return Reading(info: info, frames: frames,
                       size: shrinker.map { PixelSize(width: $0.outWidth, height: $0.outHeight) } ?? keptSize)
    }

    /// Decodes the first `rows.count` rows of a frame (in storage order; `rows` gives each one's
    /// place in the frame), draws them on the canvas and skips the rest of the frame's data.
    private func draw(_ descriptor: GIFImageDescriptor, rows: ArraySlice<Int>, area: GIFCompositor.Area,
                      control: GIFGraphicControl?, globalColors: [UInt8]?, reader: GIFFileReader,
                      on canvas: inout GIFCompositor, shrinker: BoxShrinker? = nil, isLast: Bool,
                      deadline: DecodingDeadline) throws(AlcedoError) {
        if shrinker == nil { canvas.beginFrame(area: area, disposal: control?.disposal ?? 0, isLast: isLast) }
        guard !rows.isEmpty else {
            try reader.skipImageData()
            return
        }
        var decoder = try reader.imageDataDecoder()
        let palette = GIFGraphicControl.palette(local: descriptor.localColors, global: globalColors,
                                                transparentIndex: control?.transparentIndex)
        let row = UnsafeMutablePointer<UInt8>.allocate(capacity: descriptor.width)
        defer { row.deallocate() }
        var budget = 0
        for y in rows {
            guard try decoder.readRow(into: row, count: descriptor.width) else { break }
            if y < area.height {
                if let shrinker {
                    GIFDecoder.expand(row, count: area.width, palette: palette, into: shrinker.row)
                    shrinker.add(y: area.y + y, x: area.x, dx: 1, count: area.width)
                } else {
                    canvas.drawRow(row, count: area.width, x: area.x, y: area.y + y, palette: palette)
                }
            }
            // The deadline is checked per band of rows (about 256 KiB of pixels).
            budget += descriptor.width
            if budget >= 1 << 18 {
                budget = 0
                try deadline.check()
            }
        }
        // Rows below the canvas, and sub-blocks after the last row, are skipped undecoded.
        try reader.endImageData(&decoder)
    }

    /// The composited canvas shrunk by `shrinker` (reset first), as a kept frame.
    private static func shrink(_ canvas: [UInt8], with shrinker: BoxShrinker) -> [UInt8] {
        shrinker.reset()
        canvas.withUnsafeBufferPointer { pixels in
            for y in 0..<shrinker.height {
                shrinker.add(row: pixels.baseAddress! + y * shrinker.width * 4, y: y)
            }
        }
        return [UInt8](unsafeUninitializedCapacity: shrinker.outWidth * shrinker.outHeight * 4) { out, count in
            shrinker.finish(into: out.baseAddress!)
            count = out.count
        }
    }

    /// Writes `count` indices of `row` as RGBA through `palette` (the transparent index: alpha 0).
    private static func expand(_ row: UnsafeMutablePointer<UInt8>, count: Int, palette: [UInt8],
                               into rgba: UnsafeMutablePointer<UInt8>) {
        palette.withUnsafeBufferPointer { colors in
            for i in 0..<count {
                let entry = Int(row[i]) * 4
                rgba[i * 4] = colors[entry]
                rgba[i * 4 + 1] = colors[entry + 1]
                rgba[i * 4 + 2] = colors[entry + 2]
                rgba[i * 4 + 3] = colors[entry + 3]
            }
        }
    }

    /// The working memory of drawing a frame, besides the canvas (which is the newest output
    /// frame): the copy of the area a "restore to previous" frame must take (`restoreCopy`,
    /// from ``GIFCompositor/restoreCopyBytes(area:disposal:)``), one row of indices and the
    /// LZW dictionary.
    static func workingMemory(restoreCopy: Int, frameWidth: Int) -> Int {
        restoreCopy + frameWidth + GIFLZWDecoder.workingMemory
    }
}

/// The graphic control extension of a GIF frame, and the colour tables it affects.
struct GIFGraphicControl: Equatable {
    /// The disposal method, 0-7.
    var disposal: Int
    /// The delay in centiseconds.
    var delay: Int
    /// The transparent palette index, if any.
    var transparentIndex: Int?

    /// Parses the extension's first sub-block (packed fields, delay, transparent index), or
    /// returns `nil` when it is shorter than the 4 bytes it must have.
    init?(_ block: [UInt8]) {
        guard block.count >= 4 else { return nil }
        disposal = Int(block[0] >> 2) & 0x07
        delay = Int(block[1]) | Int(block[2]) << 8
        transparentIndex = block[0] & 0x01 != 0 ? Int(block[3]) : nil
    }

    init(disposal: Int, delay: Int, transparentIndex: Int?) {
        self.disposal = disposal
        self.delay = delay
        self.transparentIndex = transparentIndex
    }

    /// `true` for the application identifiers that carry a loop count.
    static func isLoopExtension(_ identifier: [UInt8]) -> Bool {
        identifier == Array("NETSCAPE2.0".utf8) || identifier == Array("ANIMEXTS1.0".utf8)
    }

    /// 256 RGBA entries for a frame: the local table, else the global one, else a grey ramp;
    /// entries past the table are opaque black; the transparent index has alpha 0.
    static func palette(local: [UInt8]?, global: [UInt8]?, transparentIndex: Int?) -> [UInt8] {
        var palette = [UInt8](repeating: 0, count: 256 * 4)
        let table = local ?? global
        for index in 0..<256 {
            if let table {
                if index * 3 + 2 < table.count {
                    palette[index * 4] = table[index * 3]
                    palette[index * 4 + 1] = table[index * 3 + 1]
                    palette[index * 4 + 2] = table[index * 3 + 2]
                }
            } else {
                palette[index * 4] = UInt8(index)
                palette[index * 4 + 1] = UInt8(index)
                palette[index * 4 + 2] = UInt8(index)
            }
            palette[index * 4 + 3] = 255
        }
        if let transparentIndex, (0..<256).contains(transparentIndex) {
            palette[transparentIndex * 4..<transparentIndex * 4 + 4] = [0, 0, 0, 0]
        }
        return palette
    }
}

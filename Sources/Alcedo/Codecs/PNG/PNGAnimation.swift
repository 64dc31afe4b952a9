import CPNG

/// The frames of an animated PNG (APNG): each frame's data (`IDAT` for a default image that
/// is part of the animation, `fdAT` otherwise) is inflated in place by ``PNGRasterDecoder``
/// with the frame's size and the file's sample conversion, and composited on the canvas with
/// the frame's blend and dispose operations.
struct PNGAnimation {
    /// One `fcTL` chunk and the data chunks that follow it.
    struct FrameControl: Equatable {
        var x: Int, y: Int, width: Int, height: Int
        /// Seconds, not yet normalised.
        var delay: Double
        /// 0 none, 1 background (clear to transparent), 2 previous.
        var dispose: Int
        /// 0 source (replace), 1 over (alpha-composite).
        var blend: Int
        /// The frame's data chunks (`IDAT` or `fdAT`).
        var data: [PNGChunk] = []
        var fromDefaultImage = false
    }

    /// How many times the animation plays (0: forever), from `acTL`.
    var plays: Int
    var frames: [FrameControl]

    /// Reads `acTL`, `fcTL` and `fdAT`; `nil` when they do not describe a valid animation
    /// (the file then decodes as its default image, as APNG-unaware readers show it).
    init?(_ structure: PNGStructure, bytes: UnsafeRawBufferPointer) {
        func u32(_ offset: Int) -> Int { Int(PNGChunkValidator.readUInt32(bytes, at: offset)) }
        func u16(_ offset: Int) -> Int { Int(bytes[offset]) << 8 | Int(bytes[offset + 1]) }
        var declaredFrames = 0
        var plays = 0
        var frames: [FrameControl] = []
        var sequence = 0
        var sawIDAT = false
        for chunk in structure.chunks {
            let start = chunk.data.lowerBound
            switch chunk.type {
            case PNGChunk.acTL:
                declaredFrames = u32(start)
                plays = u32(start + 4)
            case PNGChunk.fcTL:
                guard u32(start) == sequence else { return nil }
                sequence += 1
                let denominator = u16(start + 22)
                let frame = FrameControl(x: u32(start + 12), y: u32(start + 16), width: u32(start + 4), height: u32(start + 8),
                                         delay: Double(u16(start + 20)) / Double(denominator == 0 ? 100 : denominator),
                                         dispose: Int(bytes[start + 24]), blend: Int(bytes[start + 25]))
                guard frame.width > 0, frame.height > 0, frame.x + frame.width <= structure.width,
                      frame.y + frame.height <= structure.height, frame.dispose <= 2, frame.blend <= 1 else { return nil }
                if let last = frames.last, last.data.isEmpty { return nil }
                frames.append(frame)
            case PNGChunk.IDAT:
                if !sawIDAT, let last = frames.indices.last, frames[last].data.isEmpty {
                    // The default image is the first frame: it must cover the canvas.
                    guard last == 0, frames[0].x == 0, frames[0].y == 0, frames[0].width == structure.width,
                          frames[0].height == structure.height else { return nil }
                    frames[0].fromDefaultImage = true
                }
                sawIDAT = true
                if frames.count == 1 && frames[0].fromDefaultImage { frames[0].data.append(chunk) }
            case PNGChunk.fdAT:
                guard chunk.data.count > 4, u32(start) == sequence, let last = frames.indices.last,
                      !frames[last].fromDefaultImage else { return nil }
                sequence += 1
                frames[last].data.append(chunk)
            default:
                break
            }
        }
        guard declaredFrames == frames.count, !frames.isEmpty, frames.allSatisfy({ !$0.data.isEmpty }) else { return nil }
        self.plays = plays
        self.frames = frames
    }

    /// Decodes and composites every frame. Each frame's data is inflated straight from its
    /// chunks in the file with the file's own sample conversion (built once): no chunk is
    /// copied or parsed again per frame, however large the colour chunks are.
    ///
    /// Working memory, checked against ``DecodingLimits/maxWorkingMemory`` before each frame:
    /// two rows, the frame's own pixels when it is blended over the canvas (a frame that
    /// replaces its area is decoded straight into the canvas) plus, for a frame disposed to
    /// "previous" right after another such frame, the copy of the canvas area it covers (other
    /// "previous" frames restore from the output frames kept). The canvas is the newest output
    /// frame itself (shared, copied only when the next frame draws), counted by
    /// ``DecodingLimits/maxTotalBytes``.
    func decode(_ structure: PNGStructure, bytes: UnsafeRawBufferPointer, conversion: PNGSampleConversion,
                limits: DecodingLimits, deadline: DecodingDeadline) throws(AlcedoError) -> [AlcedoImage.Frame] {
        // APNG's dispose operations are GIF's disposal methods: none keeps (1), background
        // clears (2), previous restores (3), the first frame's "previous" clearing too.
        var output: [AlcedoImage.Frame] = []
        try limits.check(frameCount: frames.count, width: structure.width, height: structure.height, format: .apng)
        var compositor = GIFCompositor(width: structure.width, height: structure.height)
        for (index, frame) in frames.enumerated() {
            let isLast = index == frames.count - 1
            try deadline.check()
            // A frame that replaces its area is decoded straight into the canvas; one blended
            // over it is decoded apart first.
            let frameBytes = frame.blend == 1 ? frame.width * frame.height * 4 : 0
            let area = GIFCompositor.Area(x: frame.x, y: frame.y, width: frame.width, height: frame.height)
            let saved = compositor.restoreCopyBytes(area: area, disposal: frame.dispose + 1, isLast: isLast)
            try limits.checkWorkingMemory(frameBytes + saved, what: "a \(frame.width)x\(frame.height) frame"
                                          + (saved > 0 ? " and the canvas area it restores" : ""), format: .apng)
            let data = frame.data.map { chunk in
                chunk.type == PNGChunk.IDAT ? chunk.data : (chunk.data.lowerBound + 4)..<chunk.data.upperBound
            }
            compositor.beginFrame(area: area, disposal: frame.dispose + 1, isLast: isLast)
            if frame.blend == 1 {
                let pixels = try PNGDecoder.decodePixels(bytes, data: data, width: frame.width, height: frame.height,
                                                         interlaced: structure.interlaced, conversion: conversion,
                                                         limits: limits, deadline: deadline, format: .apng)
                compositor.drawPixels(pixels, area: area, blendsOver: true)
            } else {
                var raster = PNGRasterDecoder(width: frame.width, height: frame.height, interlaced: structure.interlaced,
                                              conversion: conversion, format: .apng)
                raster.outputWidth = structure.width
                raster.originX = frame.x
                raster.originY = frame.y
                try compositor.withCanvas { canvas throws(AlcedoError) in
                    _ = try raster.decode(bytes, data: data, into: canvas, limits: limits, deadline: deadline)
                }
            }
            output.append(AlcedoImage.Frame(pixels: compositor.canvas, duration: AlcedoImage.normalizedFrameDuration(frame.delay)))
        }
        return output
    }
}

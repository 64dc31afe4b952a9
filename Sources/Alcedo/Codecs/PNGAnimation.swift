import CPNG

/// The frames of an animated PNG (APNG), decoded without APNG support in libpng: each frame's
/// data (`IDAT` for a default image that is part of the animation, `fdAT` otherwise) is
/// rebuilt into a standalone PNG with the frame's size and the file's colour chunks, decoded
/// with the simplified API, and composited on the canvas with the frame's blend and dispose
/// operations.
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

    /// Decodes and composites every frame.
    func decode(_ structure: PNGStructure, bytes: UnsafeRawBufferPointer, limits: DecodingLimits)
        throws(AlcedoError) -> [AlcedoImage.Frame] {
        // APNG's dispose operations are GIF's disposal methods: none keeps (1), background
        // clears (2), previous restores (3), the first frame's "previous" clearing too.
        var compositor = GIFCompositor(width: structure.width, height: structure.height)
        var output: [AlcedoImage.Frame] = []
        for (index, frame) in frames.enumerated() {
            try limits.check(frameCount: index + 1, width: structure.width, height: structure.height, format: .apng)
            let png = PNGAnimation.standalonePNG(for: frame, structure: structure, bytes: bytes)
            let decoded: Result<[UInt8], AlcedoError> = png.withUnsafeBytes { raw in
                Result { () throws(AlcedoError) -> [UInt8] in
                    let frameStructure = try PNGChunkValidator.validate(raw, format: .apng)
                    return try PNGDecoder.decodePixels(raw, structure: frameStructure, limits: limits, format: .apng)
                }
            }
            let pixels = try decoded.get()
            let area = GIFCompositor.Area(x: frame.x, y: frame.y, width: frame.width, height: frame.height)
            compositor.beginFrame(area: area, disposal: frame.dispose + 1)
            compositor.drawPixels(pixels, area: area, blendsOver: frame.blend == 1)
            output.append(AlcedoImage.Frame(pixels: compositor.canvas, duration: AlcedoImage.normalizedFrameDuration(frame.delay)))
        }
        return output
    }

    /// A PNG of the frame alone: `IHDR` with the frame's size, the colour chunks of the file,
    /// the frame's data as `IDAT` (an `fdAT` without its sequence number), `IEND`.
    static func standalonePNG(for frame: FrameControl, structure: PNGStructure, bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var png = PNGChunkValidator.signature
        var header = PNGChunk.bigEndian(UInt32(frame.width)) + PNGChunk.bigEndian(UInt32(frame.height))
        header += [UInt8(structure.bitDepth), UInt8(structure.colorType), 0, 0, structure.interlaced ? 1 : 0]
        PNGChunk.append(type: PNGChunk.IHDR, data: header, to: &png)
        let colour: Set<UInt32> = [PNGChunk.PLTE, PNGChunk.tRNS, PNGChunk.gAMA, PNGChunk.sRGB, PNGChunk.cHRM, PNGChunk.iCCP,
                                   PNGChunk.sBIT]
        for chunk in structure.chunks {
            if chunk.type == PNGChunk.IDAT { break }
            if colour.contains(chunk.type) { png += bytes[chunk.whole] }
        }
        for chunk in frame.data {
            if chunk.type == PNGChunk.IDAT {
                png += bytes[chunk.whole]
            } else {
                PNGChunk.append(type: PNGChunk.IDAT, data: bytes[(chunk.data.lowerBound + 4)..<chunk.data.upperBound], to: &png)
            }
        }
        PNGChunk.append(type: PNGChunk.IEND, data: [UInt8](), to: &png)
        return png
    }
}

import CGIF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes an image, animated or still, as a GIF89a with giflib.
///
/// ## Colours
/// Pixels with alpha below 128 are written as the transparent index (and decode as
/// transparent black); other pixels are written opaque. When all frames together use at most
/// 256 colours (255 with transparency), one exact global palette is written and decoding gives
/// back the same pixels (transparent pixels as `(0, 0, 0, 0)`). Otherwise each frame gets its
/// own local palette from `GIFColorQuantizer` (median cut), and the pixels are mapped to it
/// with Floyd-Steinberg error diffusion at ``dithering`` (default 0: none). Dithering keeps a
/// smooth gradient's local averages (no bands) but adds pixel noise: measured with SSIM on
/// luma, it scores lower than the plain mapping on photographs and on gradients alike, and the
/// files grow, so it is off unless asked for. An exact palette is never dithered.
///
/// ## Animation
/// Every frame is written whole, with its duration rounded to centiseconds (0 to 655.35 s;
/// readers, this one included, show delays of 10 ms or less as 100 ms). The disposal method
/// makes decoders reproduce the frames exactly: a frame followed by one with transparent pixels
/// is disposed to background (2), so the next frame starts from a clear canvas; otherwise it is
/// kept (1). ``AlcedoImage/loopCount`` becomes the `NETSCAPE2.0` loop count as
/// ``GIFDecoder`` reads it back: 0 (forever) is written as 0, 1 (play once) as no extension,
/// N as N - 1 repeats (at most 65,535). A still image has no loop extension.
/// ``EncodingOptions/quality`` is ignored.
public struct GIFEncoder: ImageEncoding {
    /// `.gif`.
    public var format: ImageFormat { .gif }

    /// How much of each pixel's quantisation error is spread to its neighbours when a frame
    /// needs a reduced palette: 0 (no dithering, the default) to 1 (all of it, plain
    /// Floyd-Steinberg); values outside 0...1 are clamped when encoding.
    public var dithering: Double

    /// Creates a GIF encoder.
    /// - Parameter dithering: the error diffusion level, 0...1 (default 0: none).
    public init(dithering: Double = 0) {
        self.dithering = dithering
    }

    /// Encodes every frame of `image`.
    /// - Throws: `.encodingError(.imageNotEncodable)` when a side is over 65,535 pixels,
    ///   `.encodingError(.libraryFailure)` when giflib fails.
    public func encode(_ image: AlcedoImage, options: EncodingOptions = .default) throws(AlcedoError) -> Data {
        guard image.width <= 65_535, image.height <= 65_535 else {
            throw .encodingError(reason: .imageNotEncodable(format: .gif, message: "\(image.width)x\(image.height) is over GIF's 65535 pixels a side"))
        }
        let pixels = image.frames.map(\.pixels)
        let frames: [GIFColorQuantizer.Result]
        let global: GIFColorQuantizer.Result?
        if let exact = GIFColorQuantizer.exactColors(of: pixels, limit: 256) {
            frames = pixels.map { GIFColorQuantizer.exact($0, colors: exact.colors, hasTransparency: exact.hasTransparency) }
            global = frames.first
        } else {
            let level = dithering.isFinite ? min(1, max(0, dithering)) : 0
            frames = pixels.map { GIFColorQuantizer.quantize($0, width: image.width, dithering: level) }
            global = nil
        }
        let hasTransparency = frames.map { frame in frame.transparentIndex.map { t in frame.indices.contains(UInt8(t)) } ?? false }

        let writer = try GIFFileWriter()
        try writer.putScreen(width: image.width, height: image.height, palette: global?.palette)
        let animated = image.frames.count > 1
        if animated, let loops = GIFEncoder.netscapeLoops(forPlayCount: image.loopCount) {
            try writer.putLoopExtension(loops)
        }
        for (index, frame) in frames.enumerated() {
            if animated || frame.transparentIndex != nil {
                let next = (index + 1) % frames.count
                let disposal = animated && hasTransparency[next] ? Int(ALCEDO_DISPOSE_BACKGROUND) : Int(ALCEDO_DISPOSE_DO_NOT)
                let centiseconds = animated ? min(65_535, max(0, Int((image.frames[index].duration * 100).rounded()))) : 0
                try writer.putGraphicControl(disposal: disposal, delay: centiseconds, transparentIndex: frame.transparentIndex)
            }
            try writer.putImage(width: image.width, height: image.height, indices: frame.indices,
                                palette: global == nil ? frame.palette : nil)
        }
        return try writer.finish()
    }

    /// The `NETSCAPE2.0` loop count for ``AlcedoImage/loopCount`` (plays, 0 = forever), or
    /// `nil` when the animation plays once and needs no extension.
    static func netscapeLoops(forPlayCount plays: Int) -> Int? {
        if plays <= 0 { return 0 }
        if plays == 1 { return nil }
        return min(plays - 1, 65_535)
    }
}

/// Writes a GIF into memory with giflib's low-level `EGif*` calls.
final class GIFFileWriter {
    private var file: UnsafeMutablePointer<GifFileType>?
    fileprivate var output: [UInt8] = []

    init() throws(AlcedoError) {
        var error: Int32 = 0
        file = EGifOpen(Unmanaged.passUnretained(self).toOpaque(), gifWriteToMemory, &error)
        guard let file else { throw GIFFileWriter.failure(code: error) }
        EGifSetGifVersion(file, true)
    }

    deinit {
        if let file { EGifCloseFile(file, nil) }
    }

    /// The logical screen, with the global palette (RGB triples) when there is one.
    func putScreen(width: Int, height: Int, palette: [UInt8]?) throws(AlcedoError) {
        let map = try palette.map { (rgb) throws(AlcedoError) in try GIFFileWriter.colorMap(rgb) }
        defer { if let map { GifFreeMapObject(map) } }
        try check(EGifPutScreenDesc(file, Int32(width), Int32(height), 8, 0, map))
    }

    /// A `NETSCAPE2.0` application extension with loop count `loops`.
    func putLoopExtension(_ loops: Int) throws(AlcedoError) {
        let identifier = Array("NETSCAPE2.0".utf8)
        let data: [UInt8] = [1, UInt8(loops & 0xFF), UInt8(loops >> 8)]
        try check(EGifPutExtensionLeader(file, ALCEDO_GIF_APPLICATION_EXT))
        try check(EGifPutExtensionBlock(file, Int32(identifier.count), identifier))
        try check(EGifPutExtensionBlock(file, Int32(data.count), data))
        try check(EGifPutExtensionTrailer(file))
    }

    /// A graphic control extension.
    func putGraphicControl(disposal: Int, delay: Int, transparentIndex: Int?) throws(AlcedoError) {
        var block = GraphicsControlBlock(DisposalMode: Int32(disposal), UserInputFlag: false, DelayTime: Int32(delay),
                                         TransparentColor: Int32(transparentIndex ?? Int(ALCEDO_NO_TRANSPARENT_COLOR)))
        var bytes = [UInt8](repeating: 0, count: 4)
        let length = EGifGCBToExtension(&block, &bytes)
        try check(EGifPutExtension(file, ALCEDO_GIF_GRAPHICS_EXT, Int32(length), bytes))
    }

    /// A whole-canvas image of `indices`, with a local palette (RGB triples) when given.
    func putImage(width: Int, height: Int, indices: [UInt8], palette: [UInt8]?) throws(AlcedoError) {
        let map = try palette.map { (rgb) throws(AlcedoError) in try GIFFileWriter.colorMap(rgb) }
        defer { if let map { GifFreeMapObject(map) } }
        try check(EGifPutImageDesc(file, 0, 0, Int32(width), Int32(height), false, map))
        var pixels = indices  // giflib masks the pixels in place
        try check(EGifPutLine(file, &pixels, Int32(pixels.count)))
    }

    /// Writes the trailer and returns the file.
    func finish() throws(AlcedoError) -> Data {
        guard let file else { throw GIFFileWriter.failure(code: 0) }
        self.file = nil
        var error: Int32 = 0
        guard EGifCloseFile(file, &error) == ALCEDO_GIF_OK else { throw GIFFileWriter.failure(code: error) }
        return Data(output)
    }

    private func check(_ status: Int32) throws(AlcedoError) {
        guard status == ALCEDO_GIF_OK else { throw GIFFileWriter.failure(code: file?.pointee.Error ?? 0) }
    }

    /// A giflib colour map of `rgb`, padded with black to a power of two (at least 2 entries).
    private static func colorMap(_ rgb: [UInt8]) throws(AlcedoError) -> UnsafeMutablePointer<ColorMapObject> {
        let count = rgb.count / 3
        var size = 2
        while size < count { size *= 2 }
        var colors = [GifColorType](repeating: GifColorType(Red: 0, Green: 0, Blue: 0), count: size)
        for index in 0..<count {
            colors[index] = GifColorType(Red: rgb[index * 3], Green: rgb[index * 3 + 1], Blue: rgb[index * 3 + 2])
        }
        guard let map = GifMakeMapObject(Int32(size), colors) else {
            throw .encodingError(reason: .libraryFailure(format: .gif, message: "could not make a colour map of \(size) entries"))
        }
        return map
    }

    private static func failure(code: Int32) -> AlcedoError {
        let message = GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
        return .encodingError(reason: .libraryFailure(format: .gif, message: message))
    }
}

/// giflib's write callback: the user data is the ``GIFFileWriter``.
private func gifWriteToMemory(_ file: UnsafeMutablePointer<GifFileType>?, _ bytes: UnsafePointer<GifByteType>?,
                              _ count: Int32) -> Int32 {
    guard let file, let bytes, count >= 0, let user = file.pointee.UserData else { return 0 }
    let writer = Unmanaged<GIFFileWriter>.fromOpaque(user).takeUnretainedValue()
    writer.output.append(contentsOf: UnsafeBufferPointer(start: bytes, count: Int(count)))
    return count
}

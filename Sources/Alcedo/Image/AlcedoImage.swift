#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A decoded image: one or more frames of RGBA8 pixels, ready to process, encode or cache.
///
/// ## Pixel layout
/// Every frame holds `width * height * 4` bytes, rows top to bottom with no padding, each
/// pixel as red, green, blue, alpha, 8 bits each, in the sRGB values the file carried.
/// Alpha is **straight** (not premultiplied): that is what PNG, GIF and WebP store and what
/// every encoder expects, so decoding and re-encoding is lossless and fully transparent
/// pixels keep their colour. The resampler and the compositing processors premultiply
/// internally where the arithmetic needs it.
///
/// ## Orientation
/// The EXIF orientation of the source is already applied: `width` and `height` are those of
/// the upright picture. ``orientation`` records what the source said, for information.
///
/// ## Animation
/// Animated images carry fully composited frames (disposal and blending already done), each
/// with its display ``Frame/duration``. ``loopCount`` 0 means "loop forever".
///
/// ## Colour
/// By default the decoders convert the pixels to sRGB from the profile the file carried
/// (see ``ColorManagement``); ``colorMetadata`` says which profile that was and, under
/// ``ColorManagement/preserve``, the profile the pixels are still in.
///
/// The value is copy-on-write: copies share their pixel storage until one is mutated.
public struct AlcedoImage: Sendable, Equatable {
    /// One fully composited frame of an image.
    public struct Frame: Sendable, Equatable {
        /// `width * height * 4` bytes of RGBA8, straight alpha, rows top to bottom.
        public var pixels: [UInt8]
        /// How long the frame is shown, in seconds (0 for a still image).
        public var duration: Double

        /// Creates a frame from its pixels and its display duration in seconds (default 0).
        public init(pixels: [UInt8], duration: Double = 0) {
            self.pixels = pixels
            self.duration = duration
        }
    }

    /// Width in pixels of the upright image.
    public let width: Int
    /// Height in pixels of the upright image.
    public let height: Int
    /// The frames, at least one. A still image has exactly one.
    public let frames: [Frame]
    /// How many times an animation plays; 0 means forever (the default), as in GIF's NETSCAPE extension.
    public let loopCount: Int
    /// The format of the bytes this image was decoded from (`.unknown` for an image built in memory).
    public let sourceFormat: ImageFormat
    /// The EXIF orientation of the source, already applied to the pixels (default `.up`).
    public let orientation: ImageOrientation
    /// The colour profile the source carried and the one the pixels are in (default: none, sRGB).
    public let colorMetadata: ImageColorMetadata
    /// The EXIF, XMP and IPTC blocks the source carried (default `nil`: not read; read under
    /// ``DecodingOptions/readsMetadata``, written by encoders under ``EncodingOptions/writesMetadata``).
    public var metadata: EmbeddedMetadata?
    /// Pixels per point (Kingfisher's and UIKit's `scale`; default 1). The pixels stay as they
    /// are: only the size in points (`size`: ``pixelSize`` divided by this) depends on it. The
    /// pipeline sets it to ``AlcedoOptionsInfoItem/scaleFactor(_:)`` on every image it gives.
    public var pointScale: Double = 1
    /// The size of the whole picture when the decoder scaled it while decoding (for
    /// ``DecodingOptions/targetSize``), turned as the decoded pixels are; `nil` when it was
    /// decoded at full size or is not known (set by ``ImageCodecRegistry/decode(_:options:)``,
    /// not kept by the transformations). Geometry defined on the source's own pixels uses it.
    public var scaledFrom: PixelSize?

    /// Creates an image from frames. Every frame must hold exactly `width * height * 4` bytes,
    /// and there must be at least one frame: anything else is a programming error and traps.
    public init(
        width: Int, height: Int, frames: [Frame], loopCount: Int = 0,
        sourceFormat: ImageFormat = .unknown, orientation: ImageOrientation = .up,
        colorMetadata: ImageColorMetadata = ImageColorMetadata()
    ) {
        precondition(width > 0 && height > 0, "AlcedoImage needs a positive size, got \(width)x\(height)")
        precondition(!frames.isEmpty, "AlcedoImage needs at least one frame")
        let expected = width * height * 4
        precondition(frames.allSatisfy { $0.pixels.count == expected },
                     "every frame of a \(width)x\(height) AlcedoImage must hold \(expected) bytes")
        self.width = width
        self.height = height
        self.frames = frames
        self.loopCount = max(0, loopCount)
        self.sourceFormat = sourceFormat
        self.orientation = orientation
        self.colorMetadata = colorMetadata
    }

    /// Creates a still image from one buffer of RGBA8 pixels (straight alpha).
    public init(width: Int, height: Int, pixels: [UInt8],
                sourceFormat: ImageFormat = .unknown, orientation: ImageOrientation = .up,
                colorMetadata: ImageColorMetadata = ImageColorMetadata()) {
        self.init(width: width, height: height, frames: [Frame(pixels: pixels)],
                  sourceFormat: sourceFormat, orientation: orientation, colorMetadata: colorMetadata)
    }

    /// The pixels of the first frame.
    public var pixels: [UInt8] { frames[0].pixels }

    /// The size in pixels (``width`` by ``height``). Kingfisher's `size` is in points: see
    /// ``pointScale``.
    public var pixelSize: PixelSize { PixelSize(width: width, height: height) }

    /// A copy whose ``pointScale`` is `scale` (values not above 0 count as 1); the pixels are shared.
    public func withPointScale(_ scale: Double) -> AlcedoImage {
        var image = self
        image.pointScale = scale > 0 && scale.isFinite ? scale : 1
        return image
    }

    /// `true` when the image has more than one frame.
    public var isAnimated: Bool { frames.count > 1 }

    /// The sum of all frame durations, in seconds.
    public var totalDuration: Double { frames.reduce(0) { $0 + $1.duration } }

    /// Memory cost in bytes: the decoded pixels of all frames. This is what memory caches count.
    public var costInBytes: Int { frames.count * width * height * 4 }

    /// `true` when any pixel of any frame is not fully opaque.
    public var hasAlpha: Bool {
        frames.contains { frame in
            frame.pixels.withUnsafeBytes { bytes in
                // Runs of 1,024 pixels ANDed together (a loop that vectorises), stopping at
                // the first run with a pixel that is not opaque.
                var offset = 0
                while offset < bytes.count {
                    let end = Swift.min(offset + 4096, bytes.count)
                    if !ResamplerBox.isOpaque(UnsafeRawBufferPointer(rebasing: bytes[offset..<end])) { return true }
                    offset = end
                }
                return false
            }
        }
    }

    /// The RGBA value at (`x`, `y`) of frame `frame` (default the first).
    public func pixel(x: Int, y: Int, frame: Int = 0) -> RGBA {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel (\(x), \(y)) is outside \(width)x\(height)")
        let offset = (y * width + x) * 4
        let p = frames[frame].pixels
        return RGBA(red: p[offset], green: p[offset + 1], blue: p[offset + 2], alpha: p[offset + 3])
    }

    /// A copy holding only frame `index` as a still image (the loop count is dropped).
    public func frame(at index: Int) -> AlcedoImage {
        var image = AlcedoImage(width: width, height: height, frames: [Frame(pixels: frames[index].pixels)],
                                sourceFormat: sourceFormat, orientation: orientation, colorMetadata: colorMetadata)
        image.metadata = metadata
        image.pointScale = pointScale
        return image
    }

    /// A copy with other frames, keeping loop count, format, orientation and colour metadata.
    public func replacingFrames(_ newFrames: [Frame], width newWidth: Int? = nil, height newHeight: Int? = nil) -> AlcedoImage {
        var image = AlcedoImage(width: newWidth ?? width, height: newHeight ?? height, frames: newFrames,
                                loopCount: loopCount, sourceFormat: sourceFormat, orientation: orientation,
                                colorMetadata: colorMetadata)
        image.metadata = metadata
        image.pointScale = pointScale
        return image
    }

    /// A copy with other colour metadata (the pixels are not changed).
    public func withColorMetadata(_ metadata: ImageColorMetadata) -> AlcedoImage {
        var image = AlcedoImage(width: width, height: height, frames: frames, loopCount: loopCount,
                                sourceFormat: sourceFormat, orientation: orientation, colorMetadata: metadata)
        image.metadata = self.metadata
        image.pointScale = pointScale
        return image
    }

    /// The duration browsers and Kingfisher use for a frame whose delay is missing or at most
    /// 10 ms: such a delay becomes 100 ms. Decoders of animated formats call this.
    /// - Parameter seconds: the delay the file states, or `nil` when it states none.
    public static func normalizedFrameDuration(_ seconds: Double?) -> Double {
        guard let seconds, seconds > 0.010 + 1e-9 else { return 0.1 }
        return seconds
    }
}

/// One pixel: red, green, blue and straight alpha, 8 bits each.
public struct RGBA: Sendable, Hashable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    public var alpha: UInt8

    /// Creates a pixel; alpha defaults to 255 (opaque).
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    public static let clear = RGBA(red: 0, green: 0, blue: 0, alpha: 0)
    public static let black = RGBA(red: 0, green: 0, blue: 0)
    public static let white = RGBA(red: 255, green: 255, blue: 255)

    public var description: String { "RGBA(\(red), \(green), \(blue), \(alpha))" }
}

/// A size in whole pixels.
public struct PixelSize: Sendable, Hashable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// The number of pixels, `width * height`.
    public var pixelCount: Int { width * height }

    public var description: String { "\(width)x\(height)" }

    /// Parses `"WxH"` (for example `"256x256"`), or returns `nil` when the text is not two
    /// positive integers joined by `x`.
    public init?(parsing text: some StringProtocol) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
        self.init(width: w, height: h)
    }

    /// The largest size with this size's aspect ratio that fits inside `bounds`, never larger
    /// than this size (no upscaling), and at least 1x1.
    public func fitting(in bounds: PixelSize) -> PixelSize {
        let scale = min(Double(bounds.width) / Double(width), Double(bounds.height) / Double(height), 1)
        return scaled(by: scale)
    }

    /// The smallest size with this size's aspect ratio that covers `bounds`, never larger than
    /// this size (no upscaling), and at least 1x1.
    public func filling(_ bounds: PixelSize) -> PixelSize {
        let scale = min(max(Double(bounds.width) / Double(width), Double(bounds.height) / Double(height)), 1)
        return scaled(by: scale)
    }

    /// This size times `scale`, rounded to whole pixels and at least 1x1.
    public func scaled(by scale: Double) -> PixelSize {
        PixelSize(width: max(1, Int((Double(width) * scale).rounded())),
                  height: max(1, Int((Double(height) * scale).rounded())))
    }
}

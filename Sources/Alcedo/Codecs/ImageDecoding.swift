#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Decodes the bytes of one image format into an ``AlcedoImage``.
///
/// Conforming types are registered with an ``ImageCodecRegistry`` under their ``format``.
/// A decoder must never trap, exit or read past `data` on hostile input: every failure is an
/// ``AlcedoError/decodingError(reason:)`` naming the format and what was wrong, and the
/// pixel limits in ``DecodingOptions/limits`` are checked from the header before any pixel
/// buffer is allocated.
public protocol ImageDecoding: Sendable {
    /// The format this decoder reads.
    var format: ImageFormat { get }

    /// Reads the header (and, for animations, the frame table) without decoding pixels.
    func info(for data: Data, options: DecodingOptions) throws(AlcedoError) -> ImageInfo

    /// Decodes `data` into an upright image with EXIF orientation applied.
    ///
    /// When ``DecodingOptions/targetSize`` is set, the decoder may scale while decoding (JPEG
    /// DCT scaling, WebP scaled decode) to the smallest size it can produce that still covers
    /// ``DecodingOptions/minimumScale(forWidth:height:)``; the caller resamples to the exact size.
    func decode(_ data: Data, options: DecodingOptions) throws(AlcedoError) -> AlcedoImage
}

/// What a decoder learns from a file's header, without decoding pixels.
public struct ImageInfo: Sendable, Equatable {
    /// The sniffed container format.
    public var format: ImageFormat
    /// Width of the upright picture (after EXIF orientation).
    public var width: Int
    /// Height of the upright picture (after EXIF orientation).
    public var height: Int
    /// Number of frames (1 for a still image).
    public var frameCount: Int
    /// Loop count of an animation; 0 means forever (and is the value for still images).
    public var loopCount: Int
    /// Display duration of each frame in seconds, normalised as in
    /// ``AlcedoImage/normalizedFrameDuration(_:)`` (`[0]` for a still image).
    public var frameDurations: [Double]
    /// The EXIF orientation the file states (`.up` when it states none).
    public var orientation: ImageOrientation
    /// `true` when the file can carry transparency (an alpha channel, tRNS, a transparent index).
    public var hasAlpha: Bool
    /// The colour profile the file carries (`nil`: none, unreadable, or read with
    /// ``ColorManagement/ignore``). Set by the decoders that read profiles.
    public var colorProfile: ImageColorProfile? = nil
    /// The number of pages (TIFF directories); 1 for single-page formats. ``frameCount``
    /// counts animation frames, not pages: decoders return one page, chosen by ``DecodingOptions/page``.
    public var pageCount: Int = 1
    /// The stored bit depth in the format's own terms: bits a sample for TIFF and AVIF, bits a
    /// pixel for BMP and icon bitmaps (`nil` when the decoder does not report it).
    public var bitDepth: Int? = nil
    /// The stored compression in the format's own words (`"lzw"`, `"deflate"`, `"rle8"`,
    /// `"bitfields"`, `"none"`…), `nil` when the decoder does not report it.
    public var compression: String? = nil
    /// How the samples are stored (`"rgb"`, `"rgba"`, `"gray"`, `"gray+alpha"`, `"palette"`,
    /// `"cmyk"`, `"ycbcr"`…; for AVIF the planes' chroma layout, `"yuv444"`, `"yuv422"`,
    /// `"yuv420"` or `"yuv400"`), `nil` when the decoder does not report it.
    public var colorModel: String? = nil
    /// Every entry of an icon or cursor directory (ICO, CUR), in file order; empty for other formats.
    public var entries: [IconEntry] = []

    public init(format: ImageFormat, width: Int, height: Int, frameCount: Int = 1, loopCount: Int = 0,
                frameDurations: [Double] = [0], orientation: ImageOrientation = .up, hasAlpha: Bool = false) {
        self.format = format
        self.width = width
        self.height = height
        self.frameCount = frameCount
        self.loopCount = loopCount
        self.frameDurations = frameDurations
        self.orientation = orientation
        self.hasAlpha = hasAlpha
    }

    /// Sum of the frame durations, in seconds.
    public var totalDuration: Double { frameDurations.reduce(0, +) }
}

/// One image of an icon (ICO) or cursor (CUR) file, as its own header describes it.
public struct IconEntry: Sendable, Equatable {
    /// Width in pixels, read from the entry's own PNG or bitmap header (the directory's byte may lie).
    public var width: Int
    /// Height in pixels, read from the entry's own header.
    public var height: Int
    /// Bits a pixel (the bitmap's bit count, or the PNG's bit depth times its channels).
    public var bitDepth: Int
    /// How the entry is stored: ``ImageFormat/png`` or ``ImageFormat/bmp`` (a headerless bitmap with an AND mask).
    public var encoding: ImageFormat
    /// The cursor's hot spot (x, y); `nil` for icons.
    public var hotSpot: (x: Int, y: Int)?
    /// Bytes the entry takes in the file.
    public var byteCount: Int

    public init(width: Int, height: Int, bitDepth: Int, encoding: ImageFormat, hotSpot: (x: Int, y: Int)? = nil, byteCount: Int) {
        self.width = width
        self.height = height
        self.bitDepth = bitDepth
        self.encoding = encoding
        self.hotSpot = hotSpot
        self.byteCount = byteCount
    }

    public static func == (lhs: IconEntry, rhs: IconEntry) -> Bool {
        lhs.width == rhs.width && lhs.height == rhs.height && lhs.bitDepth == rhs.bitDepth && lhs.encoding == rhs.encoding
            && lhs.hotSpot?.x == rhs.hotSpot?.x && lhs.hotSpot?.y == rhs.hotSpot?.y && lhs.byteCount == rhs.byteCount
    }
}

/// How a target size is to be met: fit inside it or cover it.
public enum ContentMode: String, Sendable, Hashable {
    /// The whole picture fits inside the target size (aspect ratio kept).
    case aspectFit = "fit"
    /// The picture covers the target size (aspect ratio kept); the excess may be cropped later.
    case aspectFill = "fill"
}

/// Options for one decode.
public struct DecodingOptions: Sendable, Hashable {
    /// A size the caller will resample to, letting the decoder scale while decoding
    /// (default `nil`: full size). Decoders never produce less than the size needed to
    /// reach the target under ``contentMode`` and never upscale.
    public var targetSize: PixelSize?
    /// How ``targetSize`` is to be met (default `.aspectFit`).
    public var contentMode: ContentMode
    /// Decode only the first frame of an animation (default `false`).
    public var firstFrameOnly: Bool
    /// Accept a truncated file and return what was decoded, the rest filled as the library
    /// fills it (libjpeg: grey; default `false`: a truncated file is an error).
    public var allowTruncated: Bool
    /// Apply the EXIF orientation so the result stands upright (default `true`).
    public var appliesOrientation: Bool
    /// Limits that protect against decompression bombs (default ``DecodingLimits/default``).
    public var limits: DecodingLimits
    /// What to do with the file's colour profile (default ``ColorManagement/convertToSRGB``).
    public var colorManagement: ColorManagement
    /// The page of a multi-page file (TIFF) to decode, from 0 (default 0: the first page). A
    /// page past the last is ``DecodingErrorReason/pageOutOfRange(format:page:count:)``;
    /// single-page formats ignore it.
    public var page: Int = 0
    /// For icons and cursors (ICO, CUR): decode the entry whose size is closest to this one
    /// (default `nil`: with ``targetSize`` set, the smallest entry that still covers it, else the
    /// largest entry). Other formats ignore it.
    public var preferredIconSize: PixelSize? = nil
    /// Read the file's EXIF, XMP and IPTC blocks into ``AlcedoImage/metadata`` (default
    /// `false`: not read, `metadata` is `nil`). JPEG, PNG, WebP, HEIC, HEIF, AVIF and JPEG XL
    /// files carry them (EXIF and XMP in the last four), TIFF files their XMP and IPTC.
    public var readsMetadata = false
    /// Decode the thumbnail a HEIC or AVIF file embeds instead of its main image, when it has
    /// one (default `false`; imgproxy's `enforce_thumbnail`). Other formats ignore it.
    public var prefersEmbeddedThumbnail = false
    /// The budget that goes on counting the memory of work a decode leaves running after it
    /// ends (default `nil`: counted nowhere). An SVG render abandoned past
    /// ``DecodingLimits/decodingTimeout`` draws on until librsvg returns and holds its canvas
    /// and filter surfaces until then: they show in the budget's ``MemoryBudget/Snapshot/held``
    /// under ``MemoryBudget/abandonedRendersName`` while the decode's own reservation (and its
    /// place under ``MemoryBudget/maximumConcurrent``) is given back. ``ImageManager`` sets it to
    /// the request's ``AlcedoOptionsInfoItem/memoryBudget(_:)``. Options with different budgets
    /// are not equal.
    public var abandonedWorkBudget: MemoryBudget? {
        get { abandonedWork.budget }
        set { abandonedWork = BudgetIdentity(budget: newValue) }
    }
    private var abandonedWork = BudgetIdentity(budget: nil)

    /// A budget compared by identity.
    private struct BudgetIdentity: Sendable, Hashable {
        let budget: MemoryBudget?
        static func == (a: Self, b: Self) -> Bool { a.budget === b.budget }
        func hash(into hasher: inout Hasher) { hasher.combine(budget.map(ObjectIdentifier.init)) }
    }
    /// What the processor that runs after this decode makes of the decoded size (default `nil`:
    /// the decoded size fitted to or covering ``targetSize`` without enlarging, or the decoded
    /// size itself). Decoders ignore it; ``WorkingSetEstimate`` sizes the processing and the
    /// encoding from it. The pipeline sets it from the request's processor.
    public var processedSize: ProcessedSizeHint? = nil

    public init(targetSize: PixelSize? = nil, contentMode: ContentMode = .aspectFit, firstFrameOnly: Bool = false,
                allowTruncated: Bool = false, appliesOrientation: Bool = true, limits: DecodingLimits = .default,
                colorManagement: ColorManagement = .convertToSRGB) {
        self.targetSize = targetSize
        self.contentMode = contentMode
        self.firstFrameOnly = firstFrameOnly
        self.allowTruncated = allowTruncated
        self.appliesOrientation = appliesOrientation
        self.limits = limits
        self.colorManagement = colorManagement
    }

    /// Default options: full size, all frames, orientation applied, default limits.
    public static let `default` = DecodingOptions()

    /// The smallest scale factor (at most 1) a decoder may apply to a stored picture of
    /// `width` x `height` and still reach ``targetSize`` under ``contentMode``; 1 when no
    /// target is set. `width` and `height` are the upright dimensions.
    public func minimumScale(forWidth width: Int, height: Int) -> Double {
        guard let target = targetSize, width > 0, height > 0 else { return 1 }
        let sx = Double(target.width) / Double(width)
        let sy = Double(target.height) / Double(height)
        let scale = contentMode == .aspectFit ? min(sx, sy) : max(sx, sy)
        return min(1, scale)
    }
}

/// Limits that make a decompression bomb cost nothing: they are checked against the header
/// before any pixel buffer is allocated.
public struct DecodingLimits: Sendable, Hashable {
    /// Largest width x height of one frame (default 100,000,000 pixels: 400 MB of RGBA8).
    public var maxPixelCount: Int
    /// Largest number of frames in an animation (default 2,000).
    public var maxFrameCount: Int
    /// Largest decoded size of all frames together, in bytes (default 512 MiB).
    public var maxTotalBytes: Int
    /// Largest working memory one decoder may allocate besides its output: progressive JPEG
    /// coefficient buffers, 16-bit rows, animation canvases (default 256 MiB). Checked from the
    /// header before the buffer is allocated.
    public var maxWorkingMemory: Int
    /// Longest CPU time that decoding one image may take (default 10 seconds), checked between
    /// rows, scans and frames; past it decoding stops with ``DecodingErrorReason/timedOut(format:limit:)``.
    public var decodingTimeout: Duration

    /// - Parameters:
    ///   - maxPixelCount: largest pixels of one frame (default 100,000,000).
    ///   - maxFrameCount: largest number of frames (default 2,000).
    ///   - maxTotalBytes: largest decoded size of all frames (default 512 MiB).
    ///   - maxWorkingMemory: largest decoder working memory besides the output (default 256 MiB).
    ///   - decodingTimeout: largest CPU time for one image (default 10 s).
    public init(
        maxPixelCount: Int = 100_000_000, maxFrameCount: Int = 2_000, maxTotalBytes: Int = 512 << 20,
        maxWorkingMemory: Int = 256 << 20, decodingTimeout: Duration = .seconds(10)
    ) {
        self.maxPixelCount = maxPixelCount
        self.maxFrameCount = maxFrameCount
        self.maxTotalBytes = maxTotalBytes
        self.maxWorkingMemory = maxWorkingMemory
        self.decodingTimeout = decodingTimeout
    }

    /// 100 MP per frame, 2,000 frames, 512 MiB in all, 256 MiB of working memory, 10 s of CPU.
    public static let `default` = DecodingLimits()

    /// Throws `.tooManyPixels` when a `width` x `height` frame is over ``maxPixelCount`` or
    /// has a non-positive side (`.invalidHeader`).
    public func check(width: Int, height: Int, format: ImageFormat) throws(AlcedoError) {
        guard width > 0, height > 0 else {
            throw .decodingError(reason: .invalidHeader(format: format, message: "image size \(width)x\(height) is not positive"))
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || pixels > maxPixelCount {
            throw .decodingError(reason: .tooManyPixels(format: format, width: width, height: height, limit: maxPixelCount))
        }
    }

    /// Throws when `frameCount` frames of `width` x `height` are over ``maxFrameCount`` or
    /// ``maxTotalBytes``.
    public func check(frameCount: Int, width: Int, height: Int, format: ImageFormat) throws(AlcedoError) {
        if frameCount > maxFrameCount {
            throw .decodingError(reason: .tooManyFrames(format: format, count: frameCount, limit: maxFrameCount))
        }
        let (bytes, overflow) = (width * height * 4).multipliedReportingOverflow(by: frameCount)
        if overflow || bytes > maxTotalBytes {
            throw .decodingError(reason: .animationTooLarge(format: format, bytes: overflow ? Int.max : bytes, limit: maxTotalBytes))
        }
    }

    /// Throws ``DecodingErrorReason/workingMemoryTooLarge(format:what:bytes:limit:)`` when a
    /// decoder's working buffer of `bytes` (named by `what`) is over ``maxWorkingMemory``.
    /// Call it before allocating the buffer.
    public func checkWorkingMemory(_ bytes: Int, what: String, format: ImageFormat) throws(AlcedoError) {
        if bytes < 0 || bytes > maxWorkingMemory {
            throw .decodingError(reason: .workingMemoryTooLarge(
                format: format, what: what, bytes: bytes < 0 ? Int.max : bytes, limit: maxWorkingMemory))
        }
    }

    /// A deadline for one decode, started now on the calling thread's CPU clock.
    public func startDeadline(format: ImageFormat) -> DecodingDeadline {
        DecodingDeadline(limit: decodingTimeout, format: format)
    }
}

/// The CPU-time budget of one decode (``DecodingLimits/decodingTimeout``), measured on the CPU
/// clock of the thread that decodes. Cheap to check (one `clock_gettime`): decoders call
/// ``check()`` between rows, scans and frames.
public struct DecodingDeadline: Sendable {
    /// The CPU time the decode may take.
    public let limit: Duration
    /// The format named in the error.
    public let format: ImageFormat
    private let startNanoseconds: Int64

    /// Starts the clock now, on the calling thread's CPU time.
    public init(limit: Duration, format: ImageFormat) {
        self.limit = limit
        self.format = format
        self.startNanoseconds = Self.threadCPUNanoseconds()
    }

    /// CPU time used on this thread since the deadline started.
    public var elapsed: Duration { .nanoseconds(Self.threadCPUNanoseconds() - startNanoseconds) }

    /// Whether the budget is used up.
    public var isExpired: Bool { elapsed > limit }

    /// Throws ``DecodingErrorReason/timedOut(format:limit:)`` when the budget is used up.
    public func check() throws(AlcedoError) {
        if isExpired { throw .decodingError(reason: .timedOut(format: format, limit: limit)) }
    }

    static func threadCPUNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}

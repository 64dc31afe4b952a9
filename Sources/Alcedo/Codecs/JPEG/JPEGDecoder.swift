import CAlcedoCodecs
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

/// Decodes JPEG with libjpeg-turbo.
///
/// Reads baseline, progressive and arithmetic-coded files, every chroma subsampling,
/// grayscale, RGB, YCbCr, CMYK and YCCK. The output is RGBA8 with alpha 255, decoded with
/// djpeg's default settings (accurate integer IDCT, fancy upsampling), so the pixels match
/// `djpeg` byte for byte.
///
/// - **Orientation**: the EXIF orientation (APP1 tag 0x0112) is applied when
///   ``DecodingOptions/appliesOrientation`` is set (the default), and recorded in
///   ``AlcedoImage/orientation`` either way. With it off, the pixels stay as stored.
/// - **Colour**: the ICC profile in the `APP2` segments (multi-segment profiles included)
///   is applied as ``DecodingOptions/colorManagement`` says (default: converted to sRGB);
///   see ``ColorManagement``. The transform runs on the decoded (scaled) pixels.
/// - **CMYK and YCCK** go through the embedded CMYK profile, or Alcedo's generic CMYK
///   profile when there is none; the samples are taken as Adobe's inverted CMYK when the
///   file has an Adobe `APP14` marker (as Photoshop writes) and as plain CMYK otherwise.
///   Under ``ColorManagement/ignore`` they are always taken as inverted CMYK and turned
///   into RGB as R = C·K/255, as djpeg-based tools do.
/// - **Scaling**: with ``DecodingOptions/targetSize`` set, the file is decoded at the
///   smallest of 1/8, 1/4, 1/2 or full size (libjpeg's DCT scaling) whose size still
///   reaches ``DecodingOptions/minimumScale(forWidth:height:)`` of the upright picture.
/// - **Limits**: ``DecodingOptions/limits`` is checked against the size in the header
///   (full size, even when scaling) before any pixel buffer is allocated. The coefficient
///   buffer libjpeg keeps for a progressive or multi-scan file (width x height x components x
///   2 bytes, rounded to whole MCUs, at any DCT scaling) is checked against
///   ``DecodingLimits/maxWorkingMemory`` before libjpeg allocates it (which is also libjpeg's
///   `max_memory_to_use`), and ``DecodingLimits/decodingTimeout`` is checked inside libjpeg
///   between rows of MCUs, scans and output rows.
/// - **Truncated files**: when the data stops before the image does (the file ends, or a
///   marker appears where compressed data should be) before the last row of MCUs of a scan,
///   or when the scans leave the picture incomplete (a progressive file missing its last
///   scans, a sequential one missing a component), decoding stops at once with
///   ``DecodingErrorReason/truncated(format:message:)``. With ``DecodingOptions/allowTruncated``
///   the partial picture is returned, the missing part grey (baseline) or blurred
///   (progressive), as libjpeg makes it; only a cut inside the header or inside a
///   marker segment between progressive scans still throws `.truncated`. Data that stops inside the last row of
///   MCUs is accepted by default: that is how a file missing only its EOI marker looks, and
///   at most that one row (8 or 16 pixels) is grey.
/// - **Corrupt data** that libjpeg can step over (it warns, e.g. "extraneous bytes before
///   marker", "bad Huffman code", or "premature end of data segment" for a stray marker such
///   as an RST inside a scan) does not fail the decode: like djpeg, browsers and Pillow, the
///   picture libjpeg makes of it is returned (the rest of a scan cut by a stray marker is
///   grey). Only an EOI marker or the end of the data counts as truncation. Data libjpeg
///   cannot step over throws ``DecodingErrorReason/corrupt(format:message:)``
///   (``DecodingErrorReason/invalidHeader(format:message:)`` when it is in the header). A file
///   with more than 1,000 scans, or whose scans together visit its blocks more than 64 times
///   (real files: 3 to 12), is refused as corrupt.
/// - **Not supported** (``DecodingErrorReason/unsupportedFeature(format:message:)``):
///   12-bit and lossless JPEG, hierarchical JPEG, and colour spaces libjpeg cannot name
///   (for example two-component files).
public struct JPEGDecoder: ImageDecoding {
    /// Always ``ImageFormat/jpeg``.
    public var format: ImageFormat { .jpeg }

    /// Creates a JPEG decoder. It holds no state; one value may serve any number of threads.
    public init() {}

    /// Reads the header without decoding pixels.
    ///
    /// The size is that of the upright picture when ``DecodingOptions/appliesOrientation``
    /// is set (the default), else as stored; `orientation` is what the file states. The
    /// size is the full size even when ``DecodingOptions/targetSize`` is set, and it is
    /// reported even when ``DecodingOptions/limits`` would refuse to decode it.
    /// - Throws: ``AlcedoError/decodingError(reason:)`` when the data is empty, is not a JPEG
    ///   or its header is broken, truncated or unsupported.
    public func info(for data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> ImageInfo {
        try info(from: .data(data), options: options)
    }

    /// ``info(for:options:)`` of the JPEG file open at `fileDescriptor`, read from its current
    /// offset through a 64 KB buffer; the descriptor is left open (at an unspecified offset).
    public func info(fileDescriptor: Int32, options: DecodingOptions = .default) throws(AlcedoError) -> ImageInfo {
        try info(from: .fileDescriptor(fileDescriptor), options: options)
    }

    private func info(from source: JPEGDecompression.Source, options: DecodingOptions) throws(AlcedoError) -> ImageInfo {
        try JPEGDecompression.withHeader(of: source) { (_, header) throws(AlcedoError) -> ImageInfo in
            let orientation = header.orientation
            let upright = header.uprightSize(appliesOrientation: options.appliesOrientation)
            var info = ImageInfo(format: .jpeg, width: upright.width, height: upright.height, orientation: orientation)
            if options.colorManagement != .ignore { info.colorProfile = header.iccProfile.flatMap { ImageColorProfile(iccData: $0) } }
            return info
        }
    }

    /// Decodes `data` into an RGBA8 image (alpha 255), upright unless
    /// ``DecodingOptions/appliesOrientation`` is off, scaled down by libjpeg when
    /// ``DecodingOptions/targetSize`` allows. See the type's documentation for truncated,
    /// corrupt and unsupported files.
    /// - Throws: ``AlcedoError/decodingError(reason:)``.
    public func decode(_ data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> AlcedoImage {
        try decode(from: .data(data), options: options)
    }

    /// ``decode(_:options:)`` of the JPEG file open at `fileDescriptor`, read from its current
    /// offset through a 64 KB buffer: the file is never held in memory whole (a 24 MP photo is
    /// about 7 MB; its thumbnail decoded at 1/8 needs a fraction of that). The descriptor is
    /// left open (at an unspecified offset).
    public func decode(fileDescriptor: Int32, options: DecodingOptions = .default) throws(AlcedoError) -> AlcedoImage {
        try decode(from: .fileDescriptor(fileDescriptor), options: options)
    }

    private func decode(from source: JPEGDecompression.Source, options: DecodingOptions) throws(AlcedoError) -> AlcedoImage {
        let deadline = options.limits.startDeadline(format: .jpeg)
        return try JPEGDecompression.withHeader(of: source) { (decompression, header) throws(AlcedoError) -> AlcedoImage in
            let (width, height, plan) = try Self.start(decompression, header, options: options, deadline: deadline)
            let orientation = header.orientation
            guard options.appliesOrientation, orientation != .up else {
                var pixels = try decompression.readPixels(width: width, height: height)
                plan.apply(to: &pixels)
                return AlcedoImage(width: width, height: height, pixels: pixels,
                                   sourceFormat: .jpeg, orientation: orientation, colorMetadata: plan.metadata)
            }
            // Turned strip by strip into the one upright buffer.
            var pixels = try decompression.readPixels(width: width, height: height, turnedBy: orientation)
            plan.apply(to: &pixels)
            let turned = orientation.swapsDimensions ? (width: height, height: width) : (width: width, height: height)
            return AlcedoImage(width: turned.width, height: turned.height, pixels: pixels,
                               sourceFormat: .jpeg, orientation: orientation, colorMetadata: plan.metadata)
        }
    }

    /// Decodes `data` a strip of rows at a time, top to bottom, without ever holding the whole
    /// picture: the memory used is one strip (32 rows) and libjpeg's own state. For writers
    /// that can take rows as they come (`alcedo convert --format pam` uses it).
    ///
    /// The rows are RGBA8, through ``DecodingOptions/colorManagement`` and scaled by
    /// ``DecodingOptions/targetSize`` as ``decode(_:options:)`` would (the DCT-scaled size,
    /// no resampling after it). The limits and the decoding deadline apply as there.
    ///
    /// - Parameters:
    ///   - start: called once, before the first strip, with the size of the rows to come.
    ///   - rows: called with each strip (`rowCount` rows of `width * 4` bytes) and the index of
    ///     its first row; return `false` to stop decoding there.
    /// - Returns: `false`, having decoded nothing and called neither closure, when the rows
    ///   cannot come in order: the file states an EXIF orientation other than `.up` and
    ///   ``DecodingOptions/appliesOrientation`` is set. Use ``decode(_:options:)`` then.
    ///   `true` otherwise, also when `rows` stopped the decode.
    /// - Throws: what ``decode(_:options:)`` throws.
    public func decodeRows(
        _ data: Data, options: DecodingOptions = .default,
        start: (PixelSize) -> Void,
        rows: (_ strip: UnsafeBufferPointer<UInt8>, _ firstRow: Int, _ rowCount: Int) -> Bool
    ) throws(AlcedoError) -> Bool {
        try decodeRows(from: .data(data), options: options, start: start, rows: rows)
    }

    /// ``decodeRows(_:options:start:rows:)`` of the JPEG file open at `fileDescriptor`, read
    /// from its current offset through a 64 KB buffer: neither the file nor the picture is held
    /// whole. The descriptor is left open (at an unspecified offset).
    public func decodeRows(
        fileDescriptor: Int32, options: DecodingOptions = .default,
        start: (PixelSize) -> Void,
        rows: (_ strip: UnsafeBufferPointer<UInt8>, _ firstRow: Int, _ rowCount: Int) -> Bool
    ) throws(AlcedoError) -> Bool {
        try decodeRows(from: .fileDescriptor(fileDescriptor), options: options, start: start, rows: rows)
    }

    private func decodeRows(
        from source: JPEGDecompression.Source, options: DecodingOptions,
        start: (PixelSize) -> Void,
        rows: (_ strip: UnsafeBufferPointer<UInt8>, _ firstRow: Int, _ rowCount: Int) -> Bool
    ) throws(AlcedoError) -> Bool {
        let deadline = options.limits.startDeadline(format: .jpeg)
        return try JPEGDecompression.withHeader(of: source) { (decompression, header) throws(AlcedoError) -> Bool in
            guard !options.appliesOrientation || header.orientation == .up else { return false }
            let (width, height, plan) = try Self.start(decompression, header, options: options, deadline: deadline)
            start(PixelSize(width: width, height: height))
            try decompression.readStrips(width: width, height: height, stripRows: 32) { strip, firstRow, count in
                plan.apply(to: strip)
                return rows(UnsafeBufferPointer(strip), firstRow, count)
            }
            return true
        }
    }

    /// Checks the limits, bounds the decode by them and the deadline, and starts decompression
    /// at the DCT scale the target size allows: the output size (as stored, before any turn)
    /// and the colour plan to run on the rows.
    private static func start(_ decompression: JPEGDecompression, _ header: JPEGHeader, options: DecodingOptions,
                              deadline: DecodingDeadline) throws(AlcedoError) -> (width: Int, height: Int, plan: ColorPlan) {
        try options.limits.check(width: header.width, height: header.height, format: .jpeg)
        try options.limits.checkWorkingMemory(header.coefficientBytes, what: "the coefficient buffer of a progressive or multi-scan file",
                                              format: .jpeg)
        decompression.setLimits(options.limits, deadline: deadline)
        let upright = header.uprightSize(appliesOrientation: options.appliesOrientation)
        let denominator = scaleDenominator(width: upright.width, height: upright.height, options: options)
        let plan = decompression.colorPlan(header, mode: options.colorManagement)
        let (width, height) = try decompression.start(scaleDenominator: denominator, allowTruncated: options.allowTruncated)
        return (width, height, plan)
    }

    /// The DCT scaling denominator (1, 2, 4 or 8) for a picture whose upright size is
    /// `width` x `height`: the largest whose output (libjpeg rounds each side up) is still at
    /// least `minimumScale` times the full size on both sides.
    static func scaleDenominator(width: Int, height: Int, options: DecodingOptions) -> Int {
        let scale = options.minimumScale(forWidth: width, height: height)
        guard scale < 1 else { return 1 }
        let neededWidth = Double(width) * scale - 1e-9
        let neededHeight = Double(height) * scale - 1e-9
        for denominator in [8, 4, 2] {
            let scaledWidth = (width + denominator - 1) / denominator
            let scaledHeight = (height + denominator - 1) / denominator
            if Double(scaledWidth) >= neededWidth && Double(scaledHeight) >= neededHeight {
                return denominator
            }
        }
        return 1
    }
}

/// The header facts the decoder needs, copied out of the C shim's header.
struct JPEGHeader {
    /// Stored size, before orientation.
    let width: Int
    let height: Int
    /// The EXIF orientation the file states (`.up` when none or unreadable).
    let orientation: ImageOrientation
    /// Bytes of libjpeg's whole-image coefficient buffer (progressive and multi-scan files; 0 otherwise).
    let coefficientBytes: Int
    /// The ICC profile reassembled from the `APP2` segments, if any.
    let iccProfile: Data?
    /// The stored data is CMYK or YCCK.
    let isCMYK: Bool
    /// The file has an Adobe `APP14` marker (CMYK is then inverted).
    let hasAdobeMarker: Bool

    /// Copies the facts of `cHeader`, just read by `handle` (still at the header stage): the
    /// EXIF orientation, the ICC profile reassembled from the `APP2` segments, the Adobe marker.
    init(_ cHeader: alcedo_jpeg_header, handle: OpaquePointer) {
        var orientation = ImageOrientation.up
        if let exif = cHeader.exif, cHeader.exif_length > 0 {
            let blob = UnsafeRawBufferPointer(start: exif, count: cHeader.exif_length)
            orientation = ExifOrientationReader.orientation(in: blob) ?? .up
        }
        var icc: UnsafeMutablePointer<UInt8>?
        var iccLength = 0
        var iccProfile: Data?
        if alcedo_jpeg_icc_profile(handle, &icc, &iccLength) != 0, let icc {
            iccProfile = Data(bytes: icc, count: iccLength)
            free(icc)
        }
        self.init(width: Int(cHeader.width), height: Int(cHeader.height), orientation: orientation,
                  coefficientBytes: Int(clamping: cHeader.coefficient_bytes), iccProfile: iccProfile,
                  isCMYK: cHeader.color == ALCEDO_JPEG_COLOR_CMYK || cHeader.color == ALCEDO_JPEG_COLOR_YCCK,
                  hasAdobeMarker: alcedo_jpeg_adobe_transform(handle) >= 0)
    }

    init(width: Int, height: Int, orientation: ImageOrientation, coefficientBytes: Int, iccProfile: Data?,
         isCMYK: Bool, hasAdobeMarker: Bool) {
        self.width = width
        self.height = height
        self.orientation = orientation
        self.coefficientBytes = coefficientBytes
        self.iccProfile = iccProfile
        self.isCMYK = isCMYK
        self.hasAdobeMarker = hasAdobeMarker
    }

    /// The colour plan for this file; for CMYK under colour management, also tells the shim
    /// (`handle`, before it starts) to leave the CMYK samples for the plan's transform.
    func colorPlan(mode: ColorManagement, handle: OpaquePointer) -> ColorPlan {
        guard isCMYK else { return ColorPlan.forRGBA(iccData: iccProfile, mode: mode, format: .jpeg) }
        guard let plan = ColorPlan.forCMYK(iccData: iccProfile, inverted: hasAdobeMarker, mode: mode),
              plan.transform != nil else { return .none }
        alcedo_jpeg_keep_cmyk(handle, 1)
        return plan
    }

    /// The size after orientation when `appliesOrientation`, else the stored size.
    func uprightSize(appliesOrientation: Bool) -> (width: Int, height: Int) {
        appliesOrientation && orientation.swapsDimensions ? (height, width) : (width, height)
    }
}

/// One libjpeg decompression through the C shim, alive for the duration of a closure.
struct JPEGDecompression {
    private let handle: OpaquePointer
    /// The limits given to ``setLimits(_:deadline:)``, for the errors they cause.
    private let limits = LimitsBox()

    /// Where the limits of one decompression are kept (the decompression itself is passed by value).
    private final class LimitsBox {
        var limits = DecodingLimits.default
    }

    /// Where the compressed bytes come from.
    enum Source {
        /// Bytes in memory, pinned for the duration of the decode.
        case data(Data)
        /// A file open for reading, read from its current offset through a 64 KB buffer.
        case fileDescriptor(Int32)
    }

    /// Reads the header from `source` and calls `body` with the decompression and the header,
    /// while the bytes (or the descriptor) stay valid for libjpeg.
    static func withHeader<T>(
        of source: Source, _ body: (JPEGDecompression, JPEGHeader) throws(AlcedoError) -> T
    ) throws(AlcedoError) -> T {
        switch source {
        case .data(let data):
            guard !data.isEmpty else { throw .decodingError(reason: .emptyData) }
            return try withDecoder { handle throws(AlcedoError) -> T in
                let result = data.withUnsafeBytes { raw -> Result<T, AlcedoError> in
                    guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
                        return .failure(.decodingError(reason: .emptyData))
                    }
                    return withHeader(handle: handle, body) { alcedo_jpeg_read_header(handle, base, raw.count, $0) }
                }
                return try result.get()
            }
        case .fileDescriptor(let fd):
            return try withDecoder { handle throws(AlcedoError) -> T in
                try withHeader(handle: handle, body) { alcedo_jpeg_read_header_fd(handle, fd, $0) }.get()
            }
        }
    }

    private static func withDecoder<T>(_ body: (OpaquePointer) throws(AlcedoError) -> T) throws(AlcedoError) -> T {
        guard let handle = alcedo_jpeg_decoder_create() else {
            throw .decodingError(reason: .corrupt(format: .jpeg, message: "out of memory creating the decoder"))
        }
        defer { alcedo_jpeg_decoder_destroy(handle) }
        return try body(handle)
    }

    private static func withHeader<T>(
        handle: OpaquePointer, _ body: (JPEGDecompression, JPEGHeader) throws(AlcedoError) -> T,
        reading read: (UnsafeMutablePointer<alcedo_jpeg_header>) -> alcedo_jpeg_status
    ) -> Result<T, AlcedoError> {
        let decompression = JPEGDecompression(handle: handle)
        var cHeader = alcedo_jpeg_header()
        let status = read(&cHeader)
        guard status == ALCEDO_JPEG_OK else {
            return .failure(decompression.error(for: status, inHeader: true))
        }
        let header = JPEGHeader(cHeader, handle: handle)
        do throws(AlcedoError) {
            return .success(try body(decompression, header))
        } catch {
            return .failure(error)
        }
    }

    /// Bounds the rest of the decode: the CPU time `deadline` has left, and libjpeg's working
    /// memory (its `max_memory_to_use`) to ``DecodingLimits/maxWorkingMemory``.
    func setLimits(_ limits: DecodingLimits, deadline: DecodingDeadline) {
        self.limits.limits = limits
        let left = deadline.limit - deadline.elapsed
        let (seconds, attoseconds) = left.components
        let nanoseconds: Int64
        if seconds <= 0 && attoseconds <= 0 {
            nanoseconds = 1
        } else if seconds >= Int64.max / 1_000_000_000 - 1 {
            nanoseconds = 0 // no practical bound
        } else {
            nanoseconds = max(1, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
        alcedo_jpeg_set_limits(handle, nanoseconds, UInt64(max(0, limits.maxWorkingMemory)))
    }

    /// The colour plan for this file; for CMYK under colour management, also tells the shim
    /// to leave the CMYK samples for the plan's transform.
    func colorPlan(_ header: JPEGHeader, mode: ColorManagement) -> ColorPlan {
        header.colorPlan(mode: mode, handle: handle)
    }

    /// Starts decompression at 1/`scaleDenominator` and returns the output size.
    func start(scaleDenominator: Int, allowTruncated: Bool) throws(AlcedoError) -> (width: Int, height: Int) {
        var width: Int32 = 0
        var height: Int32 = 0
        let status = alcedo_jpeg_start(handle, Int32(scaleDenominator), allowTruncated ? 1 : 0, &width, &height)
        guard status == ALCEDO_JPEG_OK else { throw error(for: status, inHeader: false) }
        guard width > 0, height > 0 else {
            throw .decodingError(reason: .invalidHeader(format: .jpeg, message: "output size \(width)x\(height)"))
        }
        return (Int(width), Int(height))
    }

    /// Decodes every row straight into a new RGBA8 buffer of `width` x `height`.
    func readPixels(width: Int, height: Int) throws(AlcedoError) -> [UInt8] {
        let stride = width * 4
        let count = stride * height
        var status = ALCEDO_JPEG_MISUSE
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initializedCount in
            if let base = buffer.baseAddress {
                status = alcedo_jpeg_read_pixels(handle, base, stride, buffer.count)
            }
            initializedCount = status == ALCEDO_JPEG_OK ? count : 0
        }
        guard status == ALCEDO_JPEG_OK else { throw error(for: status, inHeader: false) }
        return pixels
    }

    /// Decodes the rows `stripRows` at a time into one strip buffer, handing each to `body`
    /// with the index of its first row and its row count, until the last row or until `body`
    /// returns `false`.
    func readStrips(width: Int, height: Int, stripRows: Int,
                    _ body: (UnsafeMutableBufferPointer<UInt8>, Int, Int) -> Bool) throws(AlcedoError) {
        let stride = width * 4
        let strip = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: stride * stripRows)
        defer { strip.deallocate() }
        var row = 0
        while row < height {
            var read: Int32 = 0
            let status = alcedo_jpeg_read_rows(handle, strip.baseAddress!, stride, Int32(stripRows), &read)
            guard status == ALCEDO_JPEG_OK else { throw error(for: status, inHeader: false) }
            guard read > 0 else { throw error(for: ALCEDO_JPEG_CORRUPT, inHeader: false) }
            guard body(UnsafeMutableBufferPointer(rebasing: strip[0..<(stride * Int(read))]), row, Int(read)) else { return }
            row += Int(read)
        }
    }

    /// Decodes every row, 16 at a time, and places each strip where `orientation` puts it in
    /// a new upright RGBA8 buffer: the only whole-image buffer of the decode.
    func readPixels(width: Int, height: Int, turnedBy orientation: ImageOrientation) throws(AlcedoError) -> [UInt8] {
        let stride = width * 4
        let stripRows = 16
        let strip = UnsafeMutableRawPointer.allocate(byteCount: stride * stripRows, alignment: 16)
        defer { strip.deallocate() }
        var status = ALCEDO_JPEG_OK
        let pixels = [UInt8](unsafeUninitializedCapacity: stride * height) { buffer, initializedCount in
            guard let base = buffer.baseAddress else {
                status = ALCEDO_JPEG_NO_MEMORY
                initializedCount = 0
                return
            }
            var row = 0
            while row < height && status == ALCEDO_JPEG_OK {
                var read: Int32 = 0
                status = alcedo_jpeg_read_rows(handle, strip.assumingMemoryBound(to: UInt8.self), stride, Int32(stripRows), &read)
                guard status == ALCEDO_JPEG_OK, read > 0 else { break }
                orientation.place(rows: strip, firstRow: row, count: Int(read), width: width, height: height, into: base)
                row += Int(read)
            }
            if status == ALCEDO_JPEG_OK && row < height { status = ALCEDO_JPEG_CORRUPT }
            initializedCount = status == ALCEDO_JPEG_OK ? stride * height : 0
        }
        guard status == ALCEDO_JPEG_OK else { throw error(for: status, inHeader: false) }
        return pixels
    }

    /// The typed error for a failed shim call, with libjpeg's message.
    private func error(for status: alcedo_jpeg_status, inHeader: Bool) -> AlcedoError {
        Self.error(for: status, handle: handle, inHeader: inHeader, limits: limits.limits)
    }

    /// The typed error for a failed call on `handle`, with libjpeg's message; `limits` are
    /// those the decode ran under.
    static func error(for status: alcedo_jpeg_status, handle: OpaquePointer, inHeader: Bool,
                      limits: DecodingLimits) -> AlcedoError {
        let message = String(cString: alcedo_jpeg_message(handle))
        switch status {
        case ALCEDO_JPEG_TRUNCATED:
            return .decodingError(reason: .truncated(format: .jpeg, message: message))
        case ALCEDO_JPEG_UNSUPPORTED:
            return .decodingError(reason: .unsupportedFeature(format: .jpeg, message: message))
        case ALCEDO_JPEG_TIMED_OUT:
            return .decodingError(reason: .timedOut(format: .jpeg, limit: limits.decodingTimeout))
        case ALCEDO_JPEG_TOO_MUCH_MEMORY:
            // libjpeg says only that its arrays do not fit max_memory_to_use, not by how much.
            return .decodingError(reason: .workingMemoryTooLarge(
                format: .jpeg, what: "libjpeg's whole-image buffers (\(message))",
                bytes: limits.maxWorkingMemory &+ 1, limit: limits.maxWorkingMemory))
        default:
            return .decodingError(reason: inHeader ? .invalidHeader(format: .jpeg, message: message)
                                                   : .corrupt(format: .jpeg, message: message))
        }
    }
}

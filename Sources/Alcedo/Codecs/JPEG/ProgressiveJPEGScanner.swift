import CAlcedoCodecs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes a progressive JPEG while its bytes arrive: libjpeg-turbo's buffered-image mode
/// behind a suspending source, fed each new chunk once (never the whole body again), so the
/// scans received so far can be shown before the download ends.
///
/// The pictures it renders are those ``JPEGDecoder`` makes of the same bytes: the same
/// decoder-side scaling for ``DecodingOptions/targetSize``, orientation and colour plan, and
/// ``DecodingOptions/limits`` checked from the header (pixels, coefficient memory) and while
/// scanning (scan count and scan passes, CPU time of each ``advance()``). A baseline file is
/// reported as ``Event/notProgressive`` and not decoded. Not thread-safe: one caller at a time.
final class ProgressiveJPEGScanner {
    /// What ``advance()`` stopped at.
    enum Event: Equatable {
        /// Every byte appended so far is consumed: append more.
        case needsData
        /// Scan `n` (1, 2, ...) is complete and can be rendered.
        case scanCompleted(Int)
        /// The file is a baseline (or otherwise single-scan) JPEG: there is nothing to preview.
        case notProgressive
        /// The end of the image was read: the final decode shows it.
        case finished
    }

    private let handle: OpaquePointer
    private let options: DecodingOptions
    private var header: JPEGHeader?
    private var plan = ColorPlan.none
    /// The output size (stored orientation), once started.
    private var output: (width: Int, height: Int)?
    private var isDone = false
    /// The newest complete scan, 0 before the first.
    private(set) var completedScan = 0

    /// A scanner decoding under `options` (their target size, orientation, colour and limits).
    init(options: DecodingOptions) throws(AlcedoError) {
        guard let handle = alcedo_jpeg_stream_create() else {
            throw .decodingError(reason: .corrupt(format: .jpeg, message: "out of memory creating the decoder"))
        }
        self.handle = handle
        self.options = options
    }

    deinit { alcedo_jpeg_decoder_destroy(handle) }

    /// Hands the next bytes of the file to the decoder (one copy of `data`; nothing is decoded).
    func append(_ data: Data) throws(AlcedoError) {
        let status = data.withUnsafeBytes { raw -> alcedo_jpeg_status in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return ALCEDO_JPEG_OK }
            return alcedo_jpeg_stream_append(handle, base, raw.count)
        }
        guard status == ALCEDO_JPEG_OK else { throw failure(status) }
    }

    /// Consumes the bytes appended so far, up to the end of the next complete scan. The
    /// decoding timeout of ``DecodingOptions/limits`` bounds the CPU time of this call.
    func advance() throws(AlcedoError) -> Event {
        if isDone { return .finished }
        if output == nil {
            guard let started = try start() else { return .needsData }
            guard started else { return .notProgressive }
        }
        setLimits()
        var scan: Int32 = 0
        let status = alcedo_jpeg_stream_advance(handle, &scan)
        guard status == ALCEDO_JPEG_OK else { throw failure(status) }
        switch scan {
        case 0: return .needsData
        case ..<0:
            isDone = true
            return .finished
        default:
            completedScan = Int(scan)
            return .scanCompleted(Int(scan))
        }
    }

    /// The picture of the newest complete scan (plus whatever later scans already hold),
    /// upright and colour-managed as ``JPEGDecoder`` makes it.
    func render() throws(AlcedoError) -> AlcedoImage {
        guard let output, let header, completedScan > 0 else {
            throw .decodingError(reason: .corrupt(format: .jpeg, message: "no complete scan to render"))
        }
        setLimits()
        let (width, height) = output
        let stride = width * 4
        var status = ALCEDO_JPEG_MISUSE
        var pixels = [UInt8](unsafeUninitializedCapacity: stride * height) { buffer, initialized in
            if let base = buffer.baseAddress { status = alcedo_jpeg_stream_render(handle, base, stride, buffer.count) }
            initialized = status == ALCEDO_JPEG_OK ? stride * height : 0
        }
        guard status == ALCEDO_JPEG_OK else { throw failure(status) }
        let orientation = header.orientation
        var size = (width: width, height: height)
        if options.appliesOrientation && orientation != .up {
            let stored = pixels
            pixels = [UInt8](unsafeUninitializedCapacity: stored.count) { buffer, initialized in
                stored.withUnsafeBytes { rows in
                    if let source = rows.baseAddress, let target = buffer.baseAddress {
                        orientation.place(rows: source, firstRow: 0, count: height, width: width, height: height, into: target)
                    }
                }
                initialized = stored.count
            }
            if orientation.swapsDimensions { size = (height, width) }
        }
        plan.apply(to: &pixels)
        return AlcedoImage(width: size.width, height: size.height, pixels: pixels, sourceFormat: .jpeg,
                           orientation: orientation, colorMetadata: plan.metadata)
    }

    /// Reads the header and starts buffered-image decoding: `nil` when more bytes are needed,
    /// `false` for a file that is not progressive.
    private func start() throws(AlcedoError) -> Bool? {
        var cHeader = alcedo_jpeg_header()
        var suspended: Int32 = 0
        let status = alcedo_jpeg_stream_read_header(handle, &cHeader, &suspended)
        guard status == ALCEDO_JPEG_OK else { throw failure(status, inHeader: true) }
        if suspended != 0 { return nil }
        guard cHeader.progressive != 0 else {
            isDone = true
            return false
        }
        let header = JPEGHeader(cHeader, handle: handle)
        try options.limits.check(width: header.width, height: header.height, format: .jpeg)
        try options.limits.checkWorkingMemory(header.coefficientBytes, what: "the coefficient buffer of a progressive file",
                                              format: .jpeg)
        let upright = header.uprightSize(appliesOrientation: options.appliesOrientation)
        let denominator = JPEGDecoder.scaleDenominator(width: upright.width, height: upright.height, options: options)
        plan = header.colorPlan(mode: options.colorManagement, handle: handle)
        setLimits()
        var width: Int32 = 0
        var height: Int32 = 0
        let started = alcedo_jpeg_stream_start(handle, Int32(denominator), &width, &height)
        guard started == ALCEDO_JPEG_OK else { throw failure(started) }
        guard width > 0, height > 0 else {
            throw .decodingError(reason: .invalidHeader(format: .jpeg, message: "output size \(width)x\(height)"))
        }
        self.header = header
        output = (Int(width), Int(height))
        return true
    }

    /// A fresh CPU budget (the decoding timeout) for the call about to run on this thread,
    /// and libjpeg's working-memory bound.
    private func setLimits() {
        let (seconds, attoseconds) = options.limits.decodingTimeout.components
        let nanoseconds: Int64 = seconds >= Int64.max / 1_000_000_000 - 1 ? 0
            : max(1, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        alcedo_jpeg_set_limits(handle, nanoseconds, UInt64(max(0, options.limits.maxWorkingMemory)))
    }

    private func failure(_ status: alcedo_jpeg_status, inHeader: Bool = false) -> AlcedoError {
        isDone = true
        return JPEGDecompression.error(for: status, handle: handle, inHeader: inHeader, limits: options.limits)
    }
}

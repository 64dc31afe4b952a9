import CWebP

/// The RIFF container of a WebP file as libwebp's demuxer reads it: canvas size, loop count
/// and the frame table, without decoding pixels.
///
/// The demuxer keeps pointers into the bytes it was given, so a value must not outlive the
/// buffer it was created from (use it inside the `withUnsafeBytes` that produced the buffer).
/// It is non-copyable so that the demuxer is deleted exactly once.
struct WebPContainer: ~Copyable {
    /// The geometry and timing of one frame, as the `ANMF` chunk states them.
    struct FrameHeader {
        var x: Int
        var y: Int
        var width: Int
        var height: Int
        /// Display duration in milliseconds, as stored (not normalised).
        var durationMilliseconds: Int
        /// `false` when the frame's image data is cut short.
        var isComplete: Bool
    }

    private let demuxer: OpaquePointer

    /// Canvas width in pixels.
    let canvasWidth: Int
    /// Canvas height in pixels.
    let canvasHeight: Int
    /// Number of frames (1 for a still image).
    let frameCount: Int
    /// Loop count of an animation (0: forever).
    let loopCount: Int

    /// Parses the whole container in `bytes`.
    /// - Throws: `.truncated` when the data ends early, `.invalidHeader` when the chunks are malformed.
    init(bytes: UnsafeRawBufferPointer) throws(AlcedoError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { throw .decodingError(reason: .emptyData) }
        var data = WebPData(bytes: base.assumingMemoryBound(to: UInt8.self), size: bytes.count)
        var state = WEBP_DEMUX_PARSING_HEADER
        // The partial parse tells a short file (state before DONE) from a malformed one.
        guard let demuxer = alcedo_webp_demux_partial(&data, &state) else {
            throw state == WEBP_DEMUX_PARSE_ERROR
                ? .decodingError(reason: .invalidHeader(format: .webp, message: "malformed RIFF container (the demuxer rejected the chunks)"))
                : .decodingError(reason: .truncated(format: .webp, message: "the data ends inside the RIFF header"))
        }
        guard state == WEBP_DEMUX_DONE else {
            WebPDemuxDelete(demuxer)
            throw .decodingError(reason: .truncated(format: .webp, message: "the data ends before the last chunk of the RIFF container"))
        }
        self.demuxer = demuxer
        canvasWidth = Int(WebPDemuxGetI(demuxer, WEBP_FF_CANVAS_WIDTH))
        canvasHeight = Int(WebPDemuxGetI(demuxer, WEBP_FF_CANVAS_HEIGHT))
        frameCount = Int(WebPDemuxGetI(demuxer, WEBP_FF_FRAME_COUNT))
        loopCount = Int(WebPDemuxGetI(demuxer, WEBP_FF_LOOP_COUNT))
    }

    deinit { WebPDemuxDelete(demuxer) }

    /// The header of frame `index` (0-based), or `nil` when there is no such frame.
    func frame(at index: Int) -> FrameHeader? {
        withFrame(at: index) { iterator in
            FrameHeader(x: Int(iterator.x_offset), y: Int(iterator.y_offset),
                        width: Int(iterator.width), height: Int(iterator.height),
                        durationMilliseconds: Int(iterator.duration), isComplete: iterator.complete != 0)
        }
    }

    /// Calls `body` with the iterator of frame `index` (0-based); its `fragment` points at the
    /// frame's `ALPH`/`VP8 `/`VP8L` chunks. Returns `nil` when there is no such frame.
    func withFrame<T, E: Error>(at index: Int, _ body: (WebPIterator) throws(E) -> T) throws(E) -> T? {
        guard index >= 0, index < frameCount, index < Int(Int32.max) else { return nil }
        var iterator = WebPIterator()
        guard WebPDemuxGetFrame(demuxer, Int32(index + 1), &iterator) != 0 else { return nil }
        defer { WebPDemuxReleaseIterator(&iterator) }
        return try body(iterator)
    }

    /// The stored duration of every frame in milliseconds, in order.
    func frameDurations() -> [Int] {
        var durations: [Int] = []
        durations.reserveCapacity(min(frameCount, 4096))
        var iterator = WebPIterator()
        guard WebPDemuxGetFrame(demuxer, 1, &iterator) != 0 else { return durations }
        defer { WebPDemuxReleaseIterator(&iterator) }
        repeat {
            durations.append(Int(iterator.duration))
        } while WebPDemuxNextFrame(&iterator) != 0
        return durations
    }
}

/// Composites the frames of a GIF onto its logical screen, the way browsers do.
///
/// The canvas starts fully transparent (the background colour index is ignored, as browsers
/// ignore it). Each frame is drawn at its offset, clipped to the canvas; pixels with the
/// transparent index leave the canvas as it is. Before the next frame is drawn, the frame's
/// disposal method is applied to its area: 0 (unspecified) and 1 (do not dispose) keep it,
/// 2 (restore to background) clears it to transparent, 3 (restore to previous) puts back what
/// was there before the frame was drawn. Methods 4-7 are undefined and keep the area.
/// APNG frames are composited here too: their dispose operations are the same three.
struct GIFCompositor {
    /// A rectangle of the canvas, already clipped to it.
    struct Area: Equatable {
        var x: Int, y: Int, width: Int, height: Int
        var isEmpty: Bool { width <= 0 || height <= 0 }

        /// The overlap of two areas, or `nil` when they do not overlap.
        func intersection(_ other: Area) -> Area? {
            let left = max(x, other.x), top = max(y, other.y)
            let right = min(x + width, other.x + other.width), bottom = min(y + height, other.y + other.height)
            return right > left && bottom > top ? Area(x: left, y: top, width: right - left, height: bottom - top) : nil
        }

        /// The part of a `frameWidth` x `frameHeight` frame placed at (`left`, `top`) that
        /// lies on a `width` x `height` canvas (offsets are never negative in GIF).
        init(left: Int, top: Int, frameWidth: Int, frameHeight: Int, canvasWidth width: Int, canvasHeight height: Int) {
            self.init(x: left, y: top, width: max(0, min(frameWidth, width - left)), height: max(0, min(frameHeight, height - top)))
        }

        init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }
    }

    let width: Int
    let height: Int
    /// The canvas: `width * height` RGBA8 pixels, straight alpha.
    private(set) var canvas: [UInt8]
    private var pendingArea = Area(x: 0, y: 0, width: 0, height: 0)
    private var pendingDisposal = 0
    private var begun = false
    private var restore = Restore.transparent

    /// Where a "restore to previous" frame's area comes back from.
    private enum Restore {
        /// Transparent black (before the first frame, the canvas was clear).
        case transparent
        /// The previous output frame (the whole canvas as it was shown), with the area its own
        /// "restore to background" disposal cleared.
        case previousOutput([UInt8], cleared: Area?)
        /// A copy of the area, taken before the frame was drawn.
        case copy([UInt8])
    }

    /// Whether the caller keeps every composited canvas as an output frame (sharing its
    /// storage): "restore to previous" then restores from the previous one instead of copying.
    let keepsOutputs: Bool

    /// A transparent canvas of `width` x `height` (checked against the limits by the caller);
    /// `keepsOutputs`: the caller keeps each composited canvas whole (default `true`).
    init(width: Int, height: Int, keepsOutputs: Bool = true) {
        self.width = width
        self.height = height
        self.keepsOutputs = keepsOutputs
        canvas = [UInt8](repeating: 0, count: width * height * 4)
    }

    /// Applies the previous frame's disposal, then prepares to draw a frame over `area` whose
    /// own disposal (`disposal`, 0-7) will be applied when the next frame begins; the last
    /// frame (`isLast`) is never disposed, so nothing is prepared for it.
    ///
    /// A "restore to previous" seldom needs a copy of its area: before the first frame the
    /// canvas was transparent, and when the caller keeps every output frame, the canvas
    /// before the frame was the previous output frame with that frame's own disposal applied.
    /// Only a "restore to previous" frame right after another one, or one whose outputs are
    /// not kept, copies its area (``restoreCopyBytes(area:disposal:isLast:)``).
    mutating func beginFrame(area: Area, disposal: Int, isLast: Bool = false) {
        let priorArea = pendingArea
        let priorDisposal = pendingDisposal
        let first = !begun
        begun = true
        let restores = disposal == 3 && !area.isEmpty && !isLast
        if restores && !first && keepsOutputs && priorDisposal != 3 {
            // The canvas as the previous frame showed it: shared with the decoder's output, not copied.
            restore = .previousOutput(canvas, cleared: priorDisposal == 2 ? priorArea : nil)
        }
        dispose()
        pendingArea = area
        pendingDisposal = restores ? 3 : (disposal == 3 ? 0 : disposal)
        guard restores else {
            restore = .transparent
            return
        }
        if first {
            restore = .transparent
        } else if !keepsOutputs || priorDisposal == 3 {
            restore = .copy(copy(area))
        }
    }

    /// The bytes a frame over `area` with `disposal` copies from the canvas to restore it later:
    /// the area for a "restore to previous" frame (not the last) after another one, or when
    /// the outputs are not kept; else nothing.
    func restoreCopyBytes(area: Area, disposal: Int, isLast: Bool = false) -> Int {
        guard disposal == 3, !area.isEmpty, !isLast, begun else { return 0 }
        return !keepsOutputs || pendingDisposal == 3 ? area.width * area.height * 4 : 0
    }

    /// Draws `count` pixels of palette indices from `row` at canvas (`x`, `y`) through
    /// `palette` (256 RGBA entries; an entry with alpha 0 is the transparent index and is skipped).
    mutating func drawRow(_ row: UnsafePointer<UInt8>, count: Int, x: Int, y: Int, palette: [UInt8]) {
        guard count > 0, y >= 0, y < height, x >= 0, x + count <= width else { return }
        palette.withUnsafeBufferPointer { colors in
            canvas.withUnsafeMutableBufferPointer { pixels in
                var out = (y * width + x) * 4
                for column in 0..<count {
                    let entry = Int(row[column]) * 4
                    if colors[entry + 3] != 0 {
                        pixels[out] = colors[entry]
                        pixels[out + 1] = colors[entry + 1]
                        pixels[out + 2] = colors[entry + 2]
                        pixels[out + 3] = colors[entry + 3]
                    }
                    out += 4
                }
            }
        }
    }

    /// Draws `pixels` (RGBA rows of `area.width`) over `area`: replacing what is there, or
    /// with `blendsOver`, alpha-compositing them over it (straight alpha, rounded). APNG frames
    /// are drawn this way.
    mutating func drawPixels(_ pixels: [UInt8], area: Area, blendsOver: Bool) {
        guard !area.isEmpty, area.x >= 0, area.y >= 0, area.x + area.width <= width, area.y + area.height <= height,
              pixels.count == area.width * area.height * 4 else { return }
        let canvasWidth = width
        canvas.withUnsafeMutableBufferPointer { out in
            pixels.withUnsafeBufferPointer { source in
                for row in 0..<area.height {
                    var to = ((area.y + row) * canvasWidth + area.x) * 4
                    var from = row * area.width * 4
                    for _ in 0..<area.width {
                        let alpha = Int(source[from + 3])
                        if !blendsOver || alpha == 255 || out[to + 3] == 0 {
                            for channel in 0..<4 { out[to + channel] = source[from + channel] }
                        } else if alpha > 0 {
                            // out = src * a + dst * da * (1 - a), everything scaled by 255 * 255.
                            let below = Int(out[to + 3]) * (255 - alpha)
                            let total = alpha * 255 + below
                            for channel in 0..<3 {
                                let value = Int(source[from + channel]) * alpha * 255 + Int(out[to + channel]) * below
                                out[to + channel] = UInt8((value + total / 2) / total)
                            }
                            out[to + 3] = UInt8((total + 127) / 255)
                        }
                        to += 4
                        from += 4
                    }
                }
            }
        }
    }

    /// Lets `body` write the canvas's RGBA pixels in place (an APNG frame decoded straight into it).
    mutating func withCanvas(_ body: (UnsafeMutablePointer<UInt8>) throws(AlcedoError) -> Void) throws(AlcedoError) {
        let result: Result<Void, AlcedoError> = canvas.withUnsafeMutableBufferPointer { pixels in
            guard let base = pixels.baseAddress else { return .success(()) }
            return Result { () throws(AlcedoError) in try body(base) }
        }
        try result.get()
    }

    private mutating func dispose() {
        guard !pendingArea.isEmpty else { return }
        switch pendingDisposal {
        case 2:
            fill(pendingArea, with: nil)
        case 3:
            switch restore {
            case .transparent:
                fill(pendingArea, with: nil)
            case .copy(let saved):
                fill(pendingArea, with: saved)
            case .previousOutput(let shown, let cleared):
                restore(pendingArea, from: shown)
                if let cleared, let overlap = pendingArea.intersection(cleared) { fill(overlap, with: nil) }
            }
            restore = .transparent  // working memory: released as soon as it is restored
        default:
            break
        }
        pendingDisposal = 0
    }

    /// Copies `area` from `shown`, a whole canvas of the same size.
    private mutating func restore(_ area: Area, from shown: [UInt8]) {
        shown.withUnsafeBytes { source in
            copyRows(of: area, from: source.baseAddress!, sourceRowBytes: width * 4,
                     sourceStart: (area.y * width + area.x) * 4)
        }
    }

    /// Copies `area`'s rows from `source` (rows `sourceRowBytes` apart, the first at
    /// `sourceStart`) into the canvas, with one memory copy per row.
    private mutating func copyRows(of area: Area, from source: UnsafeRawPointer, sourceRowBytes: Int, sourceStart: Int) {
        let rowBytes = area.width * 4, canvasWidth = width
        canvas.withUnsafeMutableBytes { target in
            for row in 0..<area.height {
                (target.baseAddress! + ((area.y + row) * canvasWidth + area.x) * 4)
                    .copyMemory(from: source + sourceStart + row * sourceRowBytes, byteCount: rowBytes)
            }
        }
    }

    private func copy(_ area: Area) -> [UInt8] {
        var saved = [UInt8]()
        saved.reserveCapacity(area.width * area.height * 4)
        for row in area.y..<(area.y + area.height) {
            let start = (row * width + area.x) * 4
            saved += canvas[start..<(start + area.width * 4)]
        }
        return saved
    }

    /// Fills `area` with `source` (rows of the area's width), or with transparent black.
    private mutating func fill(_ area: Area, with source: [UInt8]?) {
        guard !area.isEmpty else { return }
        let rowBytes = area.width * 4
        if let source {
            source.withUnsafeBytes { saved in
                copyRows(of: area, from: saved.baseAddress!, sourceRowBytes: rowBytes, sourceStart: 0)
            }
            return
        }
        let canvasWidth = width
        canvas.withUnsafeMutableBytes { target in
            for row in 0..<area.height {
                (target.baseAddress! + ((area.y + row) * canvasWidth + area.x) * 4)
                    .initializeMemory(as: UInt8.self, repeating: 0, count: rowBytes)
            }
        }
    }
}

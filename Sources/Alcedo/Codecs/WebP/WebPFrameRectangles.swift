/// The frames a lossy WebP animation stores: each one the smallest rectangle of the canvas that
/// changed since the frame shown before it, with its duration in milliseconds. Frames identical
/// to the one before are not stored; their duration goes to the frame shown.
///
/// Rectangles start on even coordinates (the format stores offsets halved) and are stored with
/// no blending and no disposal, so that each one replaces what it covers and every canvas shown
/// is exactly the source frame (up to the lossy coder's error).
struct WebPFrameRectangles {
    /// One stored frame.
    struct Entry: Equatable {
        /// The source frame whose pixels the rectangle holds.
        var frame: Int
        var x: Int
        var y: Int
        var width: Int
        var height: Int
        /// Milliseconds, at most 16,777,215 (the format's limit).
        var duration: Int
    }

    /// The longest duration one frame can hold, in milliseconds.
    static let maxDuration = 16_777_215

    let entries: [Entry]

    /// The rectangles of `frames` (each `width * height * 4` bytes of RGBA8).
    init(frames: [AlcedoImage.Frame], width: Int, height: Int) {
        var entries: [Entry] = []
        for (index, frame) in frames.enumerated() {
            let duration = Self.milliseconds(frame.duration)
            guard let previous = entries.last.map({ frames[$0.frame].pixels }) else {
                entries.append(Entry(frame: index, x: 0, y: 0, width: width, height: height, duration: duration))
                continue
            }
            // The canvas shown is the last stored frame's source: it and all merged into it are identical.
            guard let changed = Self.changedRectangle(previous, frame.pixels, width: width, height: height) else {
                entries[entries.count - 1].duration = min(Self.maxDuration, entries[entries.count - 1].duration + duration)
                continue
            }
            entries.append(Entry(frame: index, x: changed.x, y: changed.y, width: changed.width, height: changed.height,
                                 duration: duration))
        }
        self.entries = entries
    }

    /// `seconds` in whole milliseconds, rounded and clamped to 0...``maxDuration``.
    static func milliseconds(_ seconds: Double) -> Int {
        let milliseconds = (seconds * 1000).rounded()
        return milliseconds.isFinite ? Int(min(Double(maxDuration), max(0, milliseconds))) : 0
    }

    /// The smallest rectangle holding every pixel that differs between `old` and `new`, widened
    /// to start on even coordinates; `nil` when they are the same.
    static func changedRectangle(_ old: [UInt8], _ new: [UInt8], width: Int, height: Int)
        -> (x: Int, y: Int, width: Int, height: Int)? {
        precondition(old.count == width * height * 4 && new.count == old.count, "frames of \(width)x\(height) RGBA8")
        return old.withUnsafeBytes { oldBytes in
            new.withUnsafeBytes { newBytes in
                let a = oldBytes.bindMemory(to: UInt32.self), b = newBytes.bindMemory(to: UInt32.self)
                func rowDiffers(_ y: Int) -> Bool {
                    let start = y * width
                    for x in start..<start + width where a[x] != b[x] { return true }
                    return false
                }
                guard let top = (0..<height).first(where: rowDiffers) else { return nil }
                let bottom = (top..<height).reversed().first(where: rowDiffers) ?? top
                var left = width, right = -1
                for y in top...bottom {
                    let start = y * width
                    var x = 0
                    while x < left, a[start + x] == b[start + x] { x += 1 }
                    left = min(left, x)
                    var r = width - 1
                    while r > right, a[start + r] == b[start + r] { r -= 1 }
                    right = max(right, r)
                }
                let x = left & ~1, y = top & ~1
                return (x, y, right + 1 - x, bottom + 1 - y)
            }
        }
    }
}

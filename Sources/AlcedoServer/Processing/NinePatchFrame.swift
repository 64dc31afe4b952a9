import Alcedo

/// Draws a nine-patch image around a result as thumbor 7.8's `frame(url)` filter does.
///
/// The nine patch's one-pixel border marks, in opaque black, the stretchable columns (top row)
/// and rows (left column), and the padding: the result is first put on an opaque white canvas
/// grown by the bottom row's and right column's unmarked runs (the content area), then the
/// nine patch's cells are drawn over the whole canvas, the fixed ones at their size and the
/// stretchable ones sharing what is left, scaled bilinearly and merged source-over.
enum NinePatchFrame {
    /// A straight RGBA bitmap.
    struct Bitmap {
        var width: Int, height: Int
        var pixels: [UInt8]

        func value(_ x: Int, _ y: Int, _ channel: Int) -> Int { Int(pixels[(y * width + x) * 4 + channel]) }

        /// Opaque black: the nine patch's marker.
        func isMarked(_ x: Int, _ y: Int) -> Bool {
            let index = (y * width + x) * 4
            return pixels[index] == 0 && pixels[index + 1] == 0 && pixels[index + 2] == 0 && pixels[index + 3] == 255
        }
    }

    static func apply(_ ninePatch: AlcedoImage, to image: AlcedoImage) -> AlcedoImage {
        let patch = Bitmap(width: ninePatch.width, height: ninePatch.height, pixels: ninePatch.frames[0].pixels)
        guard patch.width >= 3, patch.height >= 3 else { return image }
        let pad = padding(patch)
        let canvas = PixelSize(width: image.width + pad.left + pad.right, height: image.height + pad.top + pad.bottom)
        let padded = image.embedded(in: canvas, at: (pad.left, pad.top), background: .clear).flattened(over: .white)
        let frames = padded.frames.map { frame -> AlcedoImage.Frame in
            var target = Bitmap(width: canvas.width, height: canvas.height, pixels: frame.pixels)
            draw(patch, into: &target)
            return AlcedoImage.Frame(pixels: target.pixels, duration: frame.duration)
        }
        return padded.replacingFrames(frames)
    }

    /// `_nine_patch.get_padding`: the unmarked runs at both ends of the bottom row and right column.
    static func padding(_ patch: Bitmap) -> (left: Int, top: Int, right: Int, bottom: Int) {
        var left = 0, top = 0, right = 0, bottom = 0
        let lastX = patch.width - 1, lastY = patch.height - 1
        if let x = (1..<lastX).first(where: { patch.isMarked($0, lastY) }) { left = x - 1 }
        if let x = (1..<lastX).reversed().first(where: { patch.isMarked($0, lastY) }) { right = patch.width - 2 - x }
        if let y = (1..<lastY).first(where: { patch.isMarked(lastX, $0) }) { top = y - 1 }
        if let y = (1..<lastY).reversed().first(where: { patch.isMarked(lastX, $0) }) { bottom = patch.height - 2 - y }
        return (left, top, right, bottom)
    }

    /// `_nine_patch.apply`: the cells of `patch` drawn over all of `target`.
    static func draw(_ patch: Bitmap, into target: inout Bitmap) {
        let stretchyWidth = (1..<(patch.width - 1)).filter { patch.isMarked($0, 0) }.count
        let stretchyHeight = (1..<(patch.height - 1)).filter { patch.isMarked(0, $0) }.count
        let targetStretchyWidth = max(0, target.width - (patch.width - 2 - stretchyWidth))
        let targetStretchyHeight = max(0, target.height - (patch.height - 2 - stretchyHeight))
        var sourceY = 1, targetY = 0
        while sourceY < patch.height - 1 {
            let rowStretchy = patch.isMarked(0, sourceY)
            var next = sourceY + 1
            while next < patch.height - 1, patch.isMarked(0, next) == rowStretchy { next += 1 }
            let sourceHeight = next - sourceY
            let targetHeight = rowStretchy
                ? Int(Double(sourceHeight) / Double(stretchyHeight) * Double(targetStretchyHeight) + 0.5) : sourceHeight
            var sourceX = 1, targetX = 0
            while sourceX < patch.width - 1 {
                let columnStretchy = patch.isMarked(sourceX, 0)
                var nextX = sourceX + 1
                while nextX < patch.width - 1, patch.isMarked(nextX, 0) == columnStretchy { nextX += 1 }
                let sourceWidth = nextX - sourceX
                let targetWidth = columnStretchy
                    ? Int(Double(sourceWidth) / Double(stretchyWidth) * Double(targetStretchyWidth) + 0.5) : sourceWidth
                paste(patch, (sourceX, sourceY, sourceWidth, sourceHeight), into: &target, (targetX, targetY, targetWidth, targetHeight))
                targetX += targetWidth
                sourceX += sourceWidth
            }
            targetY += targetHeight
            sourceY += sourceHeight
        }
    }

    /// `paste_rectangle`: one cell scaled bilinearly (from its top-left pixel and the three after
    /// it) and merged over the target's colour; the target keeps its alpha. A cell that does not
    /// fit is skipped.
    private static func paste(_ source: Bitmap, _ from: (x: Int, y: Int, width: Int, height: Int), into target: inout Bitmap,
                              _ to: (x: Int, y: Int, width: Int, height: Int)) {
        guard to.width > 0, to.height > 0, to.x + to.width <= target.width, to.y + to.height <= target.height else { return }
        let xRatio = Double(from.width - 1) / Double(to.width), yRatio = Double(from.height - 1) / Double(to.height)
        for y in 0..<to.height {
            let sy = Int(yRatio * Double(y)), fy = yRatio * Double(y) - Double(Int(yRatio * Double(y)))
            for x in 0..<to.width {
                let sx = Int(xRatio * Double(x)), fx = xRatio * Double(x) - Double(sx)
                func sample(_ channel: Int) -> Int {
                    let px = from.x + sx, py = from.y + sy
                    let a = source.value(px, py, channel), b = source.value(px + 1, py, channel)
                    let c = source.value(px, py + 1, channel), d = source.value(px + 1, py + 1, channel)
                    if a == b && a == c && a == d { return a }
                    let mixed = Double(a) * (1 - fx) * (1 - fy) + Double(b) * fx * (1 - fy) + Double(c) * (1 - fx) * fy + Double(d) * fx * fy
                    return Int(max(0, min(255, mixed)))
                }
                let index = ((to.y + y) * target.width + to.x + x) * 4
                let sourceClear = Double(255 - sample(3)), targetClear = Double(255 - Int(target.pixels[index + 3]))
                for channel in 0..<3 {
                    let value = (1 - sourceClear / 255) * Double(sample(channel))
                        + (1 - targetClear / 255) * Double(target.pixels[index + channel]) * (sourceClear / 255)
                    target.pixels[index + channel] = UInt8(max(0, min(255, value)))
                }
            }
        }
    }
}

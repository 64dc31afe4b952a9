import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One picture composed of many images on a grid, each scaled to fit its cell (never
/// enlarged), drawn over a checkerboard so transparency shows, with optional caption lines
/// below it in a 5x7 pixel font. Animated images show their first frame.
///
/// The sheet is an ``AlcedoImage``; ``png(_:)`` encodes it with the registry's PNG encoder.
struct ContactSheet {
    /// One cell: an image and the lines written under it (none for no caption).
    struct Entry {
        let image: AlcedoImage
        let caption: [String]
    }

    /// The box every image is fitted into (default 240x180).
    var cellSize = PixelSize(width: 240, height: 180)
    /// Columns of the grid (default 4; fewer when there are fewer entries).
    var columns = 4
    /// Space around and between cells, in pixels (default 12).
    var spacing = 12
    /// Caption scale: each font pixel is drawn as a `scale` x `scale` square (default 2). When
    /// a caption line is too wide for the cell, every caption is drawn at scale 1, and lines
    /// still too wide are cut with `..`.
    var captionScale = 2
    var background = RGBA(red: 250, green: 250, blue: 250)
    var textColor = RGBA(red: 40, green: 40, blue: 40)

    /// The sheet for `entries` (at least one cell, even when `entries` is empty).
    func render(_ entries: [Entry]) -> AlcedoImage {
        let columnCount = max(1, min(columns, entries.count))
        let rowCount = max(1, (entries.count + columnCount - 1) / columnCount)
        let captionLines = entries.map(\.caption.count).max() ?? 0
        let widest = entries.flatMap(\.caption).map { BitmapFont.width(of: $0, scale: max(1, captionScale)) }.max() ?? 0
        let scale = widest > cellSize.width ? 1 : max(1, captionScale)
        let lineHeight = (BitmapFont.glyphHeight + 3) * scale
        let cellHeight = cellSize.height + (captionLines > 0 ? 6 + captionLines * lineHeight : 0)
        var canvas = Canvas(width: spacing + columnCount * (cellSize.width + spacing),
                            height: spacing + rowCount * (cellHeight + spacing), fill: background)

        for (index, entry) in entries.enumerated() {
            let left = spacing + (index % columnCount) * (cellSize.width + spacing)
            let top = spacing + (index / columnCount) * (cellHeight + spacing)
            var thumbnail = entry.image.isAnimated ? entry.image.frame(at: 0) : entry.image
            thumbnail = thumbnail.resized(toFit: cellSize)
            let x = left + (cellSize.width - thumbnail.width) / 2
            let y = top + (cellSize.height - thumbnail.height) / 2
            canvas.drawCheckerboard(x: x, y: y, width: thumbnail.width, height: thumbnail.height)
            canvas.composite(thumbnail, x: x, y: y)
            for (line, text) in entry.caption.enumerated() {
                canvas.drawText(text, x: left, y: top + cellSize.height + 6 + line * lineHeight,
                                maxWidth: cellSize.width, scale: scale, color: textColor)
            }
        }
        return AlcedoImage(width: canvas.width, height: canvas.height, pixels: canvas.pixels, sourceFormat: .png)
    }

    /// The sheet for `entries`, encoded as PNG.
    func png(_ entries: [Entry]) throws(AlcedoError) -> Data {
        try ImageCodecRegistry.shared.encode(render(entries), as: .png)
    }
}

/// An RGBA8 drawing surface (straight alpha) with the few operations the sheet needs.
private struct Canvas {
    let width: Int
    let height: Int
    var pixels: [UInt8]

    init(width: Int, height: Int, fill: RGBA) {
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: 0, count: width * height * 4)
        for offset in stride(from: 0, to: pixels.count, by: 4) { set(offset, fill) }
    }

    /// `start..<start + length` cut to `0..<limit` (empty when they do not meet).
    private static func clamped(_ start: Int, _ length: Int, _ limit: Int) -> Range<Int> {
        let lower = min(max(0, start), limit)
        return lower..<max(lower, min(limit, start + length))
    }

    private mutating func set(_ offset: Int, _ color: RGBA) {
        pixels[offset] = color.red
        pixels[offset + 1] = color.green
        pixels[offset + 2] = color.blue
        pixels[offset + 3] = color.alpha
    }

    /// Fills a rectangle, clipped to the canvas.
    mutating func fill(x: Int, y: Int, width w: Int, height h: Int, color: RGBA) {
        for row in Self.clamped(y, h, height) {
            for column in Self.clamped(x, w, width) {
                set((row * width + column) * 4, color)
            }
        }
    }

    /// Light and mid grey squares of 8 pixels, the usual sign of transparency.
    mutating func drawCheckerboard(x: Int, y: Int, width w: Int, height h: Int) {
        let light = RGBA(red: 255, green: 255, blue: 255), dark = RGBA(red: 214, green: 214, blue: 214)
        for row in Self.clamped(y, h, height) {
            for column in Self.clamped(x, w, width) {
                set((row * width + column) * 4, ((row - y) / 8 + (column - x) / 8) % 2 == 0 ? light : dark)
            }
        }
    }

    /// Draws `image`'s first frame over the canvas at (`x`, `y`), blending by its alpha.
    mutating func composite(_ image: AlcedoImage, x: Int, y: Int) {
        let source = image.pixels
        for row in 0..<image.height where y + row >= 0 && y + row < height {
            for column in 0..<image.width where x + column >= 0 && x + column < width {
                let from = (row * image.width + column) * 4
                let to = ((y + row) * width + x + column) * 4
                let alpha = Int(source[from + 3])
                for channel in 0..<3 {
                    let blended = (Int(source[from + channel]) * alpha + Int(pixels[to + channel]) * (255 - alpha) + 127) / 255
                    pixels[to + channel] = UInt8(blended)
                }
                pixels[to + 3] = 255
            }
        }
    }

    /// Draws one line of `text` at (`x`, `y`) at `scale`, cut with `..` when it is wider than `maxWidth`.
    mutating func drawText(_ text: String, x: Int, y: Int, maxWidth: Int, scale: Int, color: RGBA) {
        let scale = max(1, scale)
        var line = text
        if BitmapFont.width(of: line, scale: scale) > maxWidth {
            let fitting = max(0, (maxWidth / scale + 1) / BitmapFont.advance - 2)
            line = String(line.prefix(fitting)) + ".."
        }
        var penX = x
        for character in line {
            let rows = BitmapFont.glyph(for: character)
            for (row, bits) in rows.enumerated() {
                for bit in 0..<BitmapFont.glyphWidth where bits & (0x10 >> UInt8(bit)) != 0 {
                    fill(x: penX + bit * scale, y: y + row * scale, width: scale, height: scale, color: color)
                }
            }
            penX += BitmapFont.advance * scale
        }
    }
}

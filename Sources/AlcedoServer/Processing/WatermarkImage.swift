import Alcedo
import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The server's watermark for imgproxy's `watermark`/`wm` option: decoded once when the server
/// starts (from `--watermark-path`, `--watermark-url` or `--watermark-data`), its scaled copies
/// kept per size (at most ``scaledCopyLimit``), so a watermark costs one resize per result size.
///
/// Placement follows imgproxy 4: without a scale the watermark keeps its own size; with
/// `scale` it is fitted (enlarged if need be) into that fraction of the result; compass
/// positions and focus points place it with offsets times dpr (fractions of the image below
/// 1), and it may overflow the image; `re` tiles it over the whole image, centred, the offsets
/// giving the spacing between tiles. Its alpha is multiplied by ``opacity`` and by the URL's opacity.
public final class WatermarkImage: Sendable {
    /// The decoded watermark (first frame).
    public let image: AlcedoImage
    /// The base opacity every `wm` opacity multiplies (default 1, imgproxy's `IMGPROXY_WATERMARK_OPACITY`).
    public let opacity: Double
    /// Names the watermark's bytes and opacity in processor identifiers (a changed watermark
    /// makes new variants).
    public let identifier: String
    /// The most scaled copies kept (16); the table is emptied when full.
    public static let scaledCopyLimit = 16
    private let scaledCopies = Mutex<[PixelSize: AlcedoImage]>([:])

    /// Decodes a watermark.
    /// - Parameters:
    ///   - data: the image's bytes, in any format Alcedo decodes.
    ///   - opacity: the base opacity in `0...1` (default 1).
    /// - Throws: ``AlcedoError`` when the bytes do not decode.
    public init(data: Data, opacity: Double = 1) throws(AlcedoError) {
        let decoded = try ImageCodecRegistry.shared.decode(data)
        image = decoded.isAnimated ? decoded.frame(at: 0) : decoded
        self.opacity = min(1, max(0, opacity))
        let digest = SHA256.hash(data: data).prefix(8).map { String($0, radix: 16) }.joined()
        identifier = digest + "@" + ProcessingOptions.number(self.opacity)
    }

    /// The watermark at `size` (made once per size while cached).
    func scaled(to size: PixelSize) -> AlcedoImage {
        if size == image.pixelSize { return image }
        if let hit = scaledCopies.withLock({ $0[size] }) { return hit }
        let result = image.resized(to: size)
        scaledCopies.withLock { table in
            if table.count >= Self.scaledCopyLimit { table.removeAll() }
            table[size] = result
        }
        return result
    }

    /// `image` with the watermark `mark` drawn over every frame.
    func apply(_ mark: ProcessingOptions.Watermark, to image: AlcedoImage, dpr: Double) -> AlcedoImage {
        let strength = mark.opacity * opacity
        guard strength > 0 else { return image }
        var size = self.image.pixelSize
        if mark.scale > 0 {
            let boxWidth = max(ImgproxyGeometry.scaleToEven(image.width, mark.scale), 1)
            let boxHeight = max(ImgproxyGeometry.scaleToEven(image.height, mark.scale), 1)
            let shrink = max(Double(size.width) / Double(boxWidth), Double(size.height) / Double(boxHeight))
            size = PixelSize(width: max(1, ImgproxyGeometry.scale(size.width, 1 / shrink)),
                             height: max(1, ImgproxyGeometry.scale(size.height, 1 / shrink)))
        }
        let mark0 = scaled(to: size)
        switch mark.position {
        case .replicate:
            let padX = Self.spacing(mark.xOffset, image.width, dpr), padY = Self.spacing(mark.yOffset, image.height, dpr)
            let tile = mark0.embedded(in: PixelSize(width: size.width + max(0, padX), height: size.height + max(0, padY)),
                                      at: (max(0, padX) / 2, max(0, padY) / 2), background: .clear)
            var across = (image.width + tile.width - 1) / tile.width, down = (image.height + tile.height - 1) / tile.height
            if across % 2 == 0 { across += 1 }
            if down % 2 == 0 { down += 1 }
            let shiftX = (across * tile.width - image.width) / 2, shiftY = (down * tile.height - image.height) / 2
            var overlay = [UInt8](repeating: 0, count: image.width * image.height * 4)
            let tilePixels = tile.pixels
            for y in 0..<image.height {
                let ty = (y + shiftY) % tile.height
                for x in 0..<image.width {
                    let tx = (x + shiftX) % tile.width
                    let from = (ty * tile.width + tx) * 4, to = (y * image.width + x) * 4
                    overlay[to] = tilePixels[from]; overlay[to + 1] = tilePixels[from + 1]
                    overlay[to + 2] = tilePixels[from + 2]; overlay[to + 3] = tilePixels[from + 3]
                }
            }
            return Self.composite(overlay, size: image.pixelSize, at: (0, 0), over: image, opacity: strength)
        case .compass(let compass):
            let origin = ImgproxyGeometry.position(outer: image.pixelSize, inner: size,
                                                   gravity: .compass(compass, xOffset: mark.xOffset, yOffset: mark.yOffset),
                                                   dpr: dpr, allowOverflow: true)
            return Self.composite(mark0.pixels, size: size, at: origin, over: image, opacity: strength)
        case .focusPoint(let x, let y):
            let origin = ImgproxyGeometry.position(outer: image.pixelSize, inner: size, gravity: .focusPoint(x: x, y: y), dpr: dpr,
                                                   allowOverflow: true)
            return Self.composite(mark0.pixels, size: size, at: origin, over: image, opacity: strength)
        }
    }

    /// The spacing between replicated tiles: pixels times dpr from 1 up, else a fraction of the side.
    private static func spacing(_ offset: Double, _ side: Int, _ dpr: Double) -> Int {
        abs(offset) >= 1 ? Int((offset * dpr).rounded(.toNearestOrEven)) : ImgproxyGeometry.scaleToEven(side, offset)
    }

    /// `overlay` (straight RGBA of `size`) drawn source-over at `origin` on every frame of
    /// `image`, its alpha multiplied by `opacity`; what falls outside is dropped.
    static func composite(_ overlay: [UInt8], size: PixelSize, at origin: (x: Int, y: Int), over image: AlcedoImage,
                          opacity: Double) -> AlcedoImage {
        let fromX = max(0, -origin.x), toX = min(size.width, image.width - origin.x)
        let fromY = max(0, -origin.y), toY = min(size.height, image.height - origin.y)
        guard toX > fromX, toY > fromY else { return image }
        let scale = Float(opacity) / 255
        let frames = image.frames.map { frame -> AlcedoImage.Frame in
            var pixels = frame.pixels
            pixels.withUnsafeMutableBufferPointer { d in
                overlay.withUnsafeBufferPointer { s in
                    for y in fromY..<toY {
                        var si = (y * size.width + fromX) * 4
                        var di = ((origin.y + y) * image.width + origin.x + fromX) * 4
                        for _ in fromX..<toX {
                            let sa = Float(s[si + 3]) * scale
                            if sa > 0 {
                                let da = Float(d[di + 3]) / 255
                                let outA = sa + da * (1 - sa)
                                for c in 0..<3 {
                                    let value = (Float(s[si + c]) * sa + Float(d[di + c]) * da * (1 - sa)) / outA
                                    d[di + c] = UInt8(min(255, max(0, value.rounded())))
                                }
                                d[di + 3] = UInt8(min(255, max(0, (outA * 255).rounded())))
                            }
                            si += 4
                            di += 4
                        }
                    }
                }
            }
            return AlcedoImage.Frame(pixels: pixels, duration: frame.duration)
        }
        return image.replacingFrames(frames)
    }
}

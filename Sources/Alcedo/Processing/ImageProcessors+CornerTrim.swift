#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Cuts away the border whose colour is that of a corner pixel, as thumbor's `trim` does.
///
/// A pixel is content when the Euclidean distance between its RGBA values and the corner
/// pixel's (`√(Δr² + Δg² + Δb² + Δa²)`) is over ``tolerance``. Each row is scanned from the
/// left to its first content pixel and from the right down to the rightmost content found so
/// far, as thumbor's bounding-box scan does, and the box it finds is kept (every frame is cut
/// to the box of the first). When that box is empty (nothing left, or a scan that finds no
/// right edge) the image is returned unchanged, as thumbor ignores such a trim.
///
/// Identifier: `com.alcedo.cornerTrim(<corner>,<tolerance>)`.
public struct CornerTrimImageProcessor: ImageProcessor {
    /// The corner whose pixel gives the border colour.
    public enum Corner: String, Sendable, Hashable {
        case topLeft = "top-left"
        case bottomRight = "bottom-right"
    }

    /// The corner whose colour is trimmed (default top-left).
    public let corner: Corner
    /// The largest colour distance still taken as border (default 0: the exact colour).
    public let tolerance: Int

    /// Creates the processor.
    /// - Parameters:
    ///   - corner: the corner whose colour is trimmed (default `.topLeft`).
    ///   - tolerance: the largest RGBA distance still trimmed, 0 or more (default 0).
    public init(corner: Corner = .topLeft, tolerance: Int = 0) {
        self.corner = corner
        self.tolerance = tolerance
    }

    /// `com.alcedo.cornerTrim(<corner>,<tolerance>)`.
    public var identifier: String {
        ProcessorSupport.identifier("cornerTrim", [corner.rawValue, String(tolerance)])
    }

    /// The rectangle kept for `image` (first frame), `nil` when nothing is cut or the box is empty.
    public func contentRect(of image: AlcedoImage) -> (x: Int, y: Int, size: PixelSize)? {
        guard let box = contentBox(of: image), box.size != image.pixelSize else { return nil }
        return box
    }

    /// The box of the pixels that differ from the corner's colour by more than the tolerance
    /// (first frame), the whole image when none is cut; `nil` only when no pixel is left.
    public func contentBox(of image: AlcedoImage) -> (x: Int, y: Int, size: PixelSize)? {
        let width = image.width, height = image.height
        guard width > 0, height > 0 else { return nil }
        let pixels = image.frames[0].pixels
        let reference = corner == .topLeft ? 0 : (width * height - 1) * 4
        let limit = Double(tolerance)
        func isContent(_ x: Int, _ y: Int) -> Bool {
            let index = (y * width + x) * 4
            var sum = 0
            for c in 0..<4 {
                let d = Int(pixels[index + c]) - Int(pixels[reference + c])
                sum += d * d
            }
            return Double(sum).squareRoot() > limit
        }
        var left = width, top = height, right = 0, bottom = 0
        for y in 0..<height {
            var x = 0
            while x < width {
                if isContent(x, y) {
                    left = min(left, x)
                    top = min(top, y)
                    bottom = y
                    break
                }
                x += 1
            }
            var xi = width - 1
            while xi > max(x, right) {
                if isContent(xi, y) {
                    right = xi
                    break
                }
                xi -= 1
            }
        }
        guard right >= left, bottom >= top else { return nil }
        return (left, top, PixelSize(width: right - left + 1, height: bottom - top + 1))
    }

    /// Trims every frame to the box of the first. Throws `.invalidParameter` for a negative tolerance.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        try ProcessorSupport.requireNonNegative(Double(tolerance), "tolerance", in: "CornerTrimImageProcessor")
        guard let rect = contentRect(of: image) else { return image }
        return try CroppingImageProcessor(size: rect.size, anchor: .init(
            x: rect.size.width == image.width ? 0 : Double(rect.x) / Double(image.width - rect.size.width),
            y: rect.size.height == image.height ? 0 : Double(rect.y) / Double(image.height - rect.size.height))).process(image)
    }
}

/// The anti-aliased coverage of a rectangle with rounded corners, in pixel coordinates (pixel
/// (x, y) covers `x..<x+1`, `y..<y+1`). Used by the round-corner and border processors.
///
/// Coverage is the signed distance from the pixel centre to the outline, `d` (negative
/// inside), mapped to `clamp(0.5 - d, 0, 1)`: exact (0 or 1) along straight edges on whole
/// pixels, and a one-pixel ramp along curves and fractional edges.
struct RoundedRectMask {
    private let centerX: Float
    private let centerY: Float
    private let halfWidth: Float
    private let halfHeight: Float
    /// Radii of the top-left, top-right, bottom-left and bottom-right corners.
    private let radii: SIMD4<Float>
    private let isEmpty: Bool

    /// The rectangle `minX..<maxX`, `minY..<maxY` with `radius` on `corners`; the radius is
    /// clamped to `0...min(width, height) / 2`. A rectangle without area covers nothing.
    init(minX: Double, minY: Double, maxX: Double, maxY: Double, radius: Double, corners: RectCorner) {
        let width = maxX - minX
        let height = maxY - minY
        isEmpty = !(width > 0 && height > 0)
        centerX = Float((minX + maxX) / 2)
        centerY = Float((minY + maxY) / 2)
        halfWidth = Float(max(width, 0) / 2)
        halfHeight = Float(max(height, 0) / 2)
        let r = Float(min(max(radius, 0), max(min(width, height), 0) / 2))
        radii = SIMD4(corners.contains(.topLeft) ? r : 0, corners.contains(.topRight) ? r : 0,
                      corners.contains(.bottomLeft) ? r : 0, corners.contains(.bottomRight) ? r : 0)
    }

    /// The largest corner radius, after clamping.
    var maxRadius: Float { radii.max() }

    /// The fraction (`0...1`) of pixel (`x`, `y`) inside the rectangle.
    @inline(__always)
    func coverage(x: Int, y: Int) -> Float {
        if isEmpty { return 0 }
        let px = Float(x) + 0.5 - centerX
        let py = Float(y) + 0.5 - centerY
        let r = px < 0 ? (py < 0 ? radii[0] : radii[2]) : (py < 0 ? radii[1] : radii[3])
        let qx = abs(px) - (halfWidth - r)
        let qy = abs(py) - (halfHeight - r)
        let ox = max(qx, 0)
        let oy = max(qy, 0)
        let distance = (ox * ox + oy * oy).squareRoot() + min(max(qx, qy), 0) - r
        return min(max(0.5 - distance, 0), 1)
    }

    /// Calls `body(x, y)` for every pixel of a `width` x `height` image that lies within
    /// `band` pixels of an edge: the only pixels an outline of that reach can touch.
    @inline(__always)
    static func forEachPixel(inEdgeBand band: Int, width: Int, height: Int, _ body: (Int, Int) -> Void) {
        let band = max(band, 0)
        for y in 0..<height {
            if y < band || y >= height - band || 2 * band >= width {
                for x in 0..<width { body(x, y) }
            } else {
                for x in 0..<band { body(x, y) }
                for x in (width - band)..<width { body(x, y) }
            }
        }
    }
}

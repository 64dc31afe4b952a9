/// Cuts away the background around an image's content (imgproxy's `trim`).
///
/// The background is ``color``, or the top-left pixel's colour when it is `nil`. Transparent
/// pixels count as magenta (`#FF00FF`) for the comparison, so `color` magenta trims transparent
/// margins. As libvips' `find_trim` (which imgproxy uses) does, each channel is first smoothed
/// by a 3x3 median (edge pixels repeated), so single noisy pixels on a margin do not count;
/// a pixel is content when any of its smoothed red, green and blue values differs from the
/// background's by more than ``threshold``. The bounding box of the content of the first frame
/// is kept (every frame is cut to it); an image with no content is returned unchanged.
///
/// Identifier: `com.alcedo.trim(<threshold>,<colour>,<equalHorizontal>,<equalVertical>)`.
public struct TrimImageProcessor: ImageProcessor {
    /// The largest channel difference still taken as background (default 10).
    public let threshold: Double
    /// The background colour (default `nil`: the top-left pixel's).
    public let color: RGBA?
    /// Cut the same width from the left and the right: the smaller of the two (default `false`).
    public let equalHorizontal: Bool
    /// Cut the same height from the top and the bottom: the smaller of the two (default `false`).
    public let equalVertical: Bool

    /// Creates a trim.
    /// - Parameters:
    ///   - threshold: the largest channel difference still taken as background (default 10).
    ///   - color: the background colour (default `nil`: the top-left pixel's).
    ///   - equalHorizontal: cut as much from the left as from the right (default `false`).
    ///   - equalVertical: cut as much from the top as from the bottom (default `false`).
    public init(threshold: Double = 10, color: RGBA? = nil, equalHorizontal: Bool = false, equalVertical: Bool = false) {
        self.threshold = threshold
        self.color = color
        self.equalHorizontal = equalHorizontal
        self.equalVertical = equalVertical
    }

    public var identifier: String {
        ProcessorSupport.identifier("trim", [ProcessorSupport.number(threshold), ProcessorSupport.color(color),
                                             String(equalHorizontal), String(equalVertical)])
    }

    /// The rectangle kept for `image`: `nil` when nothing is cut.
    public func contentRect(of image: AlcedoImage) -> (x: Int, y: Int, size: PixelSize)? {
        let width = image.width, height = image.height
        let pixels = image.frames[0].pixels
        func flattened(_ index: Int) -> (Int, Int, Int) {
            let alpha = Int(pixels[index + 3]), inverse = 255 - alpha
            return ((Int(pixels[index]) * alpha + 255 * inverse + 127) / 255,
                    (Int(pixels[index + 1]) * alpha + 127) / 255,
                    (Int(pixels[index + 2]) * alpha + 255 * inverse + 127) / 255)
        }
        let background = color.map { (Int($0.red), Int($0.green), Int($0.blue)) } ?? flattened(0)
        let limit = threshold
        // The flattened channels, one plane each, then their 3x3 medians.
        var planes = [[UInt8]](repeating: [UInt8](repeating: 0, count: width * height), count: 3)
        for index in 0..<(width * height) {
            let (r, g, b) = flattened(index * 4)
            planes[0][index] = UInt8(r)
            planes[1][index] = UInt8(g)
            planes[2][index] = UInt8(b)
        }
        let smoothed = planes.map { Self.median3x3($0, width: width, height: height) }
        var minX = width, minY = height, maxX = -1, maxY = -1
        for y in 0..<height {
            for x in 0..<width {
                let index = y * width + x
                let difference = max(abs(Int(smoothed[0][index]) - background.0), abs(Int(smoothed[1][index]) - background.1),
                                     abs(Int(smoothed[2][index]) - background.2))
                if Double(difference) > limit {
                    minX = min(minX, x); maxX = max(maxX, x)
                    minY = min(minY, y); maxY = max(maxY, y)
                }
            }
        }
        guard maxX >= 0 else { return nil }
        var left = minX, top = minY, w = maxX - minX + 1, h = maxY - minY + 1
        if equalHorizontal {
            let right = width - left - w
            if right > left { w += right - left } else if right < left { w += left - right; left = right }
        }
        if equalVertical {
            let bottom = height - top - h
            if bottom > top { h += bottom - top } else if bottom < top { h += top - bottom; top = bottom }
        }
        guard w != width || h != height else { return nil }
        return (left, top, PixelSize(width: w, height: h))
    }

    /// The median of each pixel's 3x3 neighbourhood in `plane`, edge pixels repeated outside.
    static func median3x3(_ plane: [UInt8], width: Int, height: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: plane.count)
        var window = [UInt8](repeating: 0, count: 9)
        for y in 0..<height {
            let rows = (max(0, y - 1) * width, y * width, min(height - 1, y + 1) * width)
            for x in 0..<width {
                let columns = (max(0, x - 1), x, min(width - 1, x + 1))
                var slot = 0
                for row in [rows.0, rows.1, rows.2] {
                    window[slot] = plane[row + columns.0]
                    window[slot + 1] = plane[row + columns.1]
                    window[slot + 2] = plane[row + columns.2]
                    slot += 3
                }
                // Insertion sort of nine values: the fifth is the median.
                for i in 1..<9 {
                    let value = window[i]
                    var j = i - 1
                    while j >= 0 && window[j] > value {
                        window[j + 1] = window[j]
                        j -= 1
                    }
                    window[j + 1] = value
                }
                out[y * width + x] = window[4]
            }
        }
        return out
    }

    /// Trims every frame to the content of the first. Throws for a negative or non-finite threshold.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        try ProcessorSupport.requireNonNegative(threshold, "threshold", in: "trim")
        guard let rect = contentRect(of: image) else { return image }
        return try CroppingImageProcessor(size: rect.size, anchor: .init(
            x: rect.size.width == image.width ? 0 : Double(rect.x) / Double(image.width - rect.size.width),
            y: rect.size.height == image.height ? 0 : Double(rect.y) / Double(image.height - rect.size.height))).process(image)
    }
}

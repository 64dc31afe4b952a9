/// Pixelates every frame: each `size` x `size` block becomes the average of its pixels (the
/// average weighted by alpha, so transparent pixels do not darken their block), as imgproxy's
/// `pixelate`. Blocks start at the top-left corner; the last row and column of blocks may be
/// narrower and average only the pixels they hold.
///
/// Identifier: `com.alcedo.pixelate(<size>)`.
public struct PixelateImageProcessor: ImageProcessor {
    /// The side of a block in pixels; 1 or less leaves the image unchanged.
    public let size: Int

    /// Creates a pixelation with blocks of `size` pixels (1 or less: no change).
    public init(size: Int) {
        self.size = size
    }

    public var identifier: String {
        ProcessorSupport.identifier("pixelate", [String(size)])
    }

    /// Pixelates every frame. Takes no parameter that can be out of range.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        let block = min(size, max(image.width, image.height))
        guard block > 1 else { return image }
        let width = image.width, height = image.height
        return image.mappingFrames { pixels in
            var out = pixels
            out.withUnsafeMutableBufferPointer { p in
                var top = 0
                while top < height {
                    let bottom = min(height, top + block)
                    var left = 0
                    while left < width {
                        let right = min(width, left + block)
                        var sum = (r: 0, g: 0, b: 0, a: 0)
                        for y in top..<bottom {
                            var index = (y * width + left) * 4
                            for _ in left..<right {
                                let alpha = Int(p[index + 3])
                                sum.r += Int(p[index]) * alpha
                                sum.g += Int(p[index + 1]) * alpha
                                sum.b += Int(p[index + 2]) * alpha
                                sum.a += alpha
                                index += 4
                            }
                        }
                        let count = (bottom - top) * (right - left)
                        let alpha = UInt8((sum.a + count / 2) / count)
                        let value: (UInt8, UInt8, UInt8) = sum.a == 0 ? (0, 0, 0)
                            : (UInt8((sum.r + sum.a / 2) / sum.a), UInt8((sum.g + sum.a / 2) / sum.a), UInt8((sum.b + sum.a / 2) / sum.a))
                        for y in top..<bottom {
                            var index = (y * width + left) * 4
                            for _ in left..<right {
                                p[index] = value.0; p[index + 1] = value.1; p[index + 2] = value.2; p[index + 3] = alpha
                                index += 4
                            }
                        }
                        left = right
                    }
                    top = bottom
                }
            }
            return out
        }
    }
}

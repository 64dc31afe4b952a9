/// The EXIF orientation of a picture: how the stored pixels must be turned to stand upright.
/// Raw values are the EXIF tag values 1-8.
public enum ImageOrientation: Int, Sendable, Hashable, CaseIterable {
    /// 1: stored upright.
    case up = 1
    /// 2: mirrored left to right.
    case upMirrored = 2
    /// 3: turned 180°.
    case down = 3
    /// 4: mirrored top to bottom.
    case downMirrored = 4
    /// 5: mirrored along the main diagonal (transposed).
    case leftMirrored = 5
    /// 6: must be turned 90° clockwise to stand upright.
    case right = 6
    /// 7: mirrored along the anti-diagonal (transversed).
    case rightMirrored = 7
    /// 8: must be turned 90° counter-clockwise to stand upright.
    case left = 8

    /// `true` when the upright picture's width is the stored height (orientations 5-8).
    public var swapsDimensions: Bool { rawValue >= 5 }

    /// Turns stored RGBA8 pixels of `width` x `height` upright.
    /// - Returns: the upright pixels and their size (width and height swap for orientations 5-8).
    public func apply(to pixels: [UInt8], width: Int, height: Int) -> (pixels: [UInt8], width: Int, height: Int) {
        if self == .up { return (pixels, width, height) }
        let outWidth = swapsDimensions ? height : width
        let outHeight = swapsDimensions ? width : height
        let output = [UInt8](unsafeUninitializedCapacity: pixels.count) { out, initialized in
            pixels.withUnsafeBytes { inRaw in
                let src = inRaw.bindMemory(to: UInt32.self)
                let dst = UnsafeMutableRawBufferPointer(out).bindMemory(to: UInt32.self)
                for y in 0..<height {
                    let row = y * width
                    for x in 0..<width {
                        let (dx, dy) = destination(x: x, y: y, width: width, height: height)
                        dst[dy * outWidth + dx] = src[row + x]
                    }
                }
            }
            initialized = pixels.count
        }
        return (output, outWidth, outHeight)
    }

    /// Copies `count` stored rows of RGBA8, the first being stored row `firstRow` of a stored
    /// `width` x `height` picture, from `rows` (`width` pixels a row, tightly packed) to where
    /// they land in the upright picture at `output` (tightly packed). A decoder calls it strip
    /// by strip, so the upright picture is its only whole-image buffer.
    func place(rows: UnsafeRawPointer, firstRow: Int, count: Int, width: Int, height: Int,
               into output: UnsafeMutableRawPointer) {
        let outWidth = swapsDimensions ? height : width
        for row in 0..<count {
            let y = firstRow + row
            let source = rows + row * width * 4
            for x in 0..<width {
                let (dx, dy) = destination(x: x, y: y, width: width, height: height)
                output.storeBytes(of: source.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self),
                                  toByteOffset: (dy * outWidth + dx) * 4, as: UInt32.self)
            }
        }
    }

    /// Where stored pixel (x, y) lands in the upright picture.
    private func destination(x: Int, y: Int, width: Int, height: Int) -> (Int, Int) {
        switch self {
        case .up: return (x, y)
        case .upMirrored: return (width - 1 - x, y)
        case .down: return (width - 1 - x, height - 1 - y)
        case .downMirrored: return (x, height - 1 - y)
        case .leftMirrored: return (y, x)
        case .right: return (height - 1 - y, x)
        case .rightMirrored: return (height - 1 - y, width - 1 - x)
        case .left: return (y, width - 1 - x)
        }
    }
}

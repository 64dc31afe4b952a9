/// Content-aware placement of a crop: finds where a rectangle of a given size keeps the most
/// "interesting" part of an image, in the spirit of libvips' `attention` smartcrop.
///
/// How it decides, with a bounded cost whatever the image size:
/// 1. The first frame is reduced to a copy whose longest side is at most ``analysisSide``
///    (256) pixels, by averaging blocks of pixels (at most 4x4 samples per block), alpha
///    premultiplied so that transparent areas count as empty.
/// 2. Each pixel of the copy gets a score: edge energy (the luminance gradient between blocks,
///    and the spread of luminance inside a block, for detail finer than a block; each above a
///    small noise floor, so flat areas and JPEG noise score nothing), plus saturated colour,
///    plus a bonus for skin tones.
/// 3. An integral image of the scores gives the total score of any window in O(1), so every
///    position of the crop window on the copy (at most 256 x 256 of them) is scored.
/// 4. When the best window is not clearly better than the centred one (within 5% of the range
///    of scores), or the image has nothing that stands out (a uniform or evenly textured
///    picture), the crop is centred. Otherwise, among the windows within 5% of the best, the
///    one nearest to their centroid is taken, which centres a detailed object in the crop
///    when the crop is larger than the object. The position is scaled back to full resolution.
public enum SmartCrop {
    /// The longest side, in pixels, of the reduced copy the analysis works on (256).
    public static let analysisSide = 256

    /// The origin of the `size` rectangle inside `image` that keeps the most detail. A side of
    /// `size` larger than the image is limited to the image; when nothing stands out, the
    /// rectangle is centred. The result always lies inside the image.
    public static func origin(of size: PixelSize, in image: AlcedoImage) -> (x: Int, y: Int) {
        let pixels = image.frames[0].pixels, imageSize = image.pixelSize
        return origin(of: size, inImageOf: imageSize) { rows, columns in
            // At its own size, the resampler picks the pixels themselves.
            pixels.withUnsafeBufferPointer {
                Resampler.resize($0, width: imageSize.width, height: imageSize.height, to: imageSize, columns: columns, rows: rows)
            }
        }
    }

    /// The origin ``origin(of:in:)`` chooses in an image of `imageSize` whose pixels are not
    /// at hand: the analysis reads a few pixels (at most 7 x 7) of each of its (at most
    /// 256 x 256) blocks, and `samples` gives those: the RGBA8 pixels (straight alpha) at the crossings of
    /// the `rows` and `columns` it is given (ascending), row by row. With the pixels of the
    /// image, the choice is the same; ``Resampler/resize(_:width:height:to:columns:rows:)``
    /// makes them from a smaller source without making the whole resized image.
    public static func origin(of size: PixelSize, inImageOf imageSize: PixelSize,
                              samples: (_ rows: [Int], _ columns: [Int]) -> [UInt8]) -> (x: Int, y: Int) {
        let w = max(1, imageSize.width), h = max(1, imageSize.height)
        let cw = max(1, min(size.width, w)), ch = max(1, min(size.height, h))
        let centered = ((w - cw) / 2, (h - ch) / 2)
        guard cw < w || ch < h else { return (0, 0) }

        let factor = max(1, (max(w, h) + analysisSide - 1) / analysisSide)
        let sw = max(1, w / factor), sh = max(1, h / factor)
        let rows = sampleLines(blocks: sh, factor: factor, length: h), columns = sampleLines(blocks: sw, factor: factor, length: w)
        let grid = samples(rows, columns)
        guard grid.count == rows.count * columns.count * 4 else { return centered }
        let scores = scoreMap(grid, rows: rows.count, columns: columns.count, factor: factor, sw: sw, sh: sh)

        // Integral image: sums[(y) * (sw + 1) + x] is the sum of scores above and left of (x, y).
        let stride = sw + 1
        var sums = [Double](repeating: 0, count: stride * (sh + 1))
        for y in 0..<sh {
            var row = 0.0
            for x in 0..<sw {
                row += Double(scores[y * sw + x])
                sums[(y + 1) * stride + x + 1] = sums[y * stride + x + 1] + row
            }
        }
        func windowSum(_ x: Int, _ y: Int, _ ww: Int, _ wh: Int) -> Double {
            sums[(y + wh) * stride + x + ww] - sums[y * stride + x + ww] - sums[(y + wh) * stride + x] + sums[y * stride + x]
        }

        let ww = cw == w ? sw : max(1, min(sw, Int((Double(cw) / Double(factor)).rounded())))
        let wh = ch == h ? sh : max(1, min(sh, Int((Double(ch) / Double(factor)).rounded())))
        let freeX = sw - ww, freeY = sh - wh
        var windows = [Double](repeating: 0, count: (freeX + 1) * (freeY + 1))
        var best = -Double.infinity, worst = Double.infinity
        for y in 0...freeY {
            for x in 0...freeX {
                let score = windowSum(x, y, ww, wh)
                windows[y * (freeX + 1) + x] = score
                best = max(best, score)
                worst = min(worst, score)
            }
        }
        let range = best - worst
        // Less than half a score unit per pixel of the window between the best and the worst
        // place: nothing stands out.
        guard range >= 0.5 * Double(ww * wh) else { return centered }
        let tolerance = 0.05 * range
        let centerScore = windows[(freeY / 2) * (freeX + 1) + freeX / 2]
        guard centerScore < best - tolerance else { return centered }

        // The near-best windows, their centroid, and the near-best window closest to it.
        var sumX = 0.0, sumY = 0.0, count = 0.0
        for y in 0...freeY {
            for x in 0...freeX where windows[y * (freeX + 1) + x] >= best - tolerance {
                sumX += Double(x)
                sumY += Double(y)
                count += 1
            }
        }
        let meanX = sumX / count, meanY = sumY / count
        var chosen = (x: 0, y: 0), nearest = Double.infinity
        for y in 0...freeY {
            for x in 0...freeX where windows[y * (freeX + 1) + x] >= best - tolerance {
                let distance = (Double(x) - meanX) * (Double(x) - meanX) + (Double(y) - meanY) * (Double(y) - meanY)
                if distance < nearest {
                    nearest = distance
                    chosen = (x, y)
                }
            }
        }

        // The window's centre, scaled back, becomes the crop's centre (kept inside the image).
        func fullOrigin(_ small: Int, _ window: Int, _ crop: Int, _ full: Int, free: Int) -> Int {
            guard free > 0, crop < full else { return (full - crop) / 2 }
            let center = (Double(small) + Double(window) / 2) * Double(factor)
            return min(max(Int((center - Double(crop) / 2).rounded()), 0), full - crop)
        }
        return (fullOrigin(chosen.x, ww, cw, w, free: freeX), fullOrigin(chosen.y, wh, ch, h, free: freeY))
    }

    /// The lines (rows or columns) of a side of `length` pixels the analysis reads: in each
    /// of `blocks` blocks of `factor` pixels, every `max(1, factor / 4)`th from the block's
    /// first, the last line standing for those past the side; ascending, each once. Line `k`
    /// read (block by block, then within the block) is the `min(k, count - 1)`th of them.
    static func sampleLines(blocks: Int, factor: Int, length: Int) -> [Int] {
        let step = max(1, factor / 4)
        var lines = [Int]()
        for block in 0..<blocks {
            for offset in Swift.stride(from: 0, to: factor, by: step) {
                let line = min(block * factor + offset, length - 1)
                if lines.last != line { lines.append(line) }
            }
        }
        return lines
    }

    /// The score of each pixel of the reduced copy (`sw` x `sh`, blocks of `factor` pixels;
    /// a side shorter than `factor`, as in a 1 x 10,000 image, repeats its last pixel), from
    /// the pixels of the ``sampleLines(blocks:factor:length:)`` of each side (`rows` x `columns`).
    static func scoreMap(_ pixels: [UInt8], rows: Int, columns: Int, factor: Int, sw: Int, sh: Int) -> [Float] {
        // Premultiplied block averages, at most 4x4 samples per block.
        let step = max(1, factor / 4)
        let perBlock = (factor + step - 1) / step
        let samples = Float(perBlock * perBlock)
        var red = [Float](repeating: 0, count: sw * sh)
        var green = red, blue = red, texture = red
        pixels.withUnsafeBufferPointer { p in
            for sy in 0..<sh {
                for sx in 0..<sw {
                    var r = 0, g = 0, b = 0
                    var lumaSum: Float = 0, lumaSquares: Float = 0
                    for j in 0..<perBlock {
                        let row = min(sy * perBlock + j, rows - 1) * columns
                        for i in 0..<perBlock {
                            let index = (row + min(sx * perBlock + i, columns - 1)) * 4
                            let a = Int(p[index + 3])
                            let pr = Int(p[index]) * a, pg = Int(p[index + 1]) * a, pb = Int(p[index + 2]) * a
                            r += pr
                            g += pg
                            b += pb
                            let luma = (0.299 * Float(pr) + 0.587 * Float(pg) + 0.114 * Float(pb)) / 255
                            lumaSum += luma
                            lumaSquares += luma * luma
                        }
                    }
                    let i = sy * sw + sx
                    red[i] = Float(r) / (255 * samples)
                    green[i] = Float(g) / (255 * samples)
                    blue[i] = Float(b) / (255 * samples)
                    // Detail finer than a block, which its average hides: the spread of its samples.
                    let mean = lumaSum / samples
                    texture[i] = (max(0, lumaSquares / samples - mean * mean)).squareRoot()
                }
            }
        }
        var luma = [Float](repeating: 0, count: sw * sh)
        for i in 0..<(sw * sh) { luma[i] = 0.299 * red[i] + 0.587 * green[i] + 0.114 * blue[i] }

        var scores = [Float](repeating: 0, count: sw * sh)
        for y in 0..<sh {
            let up = max(0, y - 1), down = min(sh - 1, y + 1)
            for x in 0..<sw {
                let left = max(0, x - 1), right = min(sw - 1, x + 1)
                let i = y * sw + x
                // Edge energy: central differences of luminance, above a noise floor.
                let gradient = abs(luma[y * sw + right] - luma[y * sw + left]) + abs(luma[down * sw + x] - luma[up * sw + x])
                var score = max(0, gradient - 6) + max(0, texture[i] - 6)
                // Saturated colour draws attention.
                let r = red[i], g = green[i], b = blue[i]
                let chroma = max(r, g, b) - min(r, g, b)
                score += max(0, chroma - 48) * 0.25
                // Skin tones (a classic RGB rule), a modest bonus.
                if r > 95, g > 40, b > 20, r > g, r > b, r - min(g, b) > 15, abs(r - g) > 15 { score += 12 }
                scores[i] = score
            }
        }
        return scores
    }
}

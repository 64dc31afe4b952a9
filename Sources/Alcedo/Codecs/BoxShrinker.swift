extension DecodingOptions {
    /// The integer factor a decoder without finer scaling (PNG, a GIF's first frame) shrinks
    /// by while decoding for ``targetSize``: the largest that keeps the picture at least twice
    /// the size the target needs (the caller's resampler then reaches the exact size with
    /// Lanczos3 from there, as it does after its own box pre-shrink); 1 without a target or
    /// below 2.
    func boxShrinkFactor(width: Int, height: Int) -> Int {
        guard targetSize != nil, width > 0, height > 0 else { return 1 }
        let scale = minimumScale(forWidth: width, height: height)
        guard scale > 0 else { return 1 }
        let factor = Int((1 / (2 * scale)).rounded(.down))
        return max(1, min(factor, width, height))
    }
}

/// Box-averages RGBA rows into blocks of `factor` x `factor` pixels, premultiplying by alpha,
/// rows arriving in any order (Adam7 passes too; GIF frames placed on the canvas): each pixel adds to its block's sums.
struct BoxShrinker {
    let width: Int, height: Int, factor: Int
    let outWidth: Int, outHeight: Int
    /// One converted RGBA row, filled before each ``add(y:x:dx:count:)``.
    let row: UnsafeMutablePointer<UInt8>
    private let sums: UnsafeMutablePointer<UInt64>

    init(width: Int, height: Int, factor: Int) {
        self.width = width
        self.height = height
        self.factor = factor
        outWidth = (width + factor - 1) / factor
        outHeight = (height + factor - 1) / factor
        row = .allocate(capacity: width * 4)
        sums = .allocate(capacity: outWidth * outHeight * 4)
        sums.initialize(repeating: 0, count: outWidth * outHeight * 4)
    }

    /// The memory this shrinker holds: one RGBA row and four 64-bit sums per output pixel.
    static func memory(width: Int, height: Int, factor: Int) -> Int {
        width * 4 + ((width + factor - 1) / factor) * ((height + factor - 1) / factor) * 4 * 8
    }

    func deallocate() {
        row.deallocate()
        sums.deallocate()
    }

    /// Clears the sums, to shrink another picture of the same size.
    func reset() {
        sums.update(repeating: 0, count: outWidth * outHeight * 4)
    }

    /// Adds a whole RGBA row of the picture (`width` pixels) at row `y`, read in place.
    func add(row pixels: UnsafePointer<UInt8>, y: Int) {
        add(pixels, y: y, x: 0, dx: 1, count: width)
    }

    /// Adds the `count` pixels of ``row``, at image columns `x`, `x + dx`… of row `y`.
    func add(y: Int, x: Int, dx: Int, count: Int) {
        add(UnsafePointer(row), y: y, x: x, dx: dx, count: count)
    }

    private func add(_ pixels: UnsafePointer<UInt8>, y: Int, x: Int, dx: Int, count: Int) {
        let line = sums + (y / factor) * outWidth * 4
        var column = x
        for i in 0..<count {
            let cell = line + (column / factor) * 4
            let p = pixels + i * 4
            let alpha = UInt64(p[3])
            cell[0] &+= UInt64(p[0]) * alpha
            cell[1] &+= UInt64(p[1]) * alpha
            cell[2] &+= UInt64(p[2]) * alpha
            cell[3] &+= alpha
            column += dx
        }
    }

    /// Writes the averages, straight alpha, rounded, to `output` (`outWidth * outHeight * 4` bytes).
    func finish(into output: UnsafeMutablePointer<UInt8>) {
        for oy in 0..<outHeight {
            let rows = UInt64(min(factor, height - oy * factor))
            for ox in 0..<outWidth {
                let pixels = rows * UInt64(min(factor, width - ox * factor))
                let cell = sums + (oy * outWidth + ox) * 4
                let out = output + (oy * outWidth + ox) * 4
                let alpha = cell[3]
                out[3] = UInt8((alpha + pixels / 2) / pixels)
                for channel in 0..<3 {
                    out[channel] = alpha == 0 ? 0 : UInt8(min(255, (cell[channel] + alpha / 2) / alpha))
                }
            }
        }
    }
}

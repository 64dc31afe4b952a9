/// Reduces RGBA8 pixels to a GIF palette of at most 256 entries.
///
/// Pixels with alpha below 128 become the transparent index; every other pixel is taken as
/// opaque. When the opaque colours fit in the palette (with one slot kept for the transparent
/// index), the palette is exact and the pixels keep their colours. Otherwise the palette is
/// built by median cut over a 5-bit-per-channel histogram (the box with the largest squared
/// error is split at the weighted median of its widest channel), each entry being the mean of
/// the pixels in its box, refined by two rounds of k-means; every pixel is mapped to its
/// nearest entry (exactly, from a short list of candidates kept per 6-bit-per-channel cell),
/// with Floyd-Steinberg error diffusion when a dithering level above 0 is asked for
/// (``quantize(_:width:maxColors:dithering:)``). Distances weigh the channels by their share
/// of luma (``Color/distance(to:)``).
struct GIFColorQuantizer {
    /// A quantised frame.
    struct Result: Equatable {
        /// RGB triples, one per palette entry (the transparent entry, if any, is black).
        var palette: [UInt8]
        /// One palette index per pixel.
        var indices: [UInt8]
        /// The index that marks transparent pixels, if any pixel is transparent.
        var transparentIndex: Int?
        /// The number of palette entries (`palette.count / 3`).
        var colorCount: Int { palette.count / 3 }
    }

    /// The opaque colours of `frames` (alpha >= 128) as 0xRRGGBB, sorted, and whether any pixel
    /// is transparent; `nil` as soon as there are more than `limit` colours.
    static func exactColors(of frames: [[UInt8]], limit: Int) -> (colors: [UInt32], hasTransparency: Bool)? {
        var seen = Set<UInt32>()
        var hasTransparency = false
        for frame in frames {
            var overflow = false
            frame.withUnsafeBufferPointer { p in
                var i = 0
                while i < p.count {
                    if p[i + 3] < 128 {
                        hasTransparency = true
                    } else if seen.insert(UInt32(p[i]) << 16 | UInt32(p[i + 1]) << 8 | UInt32(p[i + 2])).inserted, seen.count > limit {
                        overflow = true
                        return
                    }
                    i += 4
                }
            }
            if overflow { return nil }
        }
        if hasTransparency && seen.count > limit - 1 { return nil }
        return (seen.sorted(), hasTransparency)
    }

    /// Maps `rgba` onto an exact palette of `colors` (from ``exactColors(of:limit:)``), with
    /// the transparent index after the colours when `hasTransparency`.
    static func exact(_ rgba: [UInt8], colors: [UInt32], hasTransparency: Bool) -> Result {
        var lookup = [UInt32: UInt8](minimumCapacity: colors.count)
        var palette = [UInt8]()
        palette.reserveCapacity((colors.count + 1) * 3)
        for (index, color) in colors.enumerated() {
            lookup[color] = UInt8(index)
            palette += [UInt8(color >> 16), UInt8((color >> 8) & 0xFF), UInt8(color & 0xFF)]
        }
        let transparent = hasTransparency ? colors.count : nil
        if hasTransparency { palette += [0, 0, 0] }
        let indices = rgba.withUnsafeBufferPointer { p in
            (0..<(p.count / 4)).map { pixel -> UInt8 in
                let i = pixel * 4
                if p[i + 3] < 128 { return UInt8(transparent ?? 0) }
                return lookup[UInt32(p[i]) << 16 | UInt32(p[i + 1]) << 8 | UInt32(p[i + 2])] ?? 0
            }
        }
        return Result(palette: palette, indices: indices, transparentIndex: transparent)
    }

    /// Quantises one frame to at most `maxColors` entries (2...256), exactly when it can.
    /// - Parameters:
    ///   - rgba: the frame's pixels, `width` to a row.
    ///   - width: the frame's width, needed for dithering (`nil`: no dithering).
    ///   - dithering: the share of each pixel's quantisation error spread to its neighbours
    ///     (Floyd-Steinberg), 0 (none, the default) to 1 (all of it). Transparent pixels take
    ///     and give no error; an exact palette is never dithered.
    static func quantize(_ rgba: [UInt8], width: Int? = nil, maxColors: Int = 256, dithering: Double = 0) -> Result {
        if let found = exactColors(of: [rgba], limit: maxColors) {
            return exact(rgba, colors: found.colors, hasTransparency: found.hasTransparency)
        }
        let histogram = Histogram(rgba)
        let opaqueColors = histogram.hasTransparency ? maxColors - 1 : maxColors
        var palette = medianCut(histogram.cells, colors: opaqueColors)
        refine(&palette, cells: histogram.cells, rounds: 2)
        var mapper = NearestColor(palette: palette)
        let transparent = histogram.hasTransparency ? palette.count : nil
        var rgb = palette.flatMap { [UInt8($0.red.rounded()), UInt8($0.green.rounded()), UInt8($0.blue.rounded())] }
        let indices: [UInt8]
        if let width, width > 0, dithering > 0, rgba.count % (width * 4) == 0 {
            indices = diffused(rgba, width: width, palette: rgb, mapper: &mapper, transparentIndex: transparent,
                               level: Float(min(1, dithering)))
        } else {
            indices = rgba.withUnsafeBufferPointer { p in
                (0..<(p.count / 4)).map { pixel -> UInt8 in
                    let i = pixel * 4
                    if p[i + 3] < 128 { return UInt8(transparent ?? 0) }
                    return mapper.index(red: p[i], green: p[i + 1], blue: p[i + 2])
                }
            }
        }
        if transparent != nil { rgb += [0, 0, 0] }
        return Result(palette: rgb, indices: indices, transparentIndex: transparent)
    }

    /// The indices of `rgba` with Floyd-Steinberg error diffusion: each opaque pixel, plus the
    /// error carried to it, is mapped to its nearest entry of `palette` (RGB triples as written),
    /// and `level` times the difference goes on to the pixels right (7/16), below left (3/16),
    /// below (5/16) and below right (1/16). Carried colours are clamped to 0...255, so that an
    /// error never builds up past what a palette entry can pay back.
    static func diffused(_ rgba: [UInt8], width: Int, palette: [UInt8], mapper: inout NearestColor,
                         transparentIndex: Int?, level: Float) -> [UInt8] {
        let height = rgba.count / 4 / width
        // Two rows of carried error (RGB floats), one pixel of margin on each side.
        let rowFloats = (width + 2) * 3
        var errors = [Float](repeating: 0, count: rowFloats * 2)
        var indices = [UInt8](repeating: UInt8(transparentIndex ?? 0), count: width * height)
        rgba.withUnsafeBufferPointer { p in
            palette.withUnsafeBufferPointer { colors in
                errors.withUnsafeMutableBufferPointer { carried in
                    indices.withUnsafeMutableBufferPointer { out in
                        var current = carried.baseAddress!, next = carried.baseAddress! + rowFloats
                        for y in 0..<height {
                            next.update(repeating: 0, count: rowFloats)
                            for x in 0..<width {
                                let i = (y * width + x) * 4
                                guard p[i + 3] >= 128 else { continue }
                                let e = (x + 1) * 3
                                let r = min(255, max(0, Float(p[i]) + current[e]))
                                let g = min(255, max(0, Float(p[i + 1]) + current[e + 1]))
                                let b = min(255, max(0, Float(p[i + 2]) + current[e + 2]))
                                let index = mapper.index(red: UInt8(r.rounded()), green: UInt8(g.rounded()), blue: UInt8(b.rounded()))
                                out[y * width + x] = index
                                let entry = Int(index) * 3
                                let errorR = (r - Float(colors[entry])) * level
                                let errorG = (g - Float(colors[entry + 1])) * level
                                let errorB = (b - Float(colors[entry + 2])) * level
                                current[e + 3] += errorR * (7 / 16)
                                current[e + 4] += errorG * (7 / 16)
                                current[e + 5] += errorB * (7 / 16)
                                next[e - 3] += errorR * (3 / 16)
                                next[e - 2] += errorG * (3 / 16)
                                next[e - 1] += errorB * (3 / 16)
                                next[e] += errorR * (5 / 16)
                                next[e + 1] += errorG * (5 / 16)
                                next[e + 2] += errorB * (5 / 16)
                                next[e + 3] += errorR * (1 / 16)
                                next[e + 4] += errorG * (1 / 16)
                                next[e + 5] += errorB * (1 / 16)
                            }
                            swap(&current, &next)
                        }
                    }
                }
            }
        }
        return indices
    }

    /// A colour with fractional channels (0...255).
    struct Color: Equatable {
        var red: Double, green: Double, blue: Double

        /// How much each channel's difference counts in ``distance(to:)``: Rec. 601's luma
        /// coefficients, times 3 (so that the three add up to 3, as unweighted channels do). A
        /// green error shows about five times as much as a blue one; weighing the channels so
        /// puts the palette's entries where the eye (and a luma metric) sees the differences.
        static let redWeight = 0.897, greenWeight = 1.761, blueWeight = 0.342

        /// The weighted squared distance between two colours.
        func distance(to other: Color) -> Double {
            let r = red - other.red, g = green - other.green, b = blue - other.blue
            return Self.redWeight * r * r + Self.greenWeight * g * g + Self.blueWeight * b * b
        }

        /// The weight of channel `axis` (0 red, 1 green, 2 blue).
        static func weight(_ axis: Int) -> Double { axis == 0 ? redWeight : (axis == 1 ? greenWeight : blueWeight) }
    }

    /// One non-empty cell of the 5-bit histogram: how many pixels fell in it and their mean.
    struct Cell {
        var count: Double
        var mean: Color

        func channel(_ axis: Int) -> Double { axis == 0 ? mean.red : (axis == 1 ? mean.green : mean.blue) }
    }

    /// The opaque pixels of a frame binned at 5 bits per channel, keeping exact sums.
    struct Histogram {
        var cells: [Cell] = []
        var hasTransparency = false

        init(_ rgba: [UInt8]) {
            var counts = [Int](repeating: 0, count: 32_768)
            var sums = [Int](repeating: 0, count: 32_768 * 3)
            rgba.withUnsafeBufferPointer { p in
                var i = 0
                while i < p.count {
                    if p[i + 3] < 128 {
                        hasTransparency = true
                    } else {
                        let cell = Int(p[i] >> 3) << 10 | Int(p[i + 1] >> 3) << 5 | Int(p[i + 2] >> 3)
                        counts[cell] += 1
                        sums[cell * 3] += Int(p[i])
                        sums[cell * 3 + 1] += Int(p[i + 1])
                        sums[cell * 3 + 2] += Int(p[i + 2])
                    }
                    i += 4
                }
            }
            for cell in 0..<32_768 where counts[cell] > 0 {
                let n = Double(counts[cell])
                cells.append(Cell(count: n, mean: Color(red: Double(sums[cell * 3]) / n, green: Double(sums[cell * 3 + 1]) / n,
                                                       blue: Double(sums[cell * 3 + 2]) / n)))
            }
        }
    }

    /// Splits the cells into at most `colors` boxes and returns each box's weighted mean.
    static func medianCut(_ cells: [Cell], colors: Int) -> [Color] {
        guard !cells.isEmpty else { return [Color(red: 0, green: 0, blue: 0)] }
        var boxes: [[Cell]] = [cells]
        var errors: [Double] = [squaredError(cells)]
        while boxes.count < colors {
            guard let worst = errors.indices.max(by: { errors[$0] < errors[$1] }), errors[worst] > 0, boxes[worst].count > 1 else { break }
            let box = boxes[worst]
            let axis = widestAxis(box)
            let sorted = box.sorted { $0.channel(axis) < $1.channel(axis) }
            let half = sorted.reduce(0) { $0 + $1.count } / 2
            var running = 0.0, split = 1
            for (index, cell) in sorted.enumerated() {
                running += cell.count
                if running >= half { split = max(1, min(sorted.count - 1, index + 1)); break }
            }
            let low = Array(sorted[..<split]), high = Array(sorted[split...])
            boxes[worst] = low
            errors[worst] = squaredError(low)
            boxes.append(high)
            errors.append(squaredError(high))
        }
        return boxes.map { mean(of: $0) }
    }

    /// Moves each palette entry to the mean of the cells nearest to it, `rounds` times.
    static func refine(_ palette: inout [Color], cells: [Cell], rounds: Int) {
        for _ in 0..<rounds {
            var sums = [Color](repeating: Color(red: 0, green: 0, blue: 0), count: palette.count)
            var counts = [Double](repeating: 0, count: palette.count)
            let search = PaletteSearch(palette)
            for cell in cells {
                let best = search.nearest(to: cell.mean).index
                sums[best].red += cell.mean.red * cell.count
                sums[best].green += cell.mean.green * cell.count
                sums[best].blue += cell.mean.blue * cell.count
                counts[best] += cell.count
            }
            for index in palette.indices where counts[index] > 0 {
                palette[index] = Color(red: sums[index].red / counts[index], green: sums[index].green / counts[index],
                                       blue: sums[index].blue / counts[index])
            }
        }
    }

    private static func mean(of cells: [Cell]) -> Color {
        var total = 0.0, r = 0.0, g = 0.0, b = 0.0
        for cell in cells {
            total += cell.count
            r += cell.mean.red * cell.count
            g += cell.mean.green * cell.count
            b += cell.mean.blue * cell.count
        }
        return Color(red: r / total, green: g / total, blue: b / total)
    }

    private static func squaredError(_ cells: [Cell]) -> Double {
        let center = mean(of: cells)
        return cells.reduce(0) { $0 + $1.count * $1.mean.distance(to: center) }
    }

    private static func widestAxis(_ cells: [Cell]) -> Int {
        var best = 0, bestRange = -1.0
        for axis in 0..<3 {
            let values = cells.map { $0.channel(axis) }
            let range = ((values.max() ?? 0) - (values.min() ?? 0)) * Color.weight(axis).squareRoot()
            if range > bestRange { bestRange = range; best = axis }
        }
        return best
    }

    /// Finds palette entries near a colour without measuring the distance to every entry: the
    /// entries are sorted by green (the heaviest channel), and a search stops in each
    /// direction once the green difference alone puts the rest out of reach.
    struct PaletteSearch {
        let palette: [Color]
        /// Palette indices in order of green.
        private let order: [Int]
        /// The green of each entry of `order`.
        private let greens: [Double]

        init(_ palette: [Color]) {
            self.palette = palette
            order = palette.indices.sorted { palette[$0].green < palette[$1].green }
            greens = order.map { palette[$0].green }
        }

        /// The first position in `order` whose green is at least `green`.
        private func position(ofGreen green: Double) -> Int {
            var low = 0, high = greens.count
            while low < high {
                let middle = (low + high) / 2
                if greens[middle] < green { low = middle + 1 } else { high = middle }
            }
            return low
        }

        /// The entry nearest to `color` (the lowest index among equals is not promised) and its
        /// weighted squared distance.
        func nearest(to color: Color) -> (index: Int, distance: Double) {
            var best = order.isEmpty ? 0 : order[0], bestDistance = Double.infinity
            let start = position(ofGreen: color.green)
            var up = start, down = start - 1
            while up < order.count || down >= 0 {
                if up < order.count {
                    let gap = greens[up] - color.green
                    if Color.greenWeight * gap * gap >= bestDistance {
                        up = order.count
                    } else {
                        let distance = color.distance(to: palette[order[up]])
                        if distance < bestDistance { bestDistance = distance; best = order[up] }
                        up += 1
                    }
                }
                if down >= 0 {
                    let gap = color.green - greens[down]
                    if Color.greenWeight * gap * gap >= bestDistance {
                        down = -1
                    } else {
                        let distance = color.distance(to: palette[order[down]])
                        if distance < bestDistance { bestDistance = distance; best = order[down] }
                        down -= 1
                    }
                }
            }
            return (best, bestDistance)
        }

        /// Calls `body` with the index of every entry within weighted squared distance `limit`
        /// of `color`.
        func forEach(within limit: Double, of color: Color, _ body: (Int) -> Void) {
            let reach = (limit / Color.greenWeight).squareRoot()
            var position = position(ofGreen: color.green - reach)
            while position < order.count, greens[position] <= color.green + reach {
                if color.distance(to: palette[order[position]]) <= limit { body(order[position]) }
                position += 1
            }
        }
    }

    /// The nearest palette entry for a colour, exactly, found among a short list of candidates
    /// kept per 6-bit-per-channel cell. A cell spans 4 levels a channel, so every colour in it
    /// lies within `cellRadius` of the cell's centre; an entry farther from the centre than the
    /// centre's nearest entry plus twice that radius cannot be nearest to any colour in the cell.
    /// The list of the others is built the first time a colour of the cell is asked for.
    struct NearestColor {
        let palette: [Color]
        private let search: PaletteSearch
        /// Where each cell's list starts in `candidates` (-1: not built yet).
        private var listStart = [Int32](repeating: -1, count: 1 << 18)
        /// The lists, each its length followed by that many palette indices.
        private var candidates: [UInt16] = []
        /// The largest weighted distance from a cell's centre to a colour in the cell.
        private static let cellRadius = (Color.redWeight + Color.greenWeight + Color.blueWeight).squareRoot() * 1.5

        init(palette: [Color]) {
            self.palette = palette
            search = PaletteSearch(palette)
            candidates.reserveCapacity(4096)
        }

        mutating func index(red: UInt8, green: UInt8, blue: UInt8) -> UInt8 {
            let cell = Int(red >> 2) << 12 | Int(green >> 2) << 6 | Int(blue >> 2)
            var start = Int(listStart[cell])
            if start < 0 {
                start = makeList(red: red, green: green, blue: blue)
                listStart[cell] = Int32(start)
            }
            let count = Int(candidates[start])
            if count == 1 { return UInt8(candidates[start + 1]) }
            let color = Color(red: Double(red), green: Double(green), blue: Double(blue))
            var best = candidates[start + 1], bestDistance = Double.infinity
            for offset in 1...count {
                let index = candidates[start + offset]
                let distance = color.distance(to: palette[Int(index)])
                if distance < bestDistance { bestDistance = distance; best = index }
            }
            return UInt8(best)
        }

        /// Appends the candidate list of the cell holding the colour and returns where it starts.
        private mutating func makeList(red: UInt8, green: UInt8, blue: UInt8) -> Int {
            let center = Color(red: Double(red & 0xFC) + 1.5, green: Double(green & 0xFC) + 1.5, blue: Double(blue & 0xFC) + 1.5)
            let reach = search.nearest(to: center).distance.squareRoot() + 2 * Self.cellRadius
            let start = candidates.count
            candidates.append(0)
            var count: UInt16 = 0
            search.forEach(within: reach * reach, of: center) { index in
                candidates.append(UInt16(index))
                count += 1
            }
            candidates[start] = count
            return start
        }
    }
}

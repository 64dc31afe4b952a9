import CPNG

/// Inflates, unfilters and converts PNG image data row by row, straight into RGBA8 storage.
///
/// The zlib stream (the data of consecutive `IDAT` chunks, or of an APNG frame's `fdAT`
/// chunks) is inflated with zlib one row at a time into two row buffers, so the working
/// memory is two rows whatever the bit depth, interlaced or not: each row of an Adam7 pass is
/// converted and written to its pixels in the output as soon as it is unfiltered.
///
/// - Inflation stops once the last row is complete: the bytes inflated are bounded by what
///   the header needs. What follows in the stream is then read only up to its end marker
///   (checking its Adler-32 checksum) and only while it inflates to nothing; extra image data
///   after the last row is **ignored**, as browsers and Pillow ignore it, and never inflated.
/// - A stream that ends before the last row is `.truncated`; a zlib error (bad code, bad
///   checksum) or an unknown filter type is `.corrupt`.
/// - The ``DecodingDeadline`` is checked between rows (at least every 256 KiB of row data).
struct PNGRasterDecoder {
    /// The raster's size and sample layout.
    let width: Int
    let height: Int
    let interlaced: Bool
    let conversion: PNGSampleConversion
    let format: ImageFormat
    /// Where the raster goes in the output: rows of `outputWidth` pixels, the raster's top-left
    /// pixel at (`originX`, `originY`) (an APNG frame decoded straight into the canvas).
    var outputWidth: Int
    var originX = 0
    var originY = 0
    /// Shrink while decoding: each `shrinkFactor` x `shrinkFactor` block of pixels becomes one
    /// output pixel (a box average on premultiplied alpha); the output is then
    /// ``shrunkWidth`` x ``shrunkHeight``. 1: full size.
    var shrinkFactor = 1

    /// The output width when shrinking (a partial block at the edge makes a pixel too).
    var shrunkWidth: Int { (width + shrinkFactor - 1) / shrinkFactor }
    /// The output height when shrinking.
    var shrunkHeight: Int { (height + shrinkFactor - 1) / shrinkFactor }

    /// The working memory a shrinking decode adds: one RGBA row and 64-bit sums per output pixel.
    var shrinkMemory: Int { shrinkFactor > 1 ? BoxShrinker.memory(width: width, height: height, factor: shrinkFactor) : 0 }

    init(width: Int, height: Int, interlaced: Bool, conversion: PNGSampleConversion, format: ImageFormat) {
        self.width = width
        self.height = height
        self.interlaced = interlaced
        self.conversion = conversion
        self.format = format
        outputWidth = width
    }

    /// Bytes of one row of `pixels` pixels (without the filter byte).
    func rowBytes(_ pixels: Int) -> Int { (pixels * conversion.channels * conversion.bitDepth + 7) / 8 }

    /// The working memory of a decode: two rows of the full width, with their filter bytes.
    var workingMemory: Int {
        let (bits, overflow) = width.multipliedReportingOverflow(by: conversion.channels * conversion.bitDepth)
        return overflow ? Int.max : 2 * ((bits + 7) / 8 + 1)
    }

    /// The seven Adam7 passes: first column, first row, column step, row step.
    static let adam7: [(x: Int, y: Int, dx: Int, dy: Int)] = [
        (0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2),
    ]

    /// Decodes into `output` (rows of ``outputWidth`` RGBA pixels, at least as many as the
    /// raster needs from its origin), reading the zlib stream from the byte ranges `data` of
    /// `bytes`. Returns the number of bytes inflated.
    /// - Throws: `.workingMemoryTooLarge` (before allocating the rows), `.truncated`,
    ///   `.corrupt`, `.timedOut`.
    func decode(_ bytes: UnsafeRawBufferPointer, data: [Range<Int>], into output: UnsafeMutablePointer<UInt8>,
                limits: DecodingLimits, deadline: DecodingDeadline) throws(AlcedoError) -> Int {
        try limits.checkWorkingMemory(workingMemory + shrinkMemory,
                                      what: "two rows of \(width) \(conversion.bitDepth)-bit pixels"
                                          + (shrinkFactor > 1 ? " and the sums of a \(shrinkFactor)x shrink" : ""),
                                      format: format)
        let shrinker = shrinkFactor > 1 ? BoxShrinker(width: width, height: height, factor: shrinkFactor) : nil
        defer { shrinker?.deallocate() }
        let capacity = workingMemory / 2
        var previous = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        var current = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer {
            previous.deallocate()
            current.deallocate()
        }
        var stream = PNGInflater(bytes: bytes, ranges: data, format: format)
        try stream.start()
        defer { stream.end() }

        let passes = interlaced ? PNGRasterDecoder.adam7 : [(x: 0, y: 0, dx: 1, dy: 1)]
        var checkBudget = 0
        var rowsDone = 0
        for pass in passes {
            let passWidth = (width - pass.x + pass.dx - 1) / pass.dx
            let passHeight = (height - pass.y + pass.dy - 1) / pass.dy
            guard passWidth > 0, passHeight > 0 else { continue }
            let count = rowBytes(passWidth)
            previous.initialize(repeating: 0, count: count + 1)
            for row in 0..<passHeight {
                guard try stream.read(into: current, count: count + 1) else {
                    throw .decodingError(reason: .truncated(format: format,
                        message: "not enough image data: the stream ends after \(rowsDone) of the rows"))
                }
                try unfilter(current, previous: previous, count: count, row: row)
                let y = pass.y + row * pass.dy
                if let box = shrinker {
                    try convert(current + 1, pixels: passWidth, to: box.row, step: 4)
                    box.add(y: y, x: pass.x, dx: pass.dx, count: passWidth)
                } else {
                    try convert(current + 1, pixels: passWidth, to: output + ((originY + y) * outputWidth + originX + pass.x) * 4,
                                step: pass.dx * 4)
                }
                swap(&previous, &current)
                rowsDone += 1
                checkBudget += count + 1
                if checkBudget >= 1 << 18 {
                    checkBudget = 0
                    try deadline.check()
                }
            }
        }
        try stream.finish(deadline: deadline)
        shrinker?.finish(into: output)
        return stream.inflatedBytes
    }

    /// Undoes the row's filter in place (`row[0]` is the filter type, the samples follow).
    private func unfilter(_ row: UnsafeMutablePointer<UInt8>, previous: UnsafeMutablePointer<UInt8>, count: Int,
                          row index: Int) throws(AlcedoError) {
        let filter = row[0]
        let cur = row + 1, up = previous + 1
        let bpp = conversion.filterUnit
        switch filter {
        case 0:
            break
        case 1:
            if count > bpp { for i in bpp..<count { cur[i] &+= cur[i - bpp] } }
        case 2:
            for i in 0..<count { cur[i] &+= up[i] }
        case 3:
            for i in 0..<min(bpp, count) { cur[i] &+= up[i] >> 1 }
            if count > bpp {
                for i in bpp..<count { cur[i] &+= UInt8((Int(cur[i - bpp]) + Int(up[i])) >> 1) }
            }
        case 4:
            for i in 0..<min(bpp, count) { cur[i] &+= up[i] }
            if count > bpp {
                for i in bpp..<count {
                    let a = Int(cur[i - bpp]), b = Int(up[i]), c = Int(up[i - bpp])
                    let p = a + b - c
                    let pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                    cur[i] &+= UInt8(truncatingIfNeeded: pa <= pb && pa <= pc ? a : (pb <= pc ? b : c))
                }
            }
        default:
            throw .decodingError(reason: .corrupt(format: format, message: "unknown filter type \(filter) in row \(index)"))
        }
    }

    /// Writes the `pixels` RGBA pixels of an unfiltered row from `output` on, `step` bytes apart.
    private func convert(_ row: UnsafeMutablePointer<UInt8>, pixels: Int, to output: UnsafeMutablePointer<UInt8>,
                         step: Int) throws(AlcedoError) {
        var out = output
        let depth = conversion.bitDepth
        try conversion.colorTable.withUnsafeBufferPointer { table throws(AlcedoError) in
            switch (conversion.colorType, depth) {
            case (0, _):
                let key = conversion.keyRed
                for i in 0..<pixels {
                    let v = PNGRasterDecoder.sample(row, index: i, depth: depth)
                    let g = table[v]
                    out[0] = g; out[1] = g; out[2] = g; out[3] = v == key ? 0 : 255
                    out += step
                }
            case (2, _):
                let key = (conversion.keyRed, conversion.keyGreen, conversion.keyBlue)
                for i in 0..<pixels {
                    let r = PNGRasterDecoder.sample(row, index: i * 3, depth: depth)
                    let g = PNGRasterDecoder.sample(row, index: i * 3 + 1, depth: depth)
                    let b = PNGRasterDecoder.sample(row, index: i * 3 + 2, depth: depth)
                    out[0] = table[r]; out[1] = table[g]; out[2] = table[b]
                    out[3] = r == key.0 && g == key.1 && b == key.2 ? 0 : 255
                    out += step
                }
            case (3, _):
                let entries = conversion.paletteCount
                try conversion.palette.withUnsafeBufferPointer { colors throws(AlcedoError) in
                    for i in 0..<pixels {
                        let index = PNGRasterDecoder.sample(row, index: i, depth: depth)
                        guard index < entries else {
                            throw .decodingError(reason: .corrupt(format: format,
                                message: "palette index \(index) is past the \(entries) entries of PLTE"))
                        }
                        out[0] = colors[index * 4]; out[1] = colors[index * 4 + 1]
                        out[2] = colors[index * 4 + 2]; out[3] = colors[index * 4 + 3]
                        out += step
                    }
                }
            case (4, 16):
                for i in 0..<pixels {
                    let g = table[PNGRasterDecoder.sample(row, index: i * 2, depth: 16)]
                    out[0] = g; out[1] = g; out[2] = g
                    out[3] = PNGSampleConversion.alpha16(PNGRasterDecoder.sample(row, index: i * 2 + 1, depth: 16))
                    out += step
                }
            case (4, _):
                for i in 0..<pixels {
                    let g = table[Int(row[i * 2])]
                    out[0] = g; out[1] = g; out[2] = g; out[3] = row[i * 2 + 1]
                    out += step
                }
            case (6, 16):
                for i in 0..<pixels {
                    out[0] = table[PNGRasterDecoder.sample(row, index: i * 4, depth: 16)]
                    out[1] = table[PNGRasterDecoder.sample(row, index: i * 4 + 1, depth: 16)]
                    out[2] = table[PNGRasterDecoder.sample(row, index: i * 4 + 2, depth: 16)]
                    out[3] = PNGSampleConversion.alpha16(PNGRasterDecoder.sample(row, index: i * 4 + 3, depth: 16))
                    out += step
                }
            default:
                for i in 0..<pixels {
                    out[0] = table[Int(row[i * 4])]; out[1] = table[Int(row[i * 4 + 1])]
                    out[2] = table[Int(row[i * 4 + 2])]; out[3] = row[i * 4 + 3]
                    out += step
                }
            }
        }
    }

    /// Sample number `index` of an unfiltered row of `depth`-bit samples (1, 2, 4, 8 or 16).
    @inline(__always)
    static func sample(_ row: UnsafeMutablePointer<UInt8>, index: Int, depth: Int) -> Int {
        switch depth {
        case 16: return Int(row[index * 2]) << 8 | Int(row[index * 2 + 1])
        case 8: return Int(row[index])
        default:
            let bit = index * depth
            return Int(row[bit >> 3] >> UInt8(8 - depth - (bit & 7))) & ((1 << depth) - 1)
        }
    }
}

/// A zlib inflater over the data of a list of chunks, filling exact byte counts. The
/// `z_stream` lives at a fixed address (zlib checks that it does not move).
struct PNGInflater {
    private let bytes: UnsafeRawBufferPointer
    private let ranges: [Range<Int>]
    private let format: ImageFormat
    private var next = 0
    private let stream: UnsafeMutablePointer<z_stream>
    private var started = false
    /// `true` once zlib reported the end of the stream (its checksum verified).
    private(set) var ended = false
    /// Bytes inflated so far.
    var inflatedBytes: Int { Int(stream.pointee.total_out) }

    init(bytes: UnsafeRawBufferPointer, ranges: [Range<Int>], format: ImageFormat) {
        self.bytes = bytes
        self.ranges = ranges
        self.format = format
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
    }

    mutating func start() throws(AlcedoError) {
        guard alcedo_inflate_init(stream) == Z_OK else {
            stream.deallocate()
            throw .decodingError(reason: .corrupt(format: format, message: "zlib could not start"))
        }
        started = true
    }

    /// Frees zlib's state; call once, after ``start()`` succeeded.
    mutating func end() {
        guard started else { return }
        inflateEnd(stream)
        stream.deallocate()
        started = false
    }

    /// Points zlib at the next non-empty chunk; `false` when there is none.
    private mutating func loadInput() -> Bool {
        while next < ranges.count {
            let range = ranges[next]
            next += 1
            guard !range.isEmpty, let base = bytes.baseAddress else { continue }
            stream.pointee.next_in = UnsafeMutablePointer(mutating: (base + range.lowerBound).assumingMemoryBound(to: UInt8.self))
            stream.pointee.avail_in = UInt32(range.count)
            return true
        }
        return false
    }

    /// Inflates exactly `count` bytes into `destination`; `false` when the stream or the data
    /// ends first.
    mutating func read(into destination: UnsafeMutablePointer<UInt8>, count: Int) throws(AlcedoError) -> Bool {
        var filled = 0
        while filled < count {
            if ended { return false }
            if stream.pointee.avail_in == 0 && !loadInput() { return false }
            let want = min(count - filled, Int(UInt32.max))
            stream.pointee.next_out = destination + filled
            stream.pointee.avail_out = UInt32(want)
            let status = inflate(stream, Z_NO_FLUSH)
            filled += want - Int(stream.pointee.avail_out)
            switch status {
            case Z_OK:
                continue
            case Z_STREAM_END:
                ended = true
            case Z_BUF_ERROR where stream.pointee.avail_in == 0:
                continue
            default:
                throw zlibError(status)
            }
        }
        return true
    }

    /// After the last row: reads on to the stream's end marker and checksum while the rest
    /// inflates to nothing. Extra image data (anything that inflates to bytes) is left unread.
    mutating func finish(deadline: DecodingDeadline) throws(AlcedoError) {
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
        defer { scratch.deallocate() }
        var rounds = 0
        while !ended {
            if stream.pointee.avail_in == 0 && !loadInput() { return }
            stream.pointee.next_out = scratch
            stream.pointee.avail_out = 1
            let status = inflate(stream, Z_NO_FLUSH)
            switch status {
            case Z_STREAM_END:
                ended = true
            case Z_OK, Z_BUF_ERROR:
                if stream.pointee.avail_out == 0 { return }   // more image data than the rows need: ignored
                if status == Z_BUF_ERROR && stream.pointee.avail_in != 0 { return }
            default:
                throw zlibError(status)
            }
            rounds += 1
            if rounds & 1023 == 0 { try deadline.check() }
        }
    }

    private func zlibError(_ status: Int32) -> AlcedoError {
        let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
        return .decodingError(reason: .corrupt(format: format, message: "image data: \(message)"))
    }
}

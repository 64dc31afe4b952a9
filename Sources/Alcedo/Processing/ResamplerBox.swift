import CAlcedoCodecs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Makes the premultiplied rows the Lanczos passes read: either the source rows themselves,
/// premultiplied and converted to `Float`, or the rows of the integer box pre-shrink, each
/// pixel the average of a `boxX` x `boxY` block of source pixels.
///
/// Values are in 0...255: colour channels hold `colour * alpha / 255`, the fourth channel
/// holds alpha. Blocks that do not fit at the right or bottom edge average the pixels they
/// have.
///
/// The box sums are exact integers. The block's rows are summed into 16-bit column sums
/// (one cheap pass, which also finds whether they are all opaque); each row that is not
/// opaque also adds `colour * (255 - alpha)` to a correction sum, so that
/// `255 * Σ colour - correction = Σ colour * alpha`, the premultiplied sum. A block of one
/// colour therefore gives that colour exactly. The block area is capped at
/// ``maximumBoxArea`` so the sums fit in 32 bits.
///
/// One maker per band of rows: it owns its scratch sums, freed when it goes away.
struct ResamplerBox: ~Copyable {
    /// The largest `boxX * boxY`: `65_536 * 255 * 255` still fits in a `UInt32`.
    static let maximumBoxArea = 65_536
    /// Rows that can be added to a 16-bit column sum before it must be flushed (257 * 255 < 65,536).
    static let rowsPerNarrowSum = 257

    private let source: UnsafeBufferPointer<UInt8>
    private let width: Int
    private let height: Int
    private let boxX: Int
    private let boxY: Int
    /// Width of the rows made: `ceil(width / boxX)`.
    let rowWidth: Int
    /// Per source column and channel, the sum of the samples of up to 257 rows.
    private let narrowSums: UnsafeMutableBufferPointer<UInt16>
    /// Per source column and channel, the sum of flushed ``narrowSums`` (blocks over 257 rows).
    private let wideSums: UnsafeMutableBufferPointer<UInt32>
    /// Per source column and channel, the sum of `colour * (255 - alpha)` (0 for alpha).
    private let corrections: UnsafeMutableBufferPointer<UInt32>

    /// A maker for `source`, `width` x `height` RGBA8 pixels with straight alpha.
    init(source: UnsafeBufferPointer<UInt8>, width: Int, height: Int, boxX: Int, boxY: Int) {
        self.source = source
        self.width = width
        self.height = height
        self.boxX = boxX
        self.boxY = boxY
        rowWidth = (width + boxX - 1) / boxX
        let boxing = boxX * boxY > 1
        narrowSums = .allocate(capacity: boxing ? width * 4 : 0)
        wideSums = .allocate(capacity: boxY > Self.rowsPerNarrowSum ? width * 4 : 0)
        corrections = .allocate(capacity: boxing ? width * 4 : 0)
    }

    deinit {
        narrowSums.deallocate()
        wideSums.deallocate()
        corrections.deallocate()
    }

    /// Writes row `index` (of `ceil(height / boxY)`) into `output`, which holds ``rowWidth``
    /// pixels; returns `true` when every source pixel it was made from had alpha 255.
    @discardableResult
    func makeRow(_ index: Int, into output: UnsafeMutableBufferPointer<SIMD4<Float>>) -> Bool {
        makeRow(index, columns: 0..<rowWidth, into: output)
    }

    /// Writes the pixels `columns` of row `index` into `output` (`columns.count` pixels), each
    /// exactly as the whole row has it; returns `true` when every source pixel of the whole row
    /// (not only of `columns`) had alpha 255, as for the whole row. Only the source columns
    /// under `columns` are summed; the others are only read for their alpha.
    @discardableResult
    func makeRow(_ index: Int, columns: Range<Int>, into output: UnsafeMutableBufferPointer<SIMD4<Float>>) -> Bool {
        if boxX * boxY == 1 {
            return premultiply(sourceRow: index, columns: columns, into: output)
        } else {
            return boxRow(index, columns: columns, into: output)
        }
    }

    /// The samples of source row `y`.
    @inline(__always)
    private func sourceRow(_ y: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: source[(y * width * 4)..<((y + 1) * width * 4)])
    }

    /// Converts the pixels `columns` of one source row to premultiplied `Float` pixels;
    /// returns whether the whole row is opaque.
    private func premultiply(sourceRow y: Int, columns: Range<Int>, into output: UnsafeMutableBufferPointer<SIMD4<Float>>) -> Bool {
        let row = UnsafeRawBufferPointer(sourceRow(y))
        if Self.isOpaque(row) {
            output.withMemoryRebound(to: Float.self) { floats in
                alcedo_load_rgba8(row.baseAddress!.assumingMemoryBound(to: UInt8.self) + columns.lowerBound * 4, floats.baseAddress!,
                                  columns.count)
            }
            return true
        } else {
            for x in columns {
                let pixel = Self.float(row.loadUnaligned(fromByteOffset: x * 4, as: SIMD4<UInt8>.self))
                var scale = SIMD4<Float>(repeating: pixel.w * (1 / 255))
                scale.w = 1
                output[x - columns.lowerBound] = pixel * scale
            }
            return false
        }
    }

    /// Averages the blocks `columns` of box row `index`; returns whether all the pixels of
    /// the whole row's blocks are opaque.
    private func boxRow(_ index: Int, columns: Range<Int>, into output: UnsafeMutableBufferPointer<SIMD4<Float>>) -> Bool {
        let firstRow = index * boxY
        let endRow = min(firstRow + boxY, height)
        var hasTranslucentRows = false
        var flushed = false
        // The source samples under `columns`; the rest of the row is read for its alpha only.
        let bytes = (columns.lowerBound * boxX * 4)..<(min(columns.upperBound * boxX, width) * 4)
        let wholeRow = bytes.count == width * 4

        // Vertical: sum the block's rows column by column, at most 257 rows at a time.
        var chunkStart = firstRow
        while chunkStart < endRow {
            let chunkEnd = min(chunkStart + Self.rowsPerNarrowSum, endRow)
            if chunkStart > firstRow {
                flushNarrowSums(first: !flushed, bytes: bytes)
                flushed = true
            }
            // Whether rows are translucent is decided on whole rows, as the whole row's blocks
            // are: which formula a block takes does not depend on the columns made.
            if !sumRows(chunkStart..<chunkEnd, bytes: bytes) || !(wholeRow || outsideOpaque(chunkStart..<chunkEnd, bytes: bytes)) {
                for y in chunkStart..<chunkEnd {
                    let row = sourceRow(y)
                    guard !Self.isOpaque(UnsafeRawBufferPointer(row)) else { continue }
                    if !hasTranslucentRows {
                        corrections.update(repeating: 0)
                        hasTranslucentRows = true
                    }
                    Self.accumulateCorrections(UnsafeBufferPointer(rebasing: row[bytes]),
                                               into: UnsafeMutableBufferPointer(rebasing: corrections[bytes]))
                }
            }
            chunkStart = chunkEnd
        }
        if flushed { flushNarrowSums(first: false, bytes: bytes) }

        // Horizontal: sum `boxX` columns, divide by the block's pixel count.
        let narrow = UnsafeRawBufferPointer(narrowSums)
        let wide = UnsafeRawBufferPointer(wideSums)
        let correction = UnsafeRawBufferPointer(corrections)
        let rows = endRow - firstRow
        for column in columns {
            let first = column * boxX
            let end = min(first + boxX, width)
            let area = Float((end - first) * rows)
            var sum = SIMD4<UInt32>()
            if flushed {
                for x in first..<end { sum &+= wide.loadUnaligned(fromByteOffset: x * 16, as: SIMD4<UInt32>.self) }
            } else {
                for x in first..<end {
                    sum &+= SIMD4<UInt32>(truncatingIfNeeded: narrow.loadUnaligned(fromByteOffset: x * 8, as: SIMD4<UInt16>.self))
                }
            }
            if hasTranslucentRows {
                var weighted = sum &* 255
                for x in first..<end { weighted &-= correction.loadUnaligned(fromByteOffset: x * 16, as: SIMD4<UInt32>.self) }
                output[column - columns.lowerBound] = Self.float(weighted) * SIMD4(repeating: 1 / (area * 255))
            } else {
                // At most 65,536 * 255: the signed conversion, which vectorises, is exact.
                output[column - columns.lowerBound] = Self.float(SIMD4<Int32>(truncatingIfNeeded: sum)) * SIMD4(repeating: 1 / area)
            }
        }
        return !hasTranslucentRows
    }

    /// Adds the ``narrowSums`` of the samples `bytes` to ``wideSums`` (replacing them when `first`).
    private func flushNarrowSums(first: Bool, bytes: Range<Int>) {
        for i in bytes {
            wideSums[i] = (first ? 0 : wideSums[i]) &+ UInt32(narrowSums[i])
        }
    }

    /// `true` when every pixel of source `rows` outside the samples `bytes` has alpha 255.
    private func outsideOpaque(_ rows: Range<Int>, bytes: Range<Int>) -> Bool {
        for y in rows {
            let row = UnsafeRawBufferPointer(sourceRow(y))
            guard Self.isOpaque(UnsafeRawBufferPointer(rebasing: row[0..<bytes.lowerBound])),
                  Self.isOpaque(UnsafeRawBufferPointer(rebasing: row[bytes.upperBound...])) else { return false }
        }
        return true
    }

    /// Stores in ``narrowSums`` the column sums of the samples `bytes` (a range of whole
    /// pixels) of source `rows` (at most 257 of them); returns `true` when every pixel summed
    /// had alpha 255.
    ///
    /// Works in strips of 64 bytes (a cache line, 16 pixels), going down all the rows before
    /// moving right, so each sum stays in a register and is stored once; the last few pixels
    /// of a row that do not fill a strip are summed one sample at a time.
    private func sumRows(_ rows: Range<Int>, bytes range: Range<Int>) -> Bool {
        let bytes = UnsafeRawBufferPointer(source)
        let sums = UnsafeMutableRawBufferPointer(narrowSums)
        let rowBytes = width &* 4
        let end = range.upperBound
        let top = rows.lowerBound &* rowBytes
        var all = SIMD16<UInt8>(repeating: 255)
        var offset = range.lowerBound
        while offset &+ 64 <= end {
            var sum0 = SIMD8<UInt16>(), sum1 = SIMD8<UInt16>(), sum2 = SIMD8<UInt16>(), sum3 = SIMD8<UInt16>()
            var sum4 = SIMD8<UInt16>(), sum5 = SIMD8<UInt16>(), sum6 = SIMD8<UInt16>(), sum7 = SIMD8<UInt16>()
            var position = top &+ offset
            for _ in rows {
                let chunk0 = bytes.loadUnaligned(fromByteOffset: position, as: SIMD16<UInt8>.self)
                let chunk1 = bytes.loadUnaligned(fromByteOffset: position &+ 16, as: SIMD16<UInt8>.self)
                let chunk2 = bytes.loadUnaligned(fromByteOffset: position &+ 32, as: SIMD16<UInt8>.self)
                let chunk3 = bytes.loadUnaligned(fromByteOffset: position &+ 48, as: SIMD16<UInt8>.self)
                all &= (chunk0 & chunk1) & (chunk2 & chunk3)
                sum0 &+= SIMD8<UInt16>(truncatingIfNeeded: chunk0.lowHalf)
                sum1 &+= SIMD8<UInt16>(truncatingIfNeeded: chunk0.highHalf)
                sum2 &+= SIMD8<UInt16>(truncatingIfNeeded: chunk1.lowHalf)
                sum3 &+= SIMD8<UInt16>(truncatingIfNeeded: chunk1.highHalf)
                sum4 &+= SIMD8<UInt16>(truncatingIfNeeded: chunk2.lowHalf)
                sum5 &+= SIMD8<UInt16>(truncatingIfNeeded: chunk2.highHalf)
                sum6 &+= SIMD8<UInt16>(truncatingIfNeeded: chunk3.lowHalf)
                sum7 &+= SIMD8<UInt16>(truncatingIfNeeded: chunk3.highHalf)
                position &+= rowBytes
            }
            let base = offset &* 2
            sums.storeBytes(of: sum0, toByteOffset: base, as: SIMD8<UInt16>.self)
            sums.storeBytes(of: sum1, toByteOffset: base &+ 16, as: SIMD8<UInt16>.self)
            sums.storeBytes(of: sum2, toByteOffset: base &+ 32, as: SIMD8<UInt16>.self)
            sums.storeBytes(of: sum3, toByteOffset: base &+ 48, as: SIMD8<UInt16>.self)
            sums.storeBytes(of: sum4, toByteOffset: base &+ 64, as: SIMD8<UInt16>.self)
            sums.storeBytes(of: sum5, toByteOffset: base &+ 80, as: SIMD8<UInt16>.self)
            sums.storeBytes(of: sum6, toByteOffset: base &+ 96, as: SIMD8<UInt16>.self)
            sums.storeBytes(of: sum7, toByteOffset: base &+ 112, as: SIMD8<UInt16>.self)
            offset &+= 64
        }
        var opaque = all[3] & all[7] & all[11] & all[15] == 255
        while offset < end {
            var sum: UInt16 = 0
            for y in rows {
                let sample = source[y &* rowBytes &+ offset]
                sum &+= UInt16(sample)
                if offset & 3 == 3 && sample != 255 { opaque = false }
            }
            narrowSums[offset] = sum
            offset &+= 1
        }
        return opaque
    }

    /// Adds `colour * (255 - alpha)` of every pixel of `row` to `sums` (nothing to alpha).
    @inline(__always)
    private static func accumulateCorrections(_ row: UnsafeBufferPointer<UInt8>, into sums: UnsafeMutableBufferPointer<UInt32>) {
        let bytes = UnsafeRawBufferPointer(row)
        let wide = UnsafeMutableRawBufferPointer(sums)
        var offset = 0
        // Two pixels at a time; `colour * (255 - alpha)` fits in 16 bits.
        while offset + 8 <= bytes.count {
            let pixels = SIMD8<UInt16>(truncatingIfNeeded: bytes.loadUnaligned(fromByteOffset: offset, as: SIMD8<UInt8>.self))
            let t = SIMD8<UInt16>(repeating: 255) &- pixels
            let factors = SIMD8<UInt16>(t[3], t[3], t[3], 0, t[7], t[7], t[7], 0)
            let products = pixels &* factors
            let first = wide.loadUnaligned(fromByteOffset: offset * 4, as: SIMD4<UInt32>.self)
                &+ SIMD4<UInt32>(truncatingIfNeeded: products.lowHalf)
            let second = wide.loadUnaligned(fromByteOffset: offset * 4 + 16, as: SIMD4<UInt32>.self)
                &+ SIMD4<UInt32>(truncatingIfNeeded: products.highHalf)
            wide.storeBytes(of: first, toByteOffset: offset * 4, as: SIMD4<UInt32>.self)
            wide.storeBytes(of: second, toByteOffset: offset * 4 + 16, as: SIMD4<UInt32>.self)
            offset += 8
        }
        if offset < bytes.count {
            let transparency = 255 &- UInt32(row[offset + 3])
            for channel in 0..<3 { sums[offset + channel] &+= UInt32(row[offset + channel]) &* transparency }
        }
    }

    /// `true` when every pixel of `row` (RGBA8) has alpha 255.
    @inline(__always)
    static func isOpaque(_ row: UnsafeRawBufferPointer) -> Bool {
        var all = UInt32.max
        for x in 0..<(row.count / 4) { all &= row.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self) }
        let alphaMask = UInt32(littleEndian: 0xFF00_0000)
        return all & alphaMask == alphaMask
    }

    /// Lane-by-lane conversion (the generic SIMD conversions are much slower).
    @inline(__always)
    static func float(_ value: SIMD4<UInt8>) -> SIMD4<Float> {
        SIMD4(Float(value.x), Float(value.y), Float(value.z), Float(value.w))
    }

    /// Lane-by-lane conversion (the generic SIMD conversions are much slower).
    @inline(__always)
    static func float(_ value: SIMD4<Int32>) -> SIMD4<Float> {
        SIMD4(Float(value.x), Float(value.y), Float(value.z), Float(value.w))
    }

    /// Lane-by-lane conversion (the generic SIMD conversions are much slower).
    @inline(__always)
    static func float(_ value: SIMD4<UInt32>) -> SIMD4<Float> {
        SIMD4(Float(value.x), Float(value.y), Float(value.z), Float(value.w))
    }
}

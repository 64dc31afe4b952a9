#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns the pixel data of a parsed ``BMPHeader`` into RGBA8, straight alpha, rows top to bottom.
///
/// - Uncompressed rows (1, 2, 4, 8-bit palette; 16 and 32-bit masks; 24-bit BGR) are converted
///   one stored row at a time straight into the output, or into a ``BoxShrinker`` when the
///   caller asked for decode-time shrinking.
/// - RLE8 and RLE4 are expanded onto a transparent canvas (pixels that deltas, early
///   end-of-line or end-of-bitmap codes skip stay transparent, as browsers show them).
/// - A palette index past the palette, a run past the end of its row, a delta past the
///   picture and pixel data that end early (unless truncation is allowed) are errors.
struct BMPRaster {
    let header: BMPHeader
    let format: ImageFormat
    /// For icon bitmaps: where the 1-bit AND mask starts (`nil`: no mask).
    var andMaskOffset: Int?

    /// The decoded pixels and their size (smaller than the header's with `shrinkFactor` > 1).
    struct Output {
        var pixels: [UInt8]
        var width: Int
        var height: Int
    }

    func decode(_ bytes: UnsafeRawBufferPointer, limits: DecodingLimits, deadline: DecodingDeadline,
                allowTruncated: Bool, shrinkFactor: Int) throws(AlcedoError) -> Output {
        try limits.check(width: header.width, height: header.height, format: format)
        switch header.compression {
        case .rle8, .rle4:
            return Output(pixels: try decodeRLE(bytes, deadline: deadline, allowTruncated: allowTruncated),
                          width: header.width, height: header.height)
        case .none, .bitfields, .alphaBitfields:
            return try decodeRows(bytes, limits: limits, deadline: deadline, allowTruncated: allowTruncated, factor: shrinkFactor)
        case .jpeg, .png:
            throw .decodingError(reason: .unsupportedFeature(format: format, message: "embedded \(header.compression.name) data"))
        }
    }

    // MARK: Uncompressed

    private func decodeRows(_ bytes: UnsafeRawBufferPointer, limits: DecodingLimits, deadline: DecodingDeadline,
                            allowTruncated: Bool, factor: Int) throws(AlcedoError) -> Output {
        let width = header.width, height = header.height, stride = header.rowStride
        let rowBytes = (width * header.bitCount + 7) / 8
        // Rows present in the data (the last one need not carry its padding).
        let available = bytes.count - header.pixelOffset
        let rowsPresent = available >= rowBytes ? min(height, (available - rowBytes) / stride + 1) : 0
        if rowsPresent < height && !allowTruncated {
            throw .decodingError(reason: .truncated(format: format, message:
                "the pixel data hold \(rowsPresent) of \(height) rows (\(available) bytes from offset \(header.pixelOffset))"))
        }
        let lookup = try paletteTable()
        // 32-bit pixels whose alpha bytes are all zero are opaque (BI_RGB files leave them 0).
        let usesAlpha = header.hasAlphaChannel && alphaIsUsed(bytes, rows: rowsPresent)
        let mask = usesAlpha ? nil : try andMask(bytes)

        let shrinker: BoxShrinker? = factor > 1 ? BoxShrinker(width: width, height: height, factor: factor) : nil
        if shrinker != nil {
            try limits.checkWorkingMemory(BoxShrinker.memory(width: width, height: height, factor: factor),
                                          what: "the shrink sums of a \(width)x\(height) bitmap", format: format)
        }
        defer { shrinker?.deallocate() }
        let outWidth = shrinker?.outWidth ?? width, outHeight = shrinker?.outHeight ?? height
        var failure: AlcedoError?
        let pixels = [UInt8](unsafeUninitializedCapacity: outWidth * outHeight * 4) { buffer, initialized in
            guard let output = buffer.baseAddress else { return }
            initialized = buffer.count
            if shrinker == nil, rowsPresent < height { output.initialize(repeating: 0, count: buffer.count) }
            do throws(AlcedoError) {
                for row in 0..<rowsPresent {
                    if row & 63 == 63 { try deadline.check() }
                    let y = header.topDown ? row : height - 1 - row
                    let source = bytes.baseAddress! + header.pixelOffset + row * stride
                    let target = shrinker?.row ?? output + y * width * 4
                    try convertRow(source, into: target, lookup: lookup, usesAlpha: usesAlpha, row: row)
                    if let mask { mask.apply(toRow: row, target, width: width) }
                    shrinker?.add(y: y, x: 0, dx: 1, count: width)
                }
                shrinker?.finish(into: output)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return Output(pixels: pixels, width: outWidth, height: outHeight)
    }

    /// Palette colours as RGBA words in memory order, for 1 to 8-bit bitmaps.
    private func paletteTable() throws(AlcedoError) -> [UInt32] {
        guard header.bitCount <= 8 else { return [] }
        return (0..<header.paletteCount).map { index in
            let p = index * 4
            let rgba = [header.palette[p + 2], header.palette[p + 1], header.palette[p], 255]
            return UInt32(rgba[0]) | UInt32(rgba[1]) << 8 | UInt32(rgba[2]) << 16 | UInt32(rgba[3]) << 24
        }
    }

    private func alphaIsUsed(_ bytes: UnsafeRawBufferPointer, rows: Int) -> Bool {
        let alpha = header.alpha
        for row in 0..<rows {
            let start = header.pixelOffset + row * header.rowStride
            if header.bitCount == 32 {
                for x in 0..<header.width where LittleEndianReader(bytes, base: start + x * 4).u32(0) & alpha.mask != 0 { return true }
            } else {
                for x in 0..<header.width where UInt32(LittleEndianReader(bytes, base: start + x * 2).u16(0)) & alpha.mask != 0 { return true }
            }
        }
        return false
    }

    private func convertRow(_ source: UnsafeRawPointer, into target: UnsafeMutablePointer<UInt8>, lookup: [UInt32],
                            usesAlpha: Bool, row: Int) throws(AlcedoError) {
        let width = header.width
        let out = UnsafeMutableRawPointer(target)
        switch header.bitCount {
        case 1, 2, 4, 8:
            let bits = header.bitCount
            let perByte = 8 / bits
            let valueMask = (1 << bits) - 1
            let count = lookup.count
            var badIndex = -1
            lookup.withUnsafeBufferPointer { table in
                for x in 0..<width {
                    let byte = Int(source.load(fromByteOffset: x / perByte, as: UInt8.self))
                    let index = (byte >> (8 - bits * (x % perByte + 1))) & valueMask
                    guard index < count else { badIndex = index; return }
                    out.storeBytes(of: table[index], toByteOffset: x * 4, as: UInt32.self)
                }
            }
            if badIndex >= 0 {
                throw .decodingError(reason: .corrupt(format: format, message:
                    "palette index \(badIndex) in row \(row) is past the \(count)-colour palette"))
            }
        case 24:
            for x in 0..<width {
                let s = source + x * 3, d = target + x * 4
                d[0] = s.load(fromByteOffset: 2, as: UInt8.self)
                d[1] = s.load(fromByteOffset: 1, as: UInt8.self)
                d[2] = s.load(as: UInt8.self)
                d[3] = 255
            }
        case 16:
            let (r, g, b, a) = (header.red, header.green, header.blue, header.alpha)
            for x in 0..<width {
                let pixel = UInt32(source.loadUnaligned(fromByteOffset: x * 2, as: UInt16.self).littleEndian)
                let d = target + x * 4
                d[0] = r.value(pixel); d[1] = g.value(pixel); d[2] = b.value(pixel)
                d[3] = usesAlpha ? a.value(pixel) : 255
            }
        default:  // 32
            let (r, g, b, a) = (header.red, header.green, header.blue, header.alpha)
            if r.mask == 0x00FF_0000, g.mask == 0x0000_FF00, b.mask == 0x0000_00FF, !usesAlpha || a.mask == 0xFF00_0000 {
                // BGRA / BGRX bytes: a swizzle.
                for x in 0..<width {
                    let s = source + x * 4, d = target + x * 4
                    d[0] = s.load(fromByteOffset: 2, as: UInt8.self)
                    d[1] = s.load(fromByteOffset: 1, as: UInt8.self)
                    d[2] = s.load(as: UInt8.self)
                    d[3] = usesAlpha ? s.load(fromByteOffset: 3, as: UInt8.self) : 255
                }
            } else {
                for x in 0..<width {
                    let pixel = source.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self).littleEndian
                    let d = target + x * 4
                    d[0] = r.value(pixel); d[1] = g.value(pixel); d[2] = b.value(pixel)
                    d[3] = usesAlpha ? a.value(pixel) : 255
                }
            }
        }
    }

    // MARK: AND mask (icons)

    /// An icon's 1-bit transparency mask: a set bit makes the pixel transparent.
    struct AndMask {
        let bytes: UnsafeRawBufferPointer
        let offset: Int
        let stride: Int
        let height: Int
        let topDown: Bool

        func apply(toRow row: Int, _ target: UnsafeMutablePointer<UInt8>, width: Int) {
            let start = offset + row * stride
            for x in 0..<width where bytes[start + x / 8] & (0x80 >> UInt8(x % 8)) != 0 {
                target[x * 4 + 3] = 0
            }
        }
    }

    private func andMask(_ bytes: UnsafeRawBufferPointer) throws(AlcedoError) -> AndMask? {
        guard let offset = andMaskOffset else { return nil }
        let stride = ((header.width + 31) / 32) * 4
        // An icon without any mask bytes is opaque; one whose mask stops part way is truncated.
        guard offset < bytes.count else { return nil }
        guard stride * header.height <= bytes.count - offset else {
            throw .decodingError(reason: .truncated(format: format, message:
                "the AND mask needs \(stride * header.height) bytes, \(bytes.count - offset) are left"))
        }
        return AndMask(bytes: bytes, offset: offset, stride: stride, height: header.height, topDown: header.topDown)
    }

    // MARK: RLE

    private func decodeRLE(_ bytes: UnsafeRawBufferPointer, deadline: DecodingDeadline,
                           allowTruncated: Bool) throws(AlcedoError) -> [UInt8] {
        let width = header.width, height = header.height
        let lookup = try paletteTable()
        let is4 = header.compression == .rle4
        var end = bytes.count
        if header.imageSize > 0 {
            guard header.imageSize <= bytes.count - header.pixelOffset || allowTruncated else {
                throw .decodingError(reason: .truncated(format: format, message:
                    "the header states \(header.imageSize) bytes of \(header.compression.name) data, \(bytes.count - header.pixelOffset) are present"))
            }
            end = min(bytes.count, header.pixelOffset + header.imageSize)
        }
        var failure: AlcedoError?
        let pixels = [UInt8](unsafeUninitializedCapacity: width * height * 4) { buffer, initialized in
            buffer.initialize(repeating: 0)
            initialized = buffer.count
            let out = UnsafeMutableRawPointer(buffer.baseAddress!)
            var position = header.pixelOffset
            var x = 0, row = 0
            func corrupt(_ message: String) -> AlcedoError {
                .decodingError(reason: .corrupt(format: format, message: message))
            }
            // Runs may reach into the row's padding (ImageMagick writes such runs): those pixels
            // are dropped. A run past the padded row is an error.
            let paddedWidth = header.rowStride * 8 / header.bitCount
            func put(_ index: Int) throws(AlcedoError) {
                guard x < width else { x += 1; return }
                guard index < lookup.count else {
                    throw corrupt("palette index \(index) in row \(row) is past the \(lookup.count)-colour palette")
                }
                let y = header.topDown ? row : height - 1 - row
                out.storeBytes(of: lookup[index], toByteOffset: (y * width + x) * 4, as: UInt32.self)
                x += 1
            }
            do throws(AlcedoError) {
                decoding: while row < height {
                    guard position + 2 <= end else {
                        if allowTruncated { break decoding }
                        throw .decodingError(reason: .truncated(format: format, message:
                            "the \(header.compression.name) data end at row \(row) of \(height) without an end-of-bitmap code"))
                    }
                    let count = Int(bytes[position]), value = Int(bytes[position + 1])
                    position += 2
                    if count > 0 {
                        guard x + count <= paddedWidth else {
                            throw corrupt("a run of \(count) pixels at column \(x) of row \(row) goes past the \(width)-pixel row")
                        }
                        if is4 {
                            for i in 0..<count { try put(i & 1 == 0 ? value >> 4 : value & 0x0F) }
                        } else {
                            for _ in 0..<count { try put(value) }
                        }
                        continue
                    }
                    switch value {
                    case 0:  // end of line
                        x = 0
                        row += 1
                        try deadline.check()
                    case 1:  // end of bitmap
                        break decoding
                    case 2:  // delta
                        guard position + 2 <= end else {
                            if allowTruncated { break decoding }
                            throw .decodingError(reason: .truncated(format: format, message: "the data end inside a delta code"))
                        }
                        let dx = Int(bytes[position]), dy = Int(bytes[position + 1])
                        position += 2
                        guard x + dx <= paddedWidth else { throw corrupt("a delta of \(dx) from column \(x) goes past the \(width)-pixel row \(row)") }
                        x += dx
                        row += dy
                        if row > height || (row == height && x > 0) {
                            throw corrupt("a delta of \(dy) rows goes past the \(height)-row picture")
                        }
                    default:  // absolute run of `value` pixels, padded to 16 bits
                        let byteCount = is4 ? (value + 1) / 2 : value
                        guard x + value <= paddedWidth else {
                            throw corrupt("an absolute run of \(value) pixels at column \(x) of row \(row) goes past the \(width)-pixel row")
                        }
                        guard position + byteCount <= end else {
                            if allowTruncated { break decoding }
                            throw .decodingError(reason: .truncated(format: format, message: "the data end inside an absolute run"))
                        }
                        for i in 0..<value {
                            let byte = Int(bytes[position + (is4 ? i / 2 : i)])
                            try put(is4 ? (i & 1 == 0 ? byte >> 4 : byte & 0x0F) : byte)
                        }
                        position += (byteCount + 1) & ~1
                    }
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return pixels
    }
}

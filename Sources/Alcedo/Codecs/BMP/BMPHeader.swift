#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The compression a bitmap's header states (`biCompression`).
enum BMPCompression: UInt32, Sendable {
    case none = 0, rle8 = 1, rle4 = 2, bitfields = 3, jpeg = 4, png = 5, alphaBitfields = 6

    /// The word `alcedo info` prints.
    var name: String {
        switch self {
        case .none: return "none"
        case .rle8: return "rle8"
        case .rle4: return "rle4"
        case .bitfields, .alphaBitfields: return "bitfields"
        case .jpeg: return "jpeg"
        case .png: return "png"
        }
    }
}

/// One channel of a BITFIELDS pixel: where its bits lie and how to widen them to 8 bits.
struct BMPChannelMask: Sendable, Equatable {
    let mask: UInt32
    let shift: UInt32
    let bits: UInt32

    init(_ mask: UInt32) {
        self.mask = mask
        shift = mask == 0 ? 0 : UInt32(mask.trailingZeroBitCount)
        bits = UInt32((mask >> shift).nonzeroBitCount)
    }

    /// The channel of `pixel` as 8 bits (rounded when narrower, top bits when wider); 0 for an empty mask.
    @inline(__always)
    func value(_ pixel: UInt32) -> UInt8 {
        guard bits > 0 else { return 0 }
        let v = (pixel & mask) >> shift
        if bits >= 8 { return UInt8(truncatingIfNeeded: v >> (bits - 8)) }
        let maximum = (UInt32(1) << bits) - 1
        return UInt8((v * 255 + maximum / 2) / maximum)
    }
}

/// A device-independent bitmap's header (the `BITMAPINFOHEADER` family and OS/2's
/// `BITMAPCOREHEADER`), its colour masks and palette, read and checked without touching pixels.
///
/// Used for `.bmp` files (after their 14-byte file header) and for the bitmaps inside icons
/// (which have no file header and a height twice the picture's, counting the AND mask).
struct BMPHeader: Sendable {
    /// The size of the DIB header (12 OS/2 v1, 16/64 OS/2 v2, 40, 52, 56, 108, 124).
    let headerSize: Int
    let width: Int
    /// The height of the picture (positive; for icon bitmaps the XOR part only).
    let height: Int
    /// Rows are stored top row first (a negative height in the file).
    let topDown: Bool
    let bitCount: Int
    let compression: BMPCompression
    /// Bytes of compressed data the header states (`biSizeImage`), 0 when unstated.
    let imageSize: Int
    /// Palette entries, 4 bytes each as B, G, R, 0 (empty above 8 bits a pixel).
    let palette: [UInt8]
    let red: BMPChannelMask, green: BMPChannelMask, blue: BMPChannelMask, alpha: BMPChannelMask
    /// Offset of the pixel data from the start of the buffer.
    let pixelOffset: Int
    /// An embedded ICC profile (V5 headers with `PROFILE_EMBEDDED`).
    let iccProfile: Data?

    var paletteCount: Int { palette.count / 4 }

    /// The header's name, for `alcedo info`.
    var headerName: String {
        switch headerSize {
        case 12: return "OS/2 v1"
        case 16, 64: return "OS/2 v2"
        case 40: return "BITMAPINFOHEADER"
        case 52: return "BITMAPV2INFOHEADER"
        case 56: return "BITMAPV3INFOHEADER"
        case 108: return "BITMAPV4HEADER"
        default: return "BITMAPV5HEADER"
        }
    }

    /// Bytes in one stored row of an uncompressed bitmap: `width * bitCount` bits padded to 4 bytes.
    var rowStride: Int { ((width * bitCount + 31) / 32) * 4 }

    /// Whether the pixels carry an alpha channel the decoder reads (a mask, or 32-bit BI_RGB).
    var hasAlphaChannel: Bool { alpha.mask != 0 }

    /// Reads the DIB header at `dibOffset` of `bytes`.
    /// - Parameters:
    ///   - fileHeaderPixelOffset: the file header's `bfOffBits`, or `nil` for an icon bitmap
    ///     (pixels follow the palette).
    ///   - iconBitmap: the height counts the AND mask too (icons): it is halved.
    static func parse(_ bytes: UnsafeRawBufferPointer, dibOffset: Int, fileHeaderPixelOffset: Int?,
                      iconBitmap: Bool = false, format: ImageFormat) throws(AlcedoError) -> BMPHeader {
        func invalid(_ message: String) -> AlcedoError { .decodingError(reason: .invalidHeader(format: format, message: message)) }
        func truncated(_ message: String) -> AlcedoError { .decodingError(reason: .truncated(format: format, message: message)) }
        var reader = LittleEndianReader(bytes)
        guard let headerSize = reader.u32(at: dibOffset).map(Int.init) else { throw truncated("the file ends inside the bitmap header") }
        guard [12, 16, 40, 52, 56, 64, 108, 124].contains(headerSize) else {
            throw invalid("a bitmap header of \(headerSize) bytes is not one of the known sizes (12, 16, 40, 52, 56, 64, 108, 124)")
        }
        guard dibOffset + headerSize <= bytes.count else { throw truncated("the file ends inside the \(headerSize)-byte bitmap header") }
        reader.base = dibOffset

        let width: Int, rawHeight: Int, planes: Int, bitCount: Int
        var compressionValue: UInt32 = 0, imageSize = 0, colorsUsed = 0
        if headerSize == 12 {
            width = Int(reader.u16(4)); rawHeight = Int(reader.u16(6)); planes = Int(reader.u16(8)); bitCount = Int(reader.u16(10))
        } else {
            width = Int(reader.i32(4)); rawHeight = Int(reader.i32(8)); planes = Int(reader.u16(12)); bitCount = Int(reader.u16(14))
            if headerSize >= 20 { compressionValue = reader.u32(16) }
            if headerSize >= 24 { imageSize = Int(reader.u32(20)) }
            if headerSize >= 36 { colorsUsed = Int(reader.u32(32)) }
        }
        guard planes == 1 || (iconBitmap && planes == 0) else { throw invalid("\(planes) colour planes (must be 1)") }
        guard [1, 2, 4, 8, 16, 24, 32].contains(bitCount) else {
            throw .decodingError(reason: .unsupportedFeature(format: format, message: "\(bitCount) bits a pixel (1, 2, 4, 8, 16, 24 and 32 are read)"))
        }
        let isOS2v2 = headerSize == 16 || headerSize == 64
        if isOS2v2 && (compressionValue == 3 || compressionValue == 4) {
            throw .decodingError(reason: .unsupportedFeature(format: format, message: compressionValue == 3
                ? "OS/2 Huffman 1D compression" : "OS/2 RLE24 compression"))
        }
        guard let compression = BMPCompression(rawValue: compressionValue) else {
            throw .decodingError(reason: .unsupportedFeature(format: format, message: "compression \(compressionValue)"))
        }
        guard width > 0 else { throw invalid("width \(width) is not positive") }
        guard rawHeight != 0, rawHeight != Int(Int32.min) else { throw invalid("height \(rawHeight) is not usable") }
        var height = abs(rawHeight)
        let topDown = rawHeight < 0
        if iconBitmap {
            // The stated height covers the colour bitmap and the AND mask below it.
            height /= 2
            guard height > 0 else { throw invalid("icon bitmap height \(rawHeight) leaves no rows") }
        }
        switch compression {
        case .rle8 where bitCount != 8, .rle4 where bitCount != 4:
            throw invalid("\(compression.name) compression with \(bitCount) bits a pixel")
        case .bitfields where bitCount != 16 && bitCount != 32, .alphaBitfields where bitCount != 16 && bitCount != 32:
            throw invalid("BITFIELDS with \(bitCount) bits a pixel (16 or 32 needed)")
        default: break
        }

        // Colour masks: inside V2+ headers; after a 40-byte header for BITFIELDS.
        var cursor = dibOffset + headerSize
        var masks: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        if compression == .bitfields || compression == .alphaBitfields {
            if headerSize >= 52 {
                masks = (reader.u32(40), reader.u32(44), reader.u32(48), headerSize >= 56 ? reader.u32(52) : 0)
            } else {
                let count = compression == .alphaBitfields ? 4 : 3
                guard cursor + 4 * count <= bytes.count else { throw truncated("the file ends inside the colour masks") }
                let m = LittleEndianReader(bytes, base: cursor)
                masks = (m.u32(0), m.u32(4), m.u32(8), count == 4 ? m.u32(12) : 0)
                cursor += 4 * count
            }
            for (name, mask) in [("red", masks.0), ("green", masks.1), ("blue", masks.2), ("alpha", masks.3)] where mask != 0 {
                // A mask must be one run of set bits.
                let shifted = mask >> UInt32(mask.trailingZeroBitCount)
                guard shifted & (shifted &+ 1) == 0 else { throw invalid("the \(name) mask 0x\(String(mask, radix: 16)) is not one run of bits") }
                if bitCount == 16 && mask > 0xFFFF { throw invalid("the \(name) mask 0x\(String(mask, radix: 16)) is wider than 16 bits") }
            }
        } else if bitCount == 16 {
            masks = (0x7C00, 0x03E0, 0x001F, 0)
        } else if bitCount == 24 || bitCount == 32 {
            masks = (0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0)
            // V3+ headers state an alpha mask even for BI_RGB; 32-bit BI_RGB alpha is read as
            // browsers read it (see BMPDecoder).
            if bitCount == 32 { masks.3 = headerSize >= 56 && reader.u32(52) != 0 ? reader.u32(52) : 0xFF00_0000 }
        }

        // Palette: 4-byte entries (3-byte for OS/2 v1) up to 2^bitCount, never past the pixels.
        var palette: [UInt8] = []
        if bitCount <= 8 {
            let entrySize = headerSize == 12 ? 3 : 4
            let maximum = 1 << bitCount
            var count = colorsUsed > 0 ? colorsUsed : maximum
            guard count <= 1 << 16 else { throw invalid("\(count) palette colours") }
            count = min(count, maximum)
            if let stated = fileHeaderPixelOffset, stated > cursor {
                count = min(count, (stated - cursor) / entrySize)
            }
            guard count > 0 else { throw invalid("a \(bitCount)-bit bitmap without a palette") }
            guard cursor + count * entrySize <= bytes.count else { throw truncated("the file ends inside the palette") }
            palette.reserveCapacity(count * 4)
            for index in 0..<count {
                let p = cursor + index * entrySize
                palette += [bytes[p], bytes[p + 1], bytes[p + 2], 0]
            }
            cursor += count * entrySize
        }

        var pixelOffset = cursor
        if let stated = fileHeaderPixelOffset, stated != 0 {
            guard stated >= dibOffset + headerSize else {
                throw invalid("the pixel data offset \(stated) points inside the headers")
            }
            pixelOffset = stated
        }
        guard pixelOffset <= bytes.count else {
            throw truncated("the pixel data offset \(pixelOffset) is past the end of the \(bytes.count)-byte file")
        }

        var icc: Data?
        if headerSize == 124, reader.u32(56) == 0x4D42_4544 /* 'MBED' */ {
            let offset = dibOffset + Int(reader.u32(112)), size = Int(reader.u32(116))
            if size > 0, size <= EmbeddedProfileReader.maxProfileBytes, offset <= bytes.count, size <= bytes.count - offset {
                icc = Data(bytes[offset..<offset + size])
            }
        }

        return BMPHeader(headerSize: headerSize, width: width, height: height, topDown: topDown, bitCount: bitCount,
                         compression: compression, imageSize: imageSize, palette: palette,
                         red: BMPChannelMask(masks.0), green: BMPChannelMask(masks.1), blue: BMPChannelMask(masks.2),
                         alpha: BMPChannelMask(masks.3), pixelOffset: pixelOffset, iccProfile: icc)
    }
}

/// Little-endian reads from a byte buffer at offsets from ``base``; the caller checks bounds
/// (the optional reads check them).
struct LittleEndianReader {
    let bytes: UnsafeRawBufferPointer
    var base: Int

    init(_ bytes: UnsafeRawBufferPointer, base: Int = 0) {
        self.bytes = bytes
        self.base = base
    }

    func u16(_ offset: Int) -> UInt16 {
        UInt16(bytes[base + offset]) | UInt16(bytes[base + offset + 1]) << 8
    }

    func u32(_ offset: Int) -> UInt32 {
        let p = base + offset
        return UInt32(bytes[p]) | UInt32(bytes[p + 1]) << 8 | UInt32(bytes[p + 2]) << 16 | UInt32(bytes[p + 3]) << 24
    }

    func i32(_ offset: Int) -> Int32 { Int32(bitPattern: u32(offset)) }

    /// The 32-bit value at absolute `offset`, or `nil` when it does not fit in the buffer.
    func u32(at offset: Int) -> UInt32? {
        guard offset >= 0, offset <= bytes.count - 4 else { return nil }
        return LittleEndianReader(bytes, base: offset).u32(0)
    }
}

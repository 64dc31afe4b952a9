import CPNG

/// One chunk of a PNG file: its four-letter type and where its data lies in the file.
struct PNGChunk: Sendable, Equatable {
    /// The chunk type as a big-endian 32-bit value (`IHDR` is 0x49484452).
    var type: UInt32
    /// The byte range of the chunk's data (after the length and type fields, before the CRC).
    var data: Range<Int>

    /// The byte range of the whole chunk: length, type, data and CRC.
    var whole: Range<Int> { (data.lowerBound - 8)..<(data.upperBound + 4) }

    /// The type as text, for messages.
    var name: String { PNGChunk.name(of: type) }

    static func name(of type: UInt32) -> String {
        let bytes = [UInt8(type >> 24), UInt8((type >> 16) & 0xFF), UInt8((type >> 8) & 0xFF), UInt8(type & 0xFF)]
        return String(decoding: bytes, as: UTF8.self)
    }

    static func code(_ name: StaticString) -> UInt32 {
        name.withUTF8Buffer { $0.reduce(0) { $0 << 8 | UInt32($1) } }
    }

    static let IHDR = code("IHDR"), PLTE = code("PLTE"), IDAT = code("IDAT"), IEND = code("IEND")
    static let tRNS = code("tRNS"), gAMA = code("gAMA"), sRGB = code("sRGB"), cHRM = code("cHRM")
    static let iCCP = code("iCCP"), bKGD = code("bKGD"), pHYs = code("pHYs"), tIME = code("tIME")
    static let oFFs = code("oFFs"), sTER = code("sTER"), acTL = code("acTL"), fcTL = code("fcTL")
    static let fdAT = code("fdAT"), sBIT = code("sBIT")

    /// Appends a chunk of `type` holding `data`, with its length and CRC, to `png`.
    static func append<Bytes: Collection<UInt8>>(type: UInt32, data: Bytes, to png: inout [UInt8]) {
        png += bigEndian(UInt32(data.count))
        var body = bigEndian(type)
        body += data
        let crc = body.withUnsafeBufferPointer { UInt32(truncatingIfNeeded: alcedo_crc32(0, $0.baseAddress, UInt32($0.count))) }
        png += body
        png += bigEndian(crc)
    }

    /// `value` as 4 big-endian bytes.
    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}

/// The structure of a PNG file, as checked by ``PNGChunkValidator``.
struct PNGStructure: Sendable {
    var width: Int
    var height: Int
    var bitDepth: Int
    /// 0 gray, 2 RGB, 3 palette, 4 gray + alpha, 6 RGBA.
    var colorType: Int
    var interlaced: Bool
    /// Every chunk from `IHDR` to `IEND`, in file order.
    var chunks: [PNGChunk]

    /// The `PLTE` chunk, if any.
    var palette: PNGChunk? { chunks.first { $0.type == PNGChunk.PLTE } }
    /// The number of palette entries (0 without `PLTE`).
    var paletteCount: Int { palette.map { $0.data.count / 3 } ?? 0 }
    /// `true` for colour type 3.
    var isPaletted: Bool { colorType == 3 }
    /// `true` when an `acTL` chunk comes before the first `IDAT` (an animated PNG).
    var isAnimated: Bool {
        for chunk in chunks {
            if chunk.type == PNGChunk.acTL { return true }
            if chunk.type == PNGChunk.IDAT { return false }
        }
        return false
    }
}

/// Walks every chunk of a PNG file before libpng sees it, so that what libpng would only warn
/// about (or never look at) is an error: a bad CRC in any chunk (libpng silently drops ancillary
/// chunks with bad CRCs), a file that stops before `IEND`, a malformed header, and known
/// ancillary chunks whose length the specification fixes (an empty `bKGD`, a 3-byte `gAMA`).
/// Bytes after `IEND` are ignored. CRCs are computed with zlib's `crc32`.
enum PNGChunkValidator {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Checks `bytes` and returns its structure.
    /// - Throws: `.invalidHeader` (signature, `IHDR`), `.truncated` (a chunk cut short, no `IEND`),
    ///   `.corrupt` (CRC mismatch, impossible chunk length, misplaced or malformed chunk).
    static func validate(_ bytes: UnsafeRawBufferPointer, format: ImageFormat = .png) throws(AlcedoError) -> PNGStructure {
        func fail(_ reason: DecodingErrorReason) -> AlcedoError { .decodingError(reason: reason) }
        let count = bytes.count
        guard count >= signature.count else {
            if count == 0 { throw fail(.emptyData) }
            let isPrefix = (0..<count).allSatisfy { bytes[$0] == signature[$0] }
            throw fail(isPrefix ? .truncated(format: format, message: "the data ends inside the PNG signature")
                : .invalidHeader(format: format, message: "no PNG signature"))
        }
        guard (0..<signature.count).allSatisfy({ bytes[$0] == signature[$0] }) else {
            throw fail(.invalidHeader(format: format, message: "no PNG signature"))
        }

        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw fail(.emptyData) }
        var chunks: [PNGChunk] = []
        var header: (width: Int, height: Int, depth: Int, colorType: Int, interlaced: Bool)?
        var offset = signature.count
        var sawIDAT = false, sawPLTE = false, sawIEND = false
        while !sawIEND {
            guard offset + 8 <= count else {
                throw fail(.truncated(format: format, message: "the data ends before the IEND chunk"))
            }
            let length = readUInt32(bytes, at: offset)
            let type = readUInt32(bytes, at: offset + 4)
            let name = PNGChunk.name(of: type)
            guard length <= 0x7FFF_FFFF else {
                throw fail(.corrupt(format: format, message: "chunk \(name) at offset \(offset) declares \(length) bytes"))
            }
            guard (0..<4).allSatisfy({ isChunkLetter(bytes[offset + 4 + $0]) }) else {
                throw fail(.corrupt(format: format, message: "invalid chunk type at offset \(offset)"))
            }
            let dataStart = offset + 8
            let dataEnd = dataStart + Int(length)
            guard dataEnd + 4 <= count else {
                throw fail(.truncated(format: format, message: "the \(name) chunk at offset \(offset) is cut short"))
            }
            let computed = UInt32(truncatingIfNeeded: alcedo_crc32(0, base + offset + 4, UInt32(length) + 4))
            guard computed == readUInt32(bytes, at: dataEnd) else {
                throw fail(.corrupt(format: format, message: "CRC error in the \(name) chunk at offset \(offset)"))
            }
            let chunk = PNGChunk(type: type, data: dataStart..<dataEnd)

            if chunks.isEmpty {
                guard type == PNGChunk.IHDR else {
                    throw fail(.invalidHeader(format: format, message: "the first chunk is \(name), not IHDR"))
                }
                header = try parseHeader(bytes, chunk: chunk, format: format)
            } else if let header {
                switch type {
                case PNGChunk.IHDR:
                    throw fail(.corrupt(format: format, message: "a second IHDR chunk"))
                case PNGChunk.PLTE:
                    let entries = Int(length) / 3
                    guard !sawPLTE, !sawIDAT, Int(length) % 3 == 0, (1...256).contains(entries),
                          header.colorType != 0, header.colorType != 4 else {
                        throw fail(.corrupt(format: format, message: "invalid PLTE chunk (\(length) bytes)"))
                    }
                    if header.colorType == 3 && entries > 1 << header.depth {
                        throw fail(.corrupt(format: format, message: "PLTE has \(entries) entries for \(header.depth)-bit indices"))
                    }
                    sawPLTE = true
                case PNGChunk.IDAT:
                    if header.colorType == 3 && !sawPLTE {
                        throw fail(.corrupt(format: format, message: "palette image without a PLTE chunk before IDAT"))
                    }
                    if sawIDAT, let last = chunks.last, last.type != PNGChunk.IDAT {
                        throw fail(.corrupt(format: format, message: "IDAT chunks are not consecutive"))
                    }
                    sawIDAT = true
                case PNGChunk.IEND:
                    sawIEND = true
                default:
                    try checkAncillary(chunk, length: Int(length), colorType: header.colorType, format: format)
                }
            }
            chunks.append(chunk)
            offset = dataEnd + 4
        }
        guard let header, sawIDAT else {
            throw fail(.corrupt(format: format, message: "no IDAT chunk"))
        }
        return PNGStructure(width: header.width, height: header.height, bitDepth: header.depth,
                            colorType: header.colorType, interlaced: header.interlaced, chunks: chunks)
    }

    private static func parseHeader(_ bytes: UnsafeRawBufferPointer, chunk: PNGChunk, format: ImageFormat)
        throws(AlcedoError) -> (width: Int, height: Int, depth: Int, colorType: Int, interlaced: Bool) {
        func invalid(_ message: String) -> AlcedoError {
            .decodingError(reason: .invalidHeader(format: format, message: message))
        }
        guard chunk.data.count == 13 else { throw invalid("IHDR has \(chunk.data.count) bytes, not 13") }
        let start = chunk.data.lowerBound
        let width = Int(readUInt32(bytes, at: start)), height = Int(readUInt32(bytes, at: start + 4))
        let depth = Int(bytes[start + 8]), colorType = Int(bytes[start + 9])
        guard width > 0, height > 0, width <= 0x7FFF_FFFF, height <= 0x7FFF_FFFF else {
            throw invalid("image size \(width)x\(height)")
        }
        let allowedDepths: [Int: [Int]] = [0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16]]
        guard let depths = allowedDepths[colorType], depths.contains(depth) else {
            throw invalid("colour type \(colorType) with bit depth \(depth)")
        }
        guard bytes[start + 10] == 0, bytes[start + 11] == 0, bytes[start + 12] <= 1 else {
            throw invalid("unknown compression, filter or interlace method")
        }
        return (width, height, depth, colorType, bytes[start + 12] == 1)
    }

    /// Known ancillary chunks must have the length the specification gives them; every known
    /// ancillary chunk has at least one byte. Unknown chunks are left alone.
    private static func checkAncillary(_ chunk: PNGChunk, length: Int, colorType: Int, format: ImageFormat) throws(AlcedoError) {
        let fixed: [UInt32: Int] = [PNGChunk.gAMA: 4, PNGChunk.sRGB: 1, PNGChunk.cHRM: 32, PNGChunk.pHYs: 9,
                                    PNGChunk.tIME: 7, PNGChunk.oFFs: 9, PNGChunk.sTER: 1, PNGChunk.acTL: 8,
                                    PNGChunk.fcTL: 26]
        var expected = fixed[chunk.type]
        if chunk.type == PNGChunk.bKGD { expected = colorType == 3 ? 1 : (colorType & 2 == 0 ? 2 : 6) }
        if chunk.type == PNGChunk.tRNS && colorType != 3 { expected = colorType == 0 ? 2 : (colorType == 2 ? 6 : nil) }
        if let expected, length != expected {
            throw .decodingError(reason: .corrupt(format: format, message: "\(chunk.name) chunk has \(length) bytes, not \(expected)"))
        }
        let knownVariable = ["iCCP", "tEXt", "zTXt", "iTXt", "sBIT", "hIST", "sPLT", "pCAL", "sCAL", "eXIf", "fdAT"]
        if length == 0 && knownVariable.contains(chunk.name) {
            throw .decodingError(reason: .corrupt(format: format, message: "empty \(chunk.name) chunk"))
        }
    }

    /// Checks that every chunk before the first `IDAT` fits in `bytes`, without reading the
    /// chunks' data: libpng allocates (and clears) a buffer of the length a chunk declares
    /// before it reads the chunk, so a 57-byte file whose `sCAL` declares 1 GiB made
    /// `png_image_begin_read_from_memory` take 1 GiB. A signature or header libpng refuses is
    /// left to libpng's own message.
    /// - Throws: `.truncated` naming the first chunk that declares more bytes than follow it.
    static func checkLengthsBeforeImageData(_ bytes: UnsafeRawBufferPointer, format: ImageFormat = .png) throws(AlcedoError) {
        let count = bytes.count
        guard count >= signature.count, (0..<signature.count).allSatisfy({ bytes[$0] == signature[$0] }) else { return }
        var offset = signature.count
        while offset + 8 <= count {
            let length = Int(readUInt32(bytes, at: offset))
            let type = readUInt32(bytes, at: offset + 4)
            if type == PNGChunk.IDAT || type == PNGChunk.IEND { return }
            guard offset + 8 + length + 4 <= count else {
                throw .decodingError(reason: .truncated(format: format,
                                                        message: "the \(PNGChunk.name(of: type)) chunk at offset \(offset) declares \(length) bytes, more than the data holds"))
            }
            offset += 8 + length + 4
        }
    }

    static func readUInt32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    private static func isChunkLetter(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }
}

import CPNG

/// The RGBA colour of every palette entry of a palette PNG, converted exactly as libpng's
/// direct RGBA path converts them (file gamma to sRGB, `tRNS` alpha).
///
/// Palette images are decoded as indices so that an index past the end of `PLTE` is an error
/// (libpng's RGBA path would quietly paint it black). libpng's colour-map path converts gamma
/// differently from its RGBA path (up to 9 levels apart), so the table is not taken from it:
/// a one-row PNG holding each index once, with the file's own `PLTE`, `tRNS` and colour-space
/// chunks, is decoded through the RGBA path instead.
enum PNGPaletteTable {
    /// `structure.paletteCount * 4` bytes of RGBA, one entry per palette index.
    static func colors(of structure: PNGStructure, in bytes: UnsafeRawBufferPointer, format: ImageFormat)
        throws(AlcedoError) -> [UInt8] {
        let entries = structure.paletteCount
        guard entries > 0 else {
            throw .decodingError(reason: .corrupt(format: format, message: "palette image without a PLTE chunk"))
        }
        let png = tablePNG(structure: structure, bytes: bytes)
        var image = PNGLibrary.makeImage()
        defer { png_image_free(&image) }
        var failure: String?
        let table = [UInt8](unsafeUninitializedCapacity: entries * 4) { buffer, initialized in
            initialized = 0
            png.withUnsafeBytes { raw in
                guard png_image_begin_read_from_memory(&image, raw.baseAddress, raw.count) != 0 else {
                    failure = PNGLibrary.message(of: image)
                    return
                }
                image.format = ALCEDO_PNG_FORMAT_RGBA
                guard image.width == UInt32(entries), image.height == 1,
                      png_image_finish_read(&image, nil, buffer.baseAddress, 0, nil) != 0 else {
                    failure = PNGLibrary.message(of: image)
                    return
                }
                initialized = entries * 4
            }
        }
        if let failure {
            throw .decodingError(reason: .corrupt(format: format, message: "palette: \(failure)"))
        }
        return table
    }

    /// A PNG of `paletteCount` x 1 pixels whose row holds the indices 0, 1, 2…, carrying the
    /// colour-space chunks that precede `PLTE` in the source, its `PLTE` and its `tRNS`.
    private static func tablePNG(structure: PNGStructure, bytes: UnsafeRawBufferPointer) -> [UInt8] {
        let entries = structure.paletteCount
        var png = PNGChunkValidator.signature
        let header = PNGChunk.bigEndian(UInt32(entries)) + PNGChunk.bigEndian(1) + [8, 3, 0, 0, 0]
        PNGChunk.append(type: PNGChunk.IHDR, data: header, to: &png)
        let colourSpace: Set<UInt32> = [PNGChunk.gAMA, PNGChunk.sRGB, PNGChunk.cHRM, PNGChunk.iCCP]
        for chunk in structure.chunks {
            if chunk.type == PNGChunk.IDAT { break }
            if colourSpace.contains(chunk.type) && chunk.whole.lowerBound < (structure.palette?.whole.lowerBound ?? 0)
                || chunk.type == PNGChunk.PLTE || chunk.type == PNGChunk.tRNS {
                png += bytes[chunk.whole]
            }
        }
        // One row: filter type 0, then every index once, in a zlib stream of one stored block.
        let row: [UInt8] = [0] + (0..<entries).map { UInt8($0) }
        var stream: [UInt8] = [0x78, 0x01, 0x01]
        let length = UInt16(row.count)
        stream += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
        stream += row
        let adler = row.withUnsafeBufferPointer { UInt32(truncatingIfNeeded: alcedo_adler32(1, $0.baseAddress, UInt32($0.count))) }
        stream += PNGChunk.bigEndian(adler)
        PNGChunk.append(type: PNGChunk.IDAT, data: stream, to: &png)
        PNGChunk.append(type: PNGChunk.IEND, data: [], to: &png)
        return png
    }
}

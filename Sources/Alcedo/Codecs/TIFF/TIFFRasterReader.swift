import CTIFF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads one TIFF page strip by strip or tile by tile into RGBA8 (through
/// ``TIFFSampleConverter``), straight into the output, into a ``BoxShrinker``, or band by band
/// to a caller; the only other buffer is one strip or tile (one a plane for separate planes).
struct TIFFRasterReader {
    let session: TIFFReadSession
    let page: TIFFPage
    let options: DecodingOptions
    let deadline: DecodingDeadline

    /// What both ways of reading need: the planes read, the sizes of a strip or tile and of
    /// one of its rows, the colour plans and the sample converter.
    private struct Setup {
        let planeSamples: [Int]
        let chunkSize: Int
        let rowBytes: Int
        let cmykPlan: ColorPlan?
        let rgbPlan: ColorPlan
        let converter: TIFFSampleConverter
    }

    /// Sizes a strip or tile and checks it, with `extraBytes` more (a shrinker, a band), against
    /// the working-memory limit before anything is allocated.
    private func setup(extraBytes: Int, extraWhat: String = "") throws(AlcedoError) -> Setup {
        let lib = session.lib, tif = session.handle
        // The samples read: one interleaved buffer, or the colour planes then alpha.
        let planeSamples: [Int] = page.separatePlanes
            ? Array(0..<page.colorSamples) + (page.alpha != .none ? [page.colorSamples] : []) : [0]
        let chunkSize = Int(page.tiled ? lib.TIFFTileSize64!(tif) : lib.TIFFStripSize64!(tif))
        let rowBytes = Int(page.tiled ? lib.TIFFTileRowSize64!(tif) : lib.TIFFScanlineSize64!(tif))
        guard chunkSize > 0, rowBytes > 0 else { throw session.error("libtiff cannot size a \(page.tiled ? "tile" : "strip")", inHeader: true) }
        if page.tiled {
            guard page.tileWidth > 0, page.tileHeight > 0 else { throw session.error("a tile of \(page.tileWidth)x\(page.tileHeight)", inHeader: true) }
        }
        let (chunksBytes, overflow) = chunkSize.multipliedReportingOverflow(by: planeSamples.count)
        let (total, overflow2) = chunksBytes.addingReportingOverflow(extraBytes)
        try options.limits.checkWorkingMemory(overflow || overflow2 ? -1 : total,
                                              what: "one \(page.tiled ? "tile" : "strip") of \(chunkSize) bytes"
                                                  + (planeSamples.count > 1 ? " in each of \(planeSamples.count) planes" : "") + extraWhat,
                                              format: .tiff)
        let cmykPlan = page.model == .cmyk ? ColorPlan.forCMYK(iccData: page.iccProfile, inverted: false, mode: options.colorManagement) : nil
        // L*a*b* is device-independent: it becomes sRGB itself (a Lab profile is not an RGB one).
        let isLab = if case .lab = page.model { true } else { false }
        let rgbPlan = page.model == .cmyk || isLab ? ColorPlan.none
            : ColorPlan.forRGBA(iccData: page.iccProfile, mode: options.colorManagement, format: .tiff)
        let converter = TIFFSampleConverter(page: page, naiveCMYK: page.model == .cmyk && cmykPlan == nil)
        return Setup(planeSamples: planeSamples, chunkSize: chunkSize, rowBytes: rowBytes, cmykPlan: cmykPlan,
                     rgbPlan: rgbPlan, converter: converter)
    }

    /// The rows of a band: each strip (or each row of tiles) in turn.
    var bandRows: Int { page.tiled ? page.tileHeight : max(1, min(page.rowsPerStrip, page.height)) }

    func decode() throws(AlcedoError) -> AlcedoImage {
        let width = page.width, height = page.height
        let factor = options.boxShrinkFactor(width: width, height: height)
        let shrinkBytes = factor > 1 ? BoxShrinker.memory(width: width, height: height, factor: factor) : 0
        let setup = try setup(extraBytes: shrinkBytes)
        let shrinker: BoxShrinker? = factor > 1 ? BoxShrinker(width: width, height: height, factor: factor) : nil
        defer { shrinker?.deallocate() }
        let outWidth = shrinker?.outWidth ?? width, outHeight = shrinker?.outHeight ?? height

        var failure: AlcedoError?
        var pixels = [UInt8](unsafeUninitializedCapacity: outWidth * outHeight * 4) { buffer, initialized in
            guard let output = buffer.baseAddress else { return }
            initialized = buffer.count
            // Strips skipped under allowTruncated stay transparent.
            if shrinker == nil && options.allowTruncated { output.initialize(repeating: 0, count: buffer.count) }
            do throws(AlcedoError) {
                try walk(setup, target: { y, x in shrinker?.row ?? output + (y * width + x) * 4 },
                         written: { y, x, count in shrinker?.add(y: y, x: x, dx: 1, count: count) },
                         band: { _, _ in true })
                shrinker?.finish(into: output)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        setup.rgbPlan.apply(to: &pixels)
        return AlcedoImage(width: outWidth, height: outHeight, pixels: pixels, sourceFormat: .tiff,
                           colorMetadata: setup.cmykPlan?.metadata ?? setup.rgbPlan.metadata)
    }

    /// Decodes the page at full size in bands of ``bandRows`` rows, in order from the top, as
    /// stored (no orientation applied): each band is converted to RGBA8 and its colour, then
    /// handed to `rows` with the index of its first row and its row count; `rows` returns
    /// `false` to stop. The only buffers are one band and one strip or tile.
    func decodeRows(start: (PixelSize) -> Void,
                    rows: (_ band: UnsafeBufferPointer<UInt8>, _ firstRow: Int, _ rowCount: Int) -> Bool) throws(AlcedoError) {
        let width = page.width
        let bandRows = bandRows
        let (bandBytes, overflow) = (bandRows * 4).multipliedReportingOverflow(by: width)
        let setup = try setup(extraBytes: overflow ? Int.max / 2 : bandBytes, extraWhat: " and a band of \(bandRows) rows")
        let band = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, bandBytes))
        defer { band.deallocate() }
        band.initialize(repeating: 0, count: max(1, bandBytes))
        start(PixelSize(width: width, height: page.height))
        var bandFirst = 0
        try walk(setup, target: { y, x in band + ((y - bandFirst) * width + x) * 4 },
                 written: { _, _, _ in },
                 band: { first, count in
                     if count == 0 {
                         // A band starts: under allowTruncated a missing strip leaves it transparent.
                         bandFirst = first
                         if options.allowTruncated { band.update(repeating: 0, count: bandRows * width * 4) }
                         return true
                     }
                     let bytes = UnsafeMutableBufferPointer(start: band, count: count * width * 4)
                     setup.rgbPlan.apply(to: bytes)
                     return rows(UnsafeBufferPointer(bytes), first, count)
                 })
    }

    /// Reads every strip or tile in order. `target(y, x)` is where the RGBA8 of row `y` from
    /// column `x` goes, `written(y, x, count)` follows each segment, and `band(first, count)` is
    /// called with a count of 0 before the rows from `first` are read and with their count once
    /// they are (also for a strip skipped under allowTruncated); it returns `false` to stop.
    private func walk(_ setup: Setup, target: (Int, Int) -> UnsafeMutablePointer<UInt8>,
                      written: (Int, Int, Int) -> Void,
                      band: (Int, Int) throws(AlcedoError) -> Bool) throws(AlcedoError) {
        let lib = session.lib, tif = session.handle
        let width = page.width, height = page.height
        let chunkSize = setup.chunkSize, rowBytes = setup.rowBytes, planeSamples = setup.planeSamples
        let chunks = UnsafeMutableRawPointer.allocate(byteCount: max(1, chunkSize * planeSamples.count), alignment: 16)
        defer { chunks.deallocate() }
        var sources = [UnsafeRawPointer](repeating: UnsafeRawPointer(chunks), count: planeSamples.count)
        func segment(y: Int, x: Int, count: Int) {
            let target = target(y, x)
            sources.withUnsafeBufferPointer { setup.converter.convert($0.baseAddress!, count: count, into: target) }
            if let cmykPlan = setup.cmykPlan {
                cmykPlan.apply(to: UnsafeMutableBufferPointer(start: target, count: count * 4))
                sources.withUnsafeBufferPointer { setup.converter.writeAlpha($0.baseAddress!, count: count, into: target) }
            }
            written(y, x, count)
        }
        if page.tiled {
            for ty in stride(from: 0, to: height, by: page.tileHeight) {
                let rows = min(page.tileHeight, height - ty)
                guard try band(ty, 0) else { return }
                for tx in stride(from: 0, to: width, by: page.tileWidth) {
                    try deadline.check()
                    var present = true
                    for (k, sample) in planeSamples.enumerated() {
                        let index = lib.TIFFComputeTile!(tif, UInt32(tx), UInt32(ty), 0, UInt16(sample))
                        present = try read(index, into: chunks + k * chunkSize, chunkSize: chunkSize, tile: true) && present
                    }
                    guard present else { continue }
                    let count = min(page.tileWidth, width - tx)
                    for r in 0..<rows {
                        for k in planeSamples.indices { sources[k] = UnsafeRawPointer(chunks + k * chunkSize + r * rowBytes) }
                        segment(y: ty + r, x: tx, count: count)
                    }
                }
                guard try band(ty, rows) else { return }
            }
        } else {
            let rowsPerStrip = max(1, page.rowsPerStrip)
            let stripsPerPlane = (height + rowsPerStrip - 1) / rowsPerStrip
            let needed = stripsPerPlane * (page.separatePlanes ? page.samplesPerPixel : 1)
            guard Int(lib.TIFFNumberOfStrips!(tif)) >= needed else {
                throw AlcedoError.decodingError(reason: .corrupt(format: .tiff, message:
                    "the file lists \(lib.TIFFNumberOfStrips!(tif)) strips, \(needed) are needed"))
            }
            for s in 0..<stripsPerPlane {
                try deadline.check()
                let first = s * rowsPerStrip, rows = min(rowsPerStrip, height - first)
                guard try band(first, 0) else { return }
                var present = true
                for (k, sample) in planeSamples.enumerated() {
                    let index = UInt32(s + (page.separatePlanes ? sample * stripsPerPlane : 0))
                    present = try read(index, into: chunks + k * chunkSize, chunkSize: chunkSize, tile: false) && present
                }
                if present {
                    for r in 0..<rows {
                        for k in planeSamples.indices { sources[k] = UnsafeRawPointer(chunks + k * chunkSize + r * rowBytes) }
                        segment(y: first + r, x: 0, count: width)
                    }
                }
                guard try band(first, rows) else { return }
            }
        }
    }

    /// Reads strip or tile `index` after checking that its bytes lie inside the data; returns
    /// `false` (nothing read) for a missing one under ``DecodingOptions/allowTruncated``.
    private func read(_ index: UInt32, into buffer: UnsafeMutableRawPointer, chunkSize: Int, tile: Bool) throws(AlcedoError) -> Bool {
        let lib = session.lib, tif = session.handle
        let what = tile ? "tile" : "strip"
        let offset = lib.TIFFGetStrileOffset!(tif, index), count = lib.TIFFGetStrileByteCount!(tif, index)
        let size = UInt64(session.dataSize)
        if offset >= size || count > size - offset {
            if options.allowTruncated { return false }
            if offset >= size {
                throw .decodingError(reason: .corrupt(format: .tiff, message:
                    "\(what) \(index) lies at offset \(offset), past the end of the \(size)-byte data"))
            }
            throw .decodingError(reason: .truncated(format: .tiff, message:
                "\(what) \(index) needs \(count) bytes at offset \(offset); the data end at \(size)"))
        }
        session.clearErrors()
        let n = tile ? lib.TIFFReadEncodedTile!(tif, index, buffer, -1) : lib.TIFFReadEncodedStrip!(tif, index, buffer, -1)
        if n < 0 {
            if options.allowTruncated { return false }
            throw session.error("libtiff could not decode \(what) \(index)")
        }
        if n < chunkSize && tile {
            // A tile always decodes whole; less means the data stopped.
            if options.allowTruncated { return true }
            throw .decodingError(reason: .truncated(format: .tiff, message: "\(what) \(index) decoded to \(n) of \(chunkSize) bytes"))
        }
        return true
    }
}

import CTIFF
import Foundation

/// Reads one TIFF page strip by strip or tile by tile into RGBA8 (through
/// ``TIFFSampleConverter``), straight into the output or into a ``BoxShrinker``; the only
/// other buffer is one strip or tile (one a plane for separate planes).
struct TIFFRasterReader {
    let session: TIFFReadSession
    let page: TIFFPage
    let options: DecodingOptions
    let deadline: DecodingDeadline

    func decode() throws(AlcedoError) -> AlcedoImage {
        let lib = session.lib, tif = session.handle
        let width = page.width, height = page.height
        // The samples read: one interleaved buffer, or the colour planes then alpha.
        let planeSamples: [Int] = page.separatePlanes
            ? Array(0..<page.colorSamples) + (page.alpha != .none ? [page.colorSamples] : []) : [0]
        let chunkSize = Int(page.tiled ? lib.TIFFTileSize64!(tif) : lib.TIFFStripSize64!(tif))
        let rowBytes = Int(page.tiled ? lib.TIFFTileRowSize64!(tif) : lib.TIFFScanlineSize64!(tif))
        guard chunkSize > 0, rowBytes > 0 else { throw session.error("libtiff cannot size a \(page.tiled ? "tile" : "strip")", inHeader: true) }
        if page.tiled {
            guard page.tileWidth > 0, page.tileHeight > 0 else { throw session.error("a tile of \(page.tileWidth)x\(page.tileHeight)", inHeader: true) }
        }
        let factor = options.boxShrinkFactor(width: width, height: height)
        let (chunksBytes, overflow) = chunkSize.multipliedReportingOverflow(by: planeSamples.count)
        let shrinkBytes = factor > 1 ? BoxShrinker.memory(width: width, height: height, factor: factor) : 0
        try options.limits.checkWorkingMemory(overflow ? -1 : chunksBytes + shrinkBytes,
                                              what: "one \(page.tiled ? "tile" : "strip") of \(chunkSize) bytes"
                                                  + (planeSamples.count > 1 ? " in each of \(planeSamples.count) planes" : ""),
                                              format: .tiff)

        let cmykPlan = page.model == .cmyk ? ColorPlan.forCMYK(iccData: page.iccProfile, inverted: false, mode: options.colorManagement) : nil
        // L*a*b* is device-independent: it becomes sRGB itself (a Lab profile is not an RGB one).
        let isLab = if case .lab = page.model { true } else { false }
        let rgbPlan = page.model == .cmyk || isLab ? ColorPlan.none
            : ColorPlan.forRGBA(iccData: page.iccProfile, mode: options.colorManagement, format: .tiff)
        let converter = TIFFSampleConverter(page: page, naiveCMYK: page.model == .cmyk && cmykPlan == nil)

        let shrinker: BoxShrinker? = factor > 1 ? BoxShrinker(width: width, height: height, factor: factor) : nil
        defer { shrinker?.deallocate() }
        let chunks = UnsafeMutableRawPointer.allocate(byteCount: max(1, chunksBytes), alignment: 16)
        defer { chunks.deallocate() }
        let outWidth = shrinker?.outWidth ?? width, outHeight = shrinker?.outHeight ?? height
        var sources = [UnsafeRawPointer](repeating: UnsafeRawPointer(chunks), count: planeSamples.count)

        var failure: AlcedoError?
        var pixels = [UInt8](unsafeUninitializedCapacity: outWidth * outHeight * 4) { buffer, initialized in
            guard let output = buffer.baseAddress else { return }
            initialized = buffer.count
            // Strips skipped under allowTruncated stay transparent.
            if shrinker == nil && options.allowTruncated { output.initialize(repeating: 0, count: buffer.count) }
            func segment(y: Int, x: Int, count: Int) {
                let target = shrinker?.row ?? output + (y * width + x) * 4
                sources.withUnsafeBufferPointer { converter.convert($0.baseAddress!, count: count, into: target) }
                if let cmykPlan {
                    cmykPlan.apply(to: UnsafeMutableBufferPointer(start: target, count: count * 4))
                    sources.withUnsafeBufferPointer { converter.writeAlpha($0.baseAddress!, count: count, into: target) }
                }
                shrinker?.add(y: y, x: x, dx: 1, count: count)
            }
            do throws(AlcedoError) {
                if page.tiled {
                    for ty in stride(from: 0, to: height, by: page.tileHeight) {
                        for tx in stride(from: 0, to: width, by: page.tileWidth) {
                            try deadline.check()
                            var present = true
                            for (k, sample) in planeSamples.enumerated() {
                                let index = lib.TIFFComputeTile!(tif, UInt32(tx), UInt32(ty), 0, UInt16(sample))
                                present = try read(index, into: chunks + k * chunkSize, chunkSize: chunkSize, tile: true) && present
                            }
                            guard present else { continue }
                            let rows = min(page.tileHeight, height - ty), count = min(page.tileWidth, width - tx)
                            for r in 0..<rows {
                                for k in planeSamples.indices { sources[k] = UnsafeRawPointer(chunks + k * chunkSize + r * rowBytes) }
                                segment(y: ty + r, x: tx, count: count)
                            }
                        }
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
                        var present = true
                        for (k, sample) in planeSamples.enumerated() {
                            let index = UInt32(s + (page.separatePlanes ? sample * stripsPerPlane : 0))
                            present = try read(index, into: chunks + k * chunkSize, chunkSize: chunkSize, tile: false) && present
                        }
                        guard present else { continue }
                        let first = s * rowsPerStrip, rows = min(rowsPerStrip, height - first)
                        for r in 0..<rows {
                            for k in planeSamples.indices { sources[k] = UnsafeRawPointer(chunks + k * chunkSize + r * rowBytes) }
                            segment(y: first + r, x: 0, count: width)
                        }
                    }
                }
                shrinker?.finish(into: output)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        rgbPlan.apply(to: &pixels)
        return AlcedoImage(width: outWidth, height: outHeight, pixels: pixels, sourceFormat: .tiff,
                           colorMetadata: cmykPlan?.metadata ?? rgbPlan.metadata)
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

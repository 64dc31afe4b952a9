import CTIFF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes the first frame of an image as an 8-bit RGB or RGBA TIFF with libtiff.
///
/// Opaque images are written as RGB, others as RGBA with unassociated (straight) alpha, in
/// strips of about 256 KiB, compressed with ``compression`` and the horizontal predictor.
/// An image whose pixels are in another profile (``ColorManagement/preserve``) carries that
/// ICC profile. Output past 4 GiB would need BigTIFF: such images are written as BigTIFF.
/// ``EncodingOptions/quality`` is ignored: the output is lossless. With
/// ``EncodingOptions/writesMetadata`` the image's XMP (tag 700) and IPTC (RichTIFFIPTC, 33723)
/// are written, as libvips' `tiffsave` does; its EXIF is not (see `TIFFMetadata.swift`).
public struct TIFFEncoder: ImageEncoding {
    /// The lossless compressions the encoder writes.
    public enum Compression: String, Sendable, Hashable, CaseIterable {
        /// LZW with the horizontal predictor: read by every TIFF reader.
        case lzw
        /// Deflate (zlib) with the horizontal predictor: smaller, read by current readers.
        case deflate
    }

    /// `.tiff`.
    public var format: ImageFormat { .tiff }

    /// The compression (default ``Compression/lzw``).
    public var compression: Compression

    /// Creates a TIFF encoder; `compression` defaults to LZW.
    public init(compression: Compression = .lzw) {
        self.compression = compression
    }

    /// Encodes the first frame of `image`.
    /// - Throws: `.encodingError(.libraryFailure)` when libtiff cannot be loaded or fails.
    public func encode(_ image: AlcedoImage, options: EncodingOptions = .default) throws(AlcedoError) -> Data {
        let lib: alcedo_tiff_api
        switch TIFFLibrary.functions() {
        case .failure(let failure): throw .encodingError(reason: .libraryFailure(format: .tiff, message: failure.message))
        case .success(let functions): lib = functions
        }
        let width = image.width, height = image.height
        let alpha = image.hasAlpha
        let channels = alpha ? 4 : 3
        let rowBytes = width * channels
        let big = width * height * channels > 0xF000_0000
        let file = UnsafeMutablePointer<alcedo_tiff_file>.allocate(capacity: 1)
        defer { file.deallocate() }
        func failure(_ fallback: String) -> AlcedoError {
            let message = file.pointee.messages.errors > 0
                ? withUnsafeBytes(of: file.pointee.messages.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) } : fallback
            return .encodingError(reason: .libraryFailure(format: .tiff, message: message))
        }
        guard alcedo_tiff_open_writer(file, big ? "w8" : "w") == 0, let tif = file.pointee.tiff else {
            throw failure("libtiff could not start a file")
        }
        var closed = false
        defer { if !closed { _ = alcedo_tiff_close(file, nil, nil) } }
        let rowsPerStrip = max(1, min(height, (256 << 10) / max(1, rowBytes)))
        var ok = alcedo_tiff_set_u32(tif, UInt32(TIFFTAG_IMAGEWIDTH), UInt32(width)) != 0
        ok = ok && alcedo_tiff_set_u32(tif, UInt32(TIFFTAG_IMAGELENGTH), UInt32(height)) != 0
        ok = ok && alcedo_tiff_set_u16(tif, UInt32(TIFFTAG_BITSPERSAMPLE), 8) != 0
        ok = ok && alcedo_tiff_set_u16(tif, UInt32(TIFFTAG_SAMPLESPERPIXEL), UInt16(channels)) != 0
        ok = ok && alcedo_tiff_set_u16(tif, UInt32(TIFFTAG_PHOTOMETRIC), UInt16(PHOTOMETRIC_RGB)) != 0
        ok = ok && alcedo_tiff_set_u16(tif, UInt32(TIFFTAG_PLANARCONFIG), UInt16(PLANARCONFIG_CONTIG)) != 0
        ok = ok && alcedo_tiff_set_u16(tif, UInt32(TIFFTAG_ORIENTATION), UInt16(ORIENTATION_TOPLEFT)) != 0
        ok = ok && alcedo_tiff_set_u16(tif, UInt32(TIFFTAG_COMPRESSION),
                                       UInt16(compression == .lzw ? COMPRESSION_LZW : COMPRESSION_ADOBE_DEFLATE)) != 0
        ok = ok && alcedo_tiff_set_u16(tif, UInt32(TIFFTAG_PREDICTOR), UInt16(PREDICTOR_HORIZONTAL)) != 0
        ok = ok && alcedo_tiff_set_u32(tif, UInt32(TIFFTAG_ROWSPERSTRIP), UInt32(rowsPerStrip)) != 0
        if alpha {
            var extra = UInt16(EXTRASAMPLE_UNASSALPHA)
            ok = ok && alcedo_tiff_set_extra_samples(tif, 1, &extra) != 0
        }
        if let profile = image.colorMetadata.pixelProfile {
            ok = ok && profile.data.withUnsafeBytes { alcedo_tiff_set_icc(tif, UInt32($0.count), $0.baseAddress) } != 0
        }
        ok = ok && alcedo_tiff_set_string(tif, UInt32(TIFFTAG_SOFTWARE), "Alcedo") != 0
        if options.writesMetadata, let metadata = image.metadata { ok = ok && Self.setMetadata(metadata, on: tif) }
        guard ok else { throw failure("libtiff refused a tag") }

        // Each strip is packed into its own buffer: the predictor works in place on it.
        let strip = UnsafeMutablePointer<UInt8>.allocate(capacity: rowsPerStrip * rowBytes)
        defer { strip.deallocate() }
        let pixels = image.pixels
        var written = true
        pixels.withUnsafeBufferPointer { rgba in
            var first = 0, index: UInt32 = 0
            while first < height && written {
                let rows = min(rowsPerStrip, height - first)
                let source = rgba.baseAddress! + first * width * 4
                if alpha {
                    strip.update(from: source, count: rows * rowBytes)
                } else {
                    for i in 0..<(rows * width) {
                        strip[i * 3] = source[i * 4]; strip[i * 3 + 1] = source[i * 4 + 1]; strip[i * 3 + 2] = source[i * 4 + 2]
                    }
                }
                written = lib.TIFFWriteEncodedStrip!(tif, index, strip, tmsize_t(rows * rowBytes)) >= 0
                first += rows
                index += 1
            }
        }
        guard written else { throw failure("libtiff could not write a strip") }
        var bytes: UnsafeMutablePointer<UInt8>?
        var count: UInt64 = 0
        closed = true
        guard alcedo_tiff_close(file, &bytes, &count) == 0, let bytes else { throw failure("libtiff could not finish the file") }
        return Data(bytesNoCopy: bytes, count: Int(count), deallocator: .free)
    }
}

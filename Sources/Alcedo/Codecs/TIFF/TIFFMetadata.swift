import CTIFF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The XMP packet (tag 700) and IPTC block (RichTIFFIPTC, 33723) of a TIFF page, as libvips'
/// `tiffload` and `tiffsave` handle them. EXIF is neither read nor written: in a TIFF it is a
/// sub-IFD of the file itself (tag 34665), not a block that can be carried over, and libvips
/// leaves it too.
extension TIFFReadSession {
    /// The current page's XMP and IPTC, each up to ``EmbeddedMetadata/maxBlockBytes``.
    var metadata: EmbeddedMetadata {
        func block(_ tag: Int32) -> UnsafeRawBufferPointer? {
            var count: UInt32 = 0
            var bytes: UnsafeRawPointer?
            guard alcedo_tiff_get_bytes(handle, UInt32(tag), &count, &bytes) != 0, let bytes,
                  count > 0, Int(count) <= EmbeddedMetadata.maxBlockBytes else { return nil }
            return UnsafeRawBufferPointer(start: bytes, count: Int(count))
        }
        return EmbeddedMetadata(xmp: block(TIFFTAG_XMLPACKET).map { Data($0) },
                                iptc: block(TIFFTAG_RICHTIFFIPTC).flatMap(EmbeddedMetadata.iptcDatasets))
    }

    /// The first page's metadata of the TIFF file `data` (empty when libtiff cannot open it).
    static func metadata(_ data: Data) -> EmbeddedMetadata {
        let read = data.withUnsafeBytes { raw in
            try? with(raw, maxSingleAllocation: DecodingLimits.default.maxWorkingMemory) { $0.metadata }
        }
        return read ?? EmbeddedMetadata()
    }
}

extension TIFFEncoder {
    /// Sets the XMP and IPTC tags of the page being written; `false` when libtiff refuses one.
    static func setMetadata(_ metadata: EmbeddedMetadata, on tiff: OpaquePointer) -> Bool {
        var ok = true
        if let xmp = metadata.xmp {
            ok = xmp.withUnsafeBytes { alcedo_tiff_set_bytes(tiff, UInt32(TIFFTAG_XMLPACKET), UInt32($0.count), $0.baseAddress) } != 0
        }
        if let iptc = metadata.iptc {
            // libtiff counts the block in 32-bit words: padded with zeros to a whole word.
            let padded = iptc + Data(count: (4 - iptc.count % 4) % 4)
            ok = ok && padded.withUnsafeBytes { alcedo_tiff_set_bytes(tiff, UInt32(TIFFTAG_RICHTIFFIPTC), UInt32($0.count), $0.baseAddress) } != 0
        }
        return ok
    }
}

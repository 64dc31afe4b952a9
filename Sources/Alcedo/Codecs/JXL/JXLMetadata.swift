import CJXL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `Exif` and `xml ` (XMP) boxes of a JPEG XL container, as libvips' `jxlload` and
/// `jxlsave` handle them. An `Exif` box starts with a 4-byte offset to the TIFF header, dropped
/// on reading and written as 0. JPEG XL has no place for IPTC.
enum JXLMetadata {
    /// The first `Exif` and `xml ` boxes of `data`. Plain boxes are read in place by walking
    /// the box headers; Brotli-compressed (`brob`) ones, as `cjxl` writes them, through
    /// libjxl's box events, which skip the codestream without decoding it. A bare codestream
    /// has none. Boxes over ``EmbeddedMetadata/maxBlockBytes`` are left out.
    static func read(_ data: Data) -> EmbeddedMetadata {
        var metadata = EmbeddedMetadata()
        var compressed = false
        data.withUnsafeBytes { raw in
            for box in JXLContainer.boxes(raw) where box.contents.count <= EmbeddedMetadata.maxBlockBytes + 4 {
                let contents = UnsafeRawBufferPointer(rebasing: raw[box.contents])
                switch box.type {
                case "Exif" where metadata.exif == nil: metadata.exif = EmbeddedMetadata.exif(afterHeaderOffset: contents)
                case "xml " where metadata.xmp == nil: metadata.xmp = Data(contents)
                case "brob": compressed = compressed || contents.starts(with: Array("Exif".utf8)) || contents.starts(with: Array("xml ".utf8))
                default: break
                }
            }
        }
        guard compressed, metadata.exif == nil || metadata.xmp == nil else { return metadata }
        let unpacked = decompressedBoxes(data)
        return EmbeddedMetadata(exif: metadata.exif ?? unpacked.exif, xmp: metadata.xmp ?? unpacked.xmp)
    }

    /// The `Exif` and `xml ` boxes through libjxl, decompressed (empty when libjxl is missing
    /// or stops on an error: what came before is kept).
    private static func decompressedBoxes(_ data: Data) -> EmbeddedMetadata {
        guard let lib = try? JXLLibrary.functions(orThrow: { _ in AlcedoError.decodingError(reason: .emptyData) }),
              let decoder = lib.JxlDecoderCreate!(nil) else { return EmbeddedMetadata() }
        defer { lib.JxlDecoderDestroy!(decoder) }
        var metadata = EmbeddedMetadata()
        guard lib.JxlDecoderSubscribeEvents!(decoder, Int32(JXL_DEC_BOX.rawValue)) == JXL_DEC_SUCCESS,
              lib.JxlDecoderSetDecompressBoxes!(decoder, 1) == JXL_DEC_SUCCESS else { return metadata }
        // The box being kept goes into `buffer` (libjxl writes it there until released).
        var buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 1)
        defer { buffer.deallocate() }
        var current: String?
        /// Files the box being read, if it was one to keep.
        func finish() {
            guard let type = current else { return }
            let contents = UnsafeRawBufferPointer(rebasing: buffer[..<(buffer.count - lib.JxlDecoderReleaseBoxBuffer!(decoder))])
            if type == "Exif" { metadata.exif = EmbeddedMetadata.exif(afterHeaderOffset: contents) }
            if type == "xml " { metadata.xmp = Data(contents) }
            current = nil
        }
        func setBuffer(from offset: Int) -> Bool {
            lib.JxlDecoderSetBoxBuffer!(decoder, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset,
                                        buffer.count - offset) == JXL_DEC_SUCCESS
        }
        data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self),
                  lib.JxlDecoderSetInput!(decoder, base, raw.count) == JXL_DEC_SUCCESS else { return }
            lib.JxlDecoderCloseInput!(decoder)
            loop: while true {
                switch lib.JxlDecoderProcessInput!(decoder) {
                case JXL_DEC_BOX:
                    finish()
                    var type = [CChar](repeating: 0, count: 4)
                    guard lib.JxlDecoderGetBoxType!(decoder, &type, 1) == JXL_DEC_SUCCESS else { break loop }
                    let name = String(decoding: type.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    guard (name == "Exif" && metadata.exif == nil) || (name == "xml " && metadata.xmp == nil) else { continue }
                    current = name
                    guard setBuffer(from: 0) else { break loop }
                case JXL_DEC_BOX_NEED_MORE_OUTPUT:
                    let written = buffer.count - lib.JxlDecoderReleaseBoxBuffer!(decoder)
                    guard buffer.count < EmbeddedMetadata.maxBlockBytes + 4 else { current = nil; break loop }
                    let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: buffer.count * 2, alignment: 1)
                    larger.copyMemory(from: UnsafeRawBufferPointer(buffer))
                    buffer.deallocate()
                    buffer = larger
                    guard setBuffer(from: written) else { break loop }
                case JXL_DEC_SUCCESS:
                    finish()
                    break loop
                default:
                    current = nil  // an error or a cut file: the box being read is incomplete
                    break loop
                }
            }
        }
        return metadata
    }
}

import CHEIF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// EXIF and XMP items of a HEIF file (HEIC, or AVIF read through libheif), as libvips'
/// `heifload` and `heifsave` handle them: the `Exif` item (its 4-byte offset to the TIFF
/// header dropped on reading, added by libheif on writing) and the `mime` item typed
/// `application/rdf+xml`. HEIF has no place for IPTC.
extension HEIFSession {
    static let xmpContentType = "application/rdf+xml"

    /// The metadata items `handle` (a primary image) refers to; each read once, the first of
    /// its kind, and only when at most ``EmbeddedMetadata/maxBlockBytes`` long.
    static func metadata(of handle: OpaquePointer, lib: alcedo_heif_api) -> EmbeddedMetadata {
        var metadata = EmbeddedMetadata()
        let count = Int(lib.heif_image_handle_get_number_of_metadata_blocks!(handle, nil))
        guard count > 0 else { return metadata }
        var ids = [heif_item_id](repeating: 0, count: min(count, 64))
        let listed = Int(lib.heif_image_handle_get_list_of_metadata_block_IDs!(handle, nil, &ids, Int32(ids.count)))
        for id in ids.prefix(listed) {
            let size = lib.heif_image_handle_get_metadata_size!(handle, id)
            guard size > 0, size <= EmbeddedMetadata.maxBlockBytes + 4 else { continue }
            let type = lib.heif_image_handle_get_metadata_type!(handle, id).map { String(cString: $0) } ?? ""
            let contentType = lib.heif_image_handle_get_metadata_content_type!(handle, id).map { String(cString: $0) } ?? ""
            let isExif = type == "Exif" && metadata.exif == nil
            let isXMP = type == "mime" && contentType == xmpContentType && metadata.xmp == nil
            guard isExif || isXMP else { continue }
            var block = Data(count: size)
            let status = block.withUnsafeMutableBytes { lib.heif_image_handle_get_metadata!(handle, id, $0.baseAddress) }
            guard status.code == heif_error_Ok else { continue }
            if isExif {
                metadata.exif = block.withUnsafeBytes(EmbeddedMetadata.exif(afterHeaderOffset:))
            } else {
                metadata.xmp = block
            }
        }
        return metadata
    }

    /// The metadata of the HEIF file `data` (empty when libheif cannot read its header).
    static func metadata(_ data: Data, format: ImageFormat) -> EmbeddedMetadata {
        (try? with(data, format: format) { handle, lib in metadata(of: handle, lib: lib) }) ?? EmbeddedMetadata()
    }

    /// Adds `metadata`'s EXIF and XMP as items of `image` in `context`; a block libheif
    /// refuses (EXIF without a TIFF header) is left out.
    static func add(_ metadata: EmbeddedMetadata, to context: OpaquePointer, image: OpaquePointer, lib: alcedo_heif_api) {
        if let exif = metadata.exif {
            _ = exif.withUnsafeBytes { lib.heif_context_add_exif_metadata!(context, image, $0.baseAddress, Int32(clamping: $0.count)) }
        }
        if let xmp = metadata.xmp {
            _ = xmp.withUnsafeBytes { lib.heif_context_add_XMP_metadata!(context, image, $0.baseAddress, Int32(clamping: $0.count)) }
        }
    }
}

import CHEIF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes HEIC and HEIF files with libheif (libde265 for HEVC, dav1d/libaom for AV1 items).
///
/// - **What is decoded**: the primary image, with its alpha auxiliary image when there is
///   one; grid (tiled) images, as phones write them, are assembled by libheif. Image
///   sequences decode as their primary image.
/// - **Pixels**: 8 and 10-bit (and deeper) images are converted by libheif to RGBA8, deeper
///   samples reduced to 8 bits; without alpha, alpha is 255. Premultiplied alpha is handed
///   back as stored.
/// - **Transforms**: `irot`, `imir` and `clap` are applied by libheif when
///   ``DecodingOptions/appliesOrientation`` is set (the default); with it off the picture is
///   as stored. ``AlcedoImage/orientation`` stays `.up` (libheif does not report which
///   transforms it applied).
/// - **Colour**: an ICC profile (`prof`/`rICC`) goes through ``DecodingOptions/colorManagement``.
/// - **Limits**: every size the file declares (the primary item's `ispe` and, for a grid, the
///   output size of its `ImageGrid`, which libheif allocates before decoding the first tile) is
///   checked against ``DecodingOptions/limits`` before libheif reads the file. Derived images
///   whose `dimg` references loop back (which overflow libheif 1.15's stack) and grids whose
///   tiles leave part of the output unwritten (uninitialised in libheif's canvas) are refused,
///   as are grids whose `ispe` size disagrees with their `ImageGrid` (libheif would report one
///   size and decode the other): ``info(for:options:)`` refuses them with the same error.
///   libheif decodes into its own buffer, which is copied once.
///   ``DecodingOptions/targetSize`` is ignored (no scaled decode).
/// - **Metadata**: with ``DecodingOptions/readsMetadata``, the primary image's `Exif` item and
///   XMP (`mime` item typed `application/rdf+xml`) go to ``AlcedoImage/metadata``, read from
///   the container libheif already parsed for decoding.
/// - **Thumbnails**: with ``DecodingOptions/prefersEmbeddedThumbnail`` the first thumbnail the
///   file stores for its primary image (`thmb`) is decoded instead, as libvips' `heifload`
///   with `thumbnail` does; a file without one decodes its primary image.
public struct HEIFDecoder: ImageDecoding {
    /// The format this value is registered for: ``ImageFormat/heic`` (default) or ``ImageFormat/heif``.
    public let format: ImageFormat

    /// Creates a HEIF decoder registered for `format` (`.heic` or `.heif`; default `.heic`).
    public init(format: ImageFormat = .heic) {
        self.format = format
    }

    /// Reads size, alpha and the colour profile of the primary image without decoding it.
    ///
    /// The size is the one ``decode(_:options:)`` gives with the same options; a file that
    /// decode refuses from its boxes alone (a grid whose `ispe` and `ImageGrid` sizes
    /// disagree, `dimg` cycles, uncovered grids) is refused here with the same error. The
    /// decoding limits are not applied: the size of an image too large to decode is reported.
    /// - Throws: `.decodingError` with `.emptyData`, `.invalidHeader`, `.truncated` or
    ///   `.unsupportedFeature`.
    public func info(for data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> ImageInfo {
        try HEIFPreflight.check(data, limits: nil, format: format)
        return try HEIFSession.with(data, format: format, thumbnail: options.prefersEmbeddedThumbnail) { handle, lib throws(AlcedoError) in
            let (width, height) = HEIFSession.size(of: handle, lib: lib, appliesOrientation: options.appliesOrientation)
            var info = ImageInfo(format: format, width: width, height: height,
                                 hasAlpha: lib.heif_image_handle_has_alpha_channel!(handle) != 0)
            if options.colorManagement != .ignore {
                info.colorProfile = HEIFSession.iccProfile(of: handle, lib: lib).flatMap { ImageColorProfile(iccData: $0) }
            }
            return info
        }
    }

    /// Decodes the primary image.
    /// - Throws: `.decodingError` with `.emptyData`, `.invalidHeader`, `.corrupt`,
    ///   `.truncated`, `.unsupportedFeature` or `.tooManyPixels`.
    public func decode(_ data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> AlcedoImage {
        let format = self.format
        // A grid's canvas is sized by its ImageGrid, which libheif allocates before the first tile.
        try HEIFPreflight.check(data, limits: options.limits, format: format)
        return try HEIFSession.with(data, format: format, thumbnail: options.prefersEmbeddedThumbnail) { handle, lib throws(AlcedoError) in
            let (width, height) = HEIFSession.size(of: handle, lib: lib, appliesOrientation: options.appliesOrientation)
            try options.limits.check(width: lib.heif_image_handle_get_ispe_width!(handle) > 0 ? Int(lib.heif_image_handle_get_ispe_width!(handle)) : width,
                                     height: lib.heif_image_handle_get_ispe_height!(handle) > 0 ? Int(lib.heif_image_handle_get_ispe_height!(handle)) : height,
                                     format: format)
            try options.limits.check(width: width, height: height, format: format)
            let plan = ColorPlan.forRGBA(iccData: HEIFSession.iccProfile(of: handle, lib: lib), mode: options.colorManagement, format: format)
            guard let decodingOptions = lib.heif_decoding_options_alloc!() else {
                throw .decodingError(reason: .corrupt(format: format, message: "libheif could not allocate decoding options"))
            }
            defer { lib.heif_decoding_options_free!(decodingOptions) }
            decodingOptions.pointee.ignore_transformations = options.appliesOrientation ? 0 : 1
            decodingOptions.pointee.convert_hdr_to_8bit = 1
            var image: OpaquePointer?
            let status = lib.heif_decode_image!(handle, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGBA, decodingOptions)
            guard status.code == heif_error_Ok, let image else { throw HEIFSession.error(status, format: format, inHeader: false) }
            defer { lib.heif_image_release!(image) }
            let outWidth = Int(lib.heif_image_get_width!(image, heif_channel_interleaved))
            let outHeight = Int(lib.heif_image_get_height!(image, heif_channel_interleaved))
            try options.limits.check(width: outWidth, height: outHeight, format: format)
            var stride: Int32 = 0
            guard let plane = lib.heif_image_get_plane_readonly!(image, heif_channel_interleaved, &stride),
                  Int(stride) >= outWidth * 4 else {
                throw .decodingError(reason: .corrupt(format: format, message: "libheif returned no RGBA plane"))
            }
            let rowBytes = outWidth * 4
            var pixels = [UInt8](unsafeUninitializedCapacity: rowBytes * outHeight) { buffer, initialized in
                for y in 0..<outHeight {
                    (buffer.baseAddress! + y * rowBytes).update(from: plane + y * Int(stride), count: rowBytes)
                }
                initialized = buffer.count
            }
            plan.apply(to: &pixels)
            var decoded = AlcedoImage(width: outWidth, height: outHeight, pixels: pixels, sourceFormat: format,
                                      colorMetadata: plan.metadata)
            // A thumbnail's handle has no metadata of its own: the registry reads the primary's.
            if options.readsMetadata && !options.prefersEmbeddedThumbnail {
                decoded.metadata = HEIFSession.metadata(of: handle, lib: lib)
            }
            return decoded
        }
    }
}

extension HEIFDecoder {
    /// The first thumbnail `data` stores, decoded by libheif; `nil` when the file has none or
    /// libheif cannot read it (an AVIF file then decodes its main image through libavif).
    static func embeddedThumbnail(_ data: Data, format: ImageFormat, options: DecodingOptions) -> AlcedoImage? {
        let hasOne = try? HEIFSession.with(data, format: format) { handle, lib in
            lib.heif_image_handle_get_number_of_thumbnails!(handle) > 0
        }
        guard hasOne == true else { return nil }
        var thumbnailOptions = options
        thumbnailOptions.prefersEmbeddedThumbnail = true
        return try? HEIFDecoder(format: format).decode(data, options: thumbnailOptions)
    }
}

/// libheif, loaded on first use (see `CHEIF.h`): a process that never decodes HEIF does not
/// pay for loading it and the HEVC and AV1 libraries it brings.
enum HEIFLibrary {
    private static let table: Result<alcedo_heif_api, DynamicLibraryFailure> = {
        guard let table = alcedo_heif_load() else {
            return .failure(DynamicLibraryFailure(message: alcedo_heif_load_error().map { String(cString: $0) } ?? "libheif could not be loaded"))
        }
        return .success(table.pointee)
    }()

    /// The function table, or `.unsupportedFeature` naming why libheif could not be loaded.
    static func functions(format: ImageFormat) throws(AlcedoError) -> alcedo_heif_api {
        switch table {
        case .success(let functions): return functions
        case .failure(let failure): throw .decodingError(reason: .unsupportedFeature(format: format, message: failure.message))
        }
    }
}

/// Why a codec library loaded on first use could not be loaded.
struct DynamicLibraryFailure: Error {
    let message: String
}

/// One libheif context over the bytes of a file, alive for the duration of a closure.
enum HEIFSession {
    /// Runs `body` with the primary image's handle, or with `thumbnail` its first thumbnail's
    /// when it has one.
    static func with<T>(_ data: Data, format: ImageFormat, thumbnail: Bool = false,
                        _ body: (OpaquePointer, alcedo_heif_api) throws(AlcedoError) -> T) throws(AlcedoError) -> T {
        guard !data.isEmpty else { throw .decodingError(reason: .emptyData) }
        let lib = try HEIFLibrary.functions(format: format)
        guard let context = lib.heif_context_alloc!() else {
            throw .decodingError(reason: .corrupt(format: format, message: "libheif could not allocate a context"))
        }
        defer { lib.heif_context_free!(context) }
        let result = data.withUnsafeBytes { raw -> Result<T, AlcedoError> in
            var status = lib.heif_context_read_from_memory_without_copy!(context, raw.baseAddress, raw.count, nil)
            guard status.code == heif_error_Ok else { return .failure(error(status, format: format, inHeader: true)) }
            var handle: OpaquePointer?
            status = lib.heif_context_get_primary_image_handle!(context, &handle)
            guard status.code == heif_error_Ok, let handle else { return .failure(error(status, format: format, inHeader: true)) }
            defer { lib.heif_image_handle_release!(handle) }
            let thumbnailHandle = thumbnail ? firstThumbnail(of: handle, lib: lib) : nil
            defer { if let thumbnailHandle { lib.heif_image_handle_release!(thumbnailHandle) } }
            do throws(AlcedoError) {
                return .success(try body(thumbnailHandle ?? handle, lib))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The handle of the first thumbnail of `handle`, or `nil` when it has none (or it does not read).
    static func firstThumbnail(of handle: OpaquePointer, lib: alcedo_heif_api) -> OpaquePointer? {
        guard lib.heif_image_handle_get_number_of_thumbnails!(handle) > 0 else { return nil }
        var id: heif_item_id = 0
        guard lib.heif_image_handle_get_list_of_thumbnail_IDs!(handle, &id, 1) == 1 else { return nil }
        var thumbnail: OpaquePointer?
        let status = lib.heif_image_handle_get_thumbnail!(handle, id, &thumbnail)
        return status.code == heif_error_Ok ? thumbnail : nil
    }

    /// The size after transformations (libheif's handle size), or the stored (`ispe`) size.
    static func size(of handle: OpaquePointer, lib: alcedo_heif_api, appliesOrientation: Bool) -> (Int, Int) {
        let width = Int(lib.heif_image_handle_get_width!(handle)), height = Int(lib.heif_image_handle_get_height!(handle))
        guard !appliesOrientation else { return (width, height) }
        let ispeWidth = Int(lib.heif_image_handle_get_ispe_width!(handle)), ispeHeight = Int(lib.heif_image_handle_get_ispe_height!(handle))
        return ispeWidth > 0 && ispeHeight > 0 ? (ispeWidth, ispeHeight) : (width, height)
    }

    /// The ICC profile of the image, if it has one.
    static func iccProfile(of handle: OpaquePointer, lib: alcedo_heif_api) -> Data? {
        let type = lib.heif_image_handle_get_color_profile_type!(handle)
        guard type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC else { return nil }
        let size = lib.heif_image_handle_get_raw_color_profile_size!(handle)
        guard size > 0, size <= EmbeddedProfileReader.maxProfileBytes else { return nil }
        var data = Data(count: size)
        let status = data.withUnsafeMutableBytes { lib.heif_image_handle_get_raw_color_profile!(handle, $0.baseAddress) }
        return status.code == heif_error_Ok ? data : nil
    }

    static func error(_ status: heif_error, format: ImageFormat, inHeader: Bool) -> AlcedoError {
        let message = status.message.map { String(cString: $0) } ?? "libheif error \(status.code.rawValue)"
        if status.subcode == heif_suberror_End_of_data {
            return .decodingError(reason: .truncated(format: format, message: message))
        }
        switch status.code {
        case heif_error_Unsupported_feature, heif_error_Unsupported_filetype:
            return .decodingError(reason: .unsupportedFeature(format: format, message: message))
        default:
            return .decodingError(reason: inHeader ? .invalidHeader(format: format, message: message)
                                                   : .corrupt(format: format, message: message))
        }
    }
}

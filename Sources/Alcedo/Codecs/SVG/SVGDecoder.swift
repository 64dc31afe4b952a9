import CRSVG
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Rasterises SVG with librsvg (2.52 or later; Debian 12 has 2.54) and cairo.
///
/// - **Size**: the render is made at the size the request needs: with
///   ``DecodingOptions/targetSize`` set, librsvg draws straight at the intrinsic size scaled by
///   ``DecodingOptions/minimumScale(forWidth:height:)`` (never above the intrinsic size,
///   like every decoder), so a thumbnail of a large drawing costs a thumbnail's pixels. The
///   intrinsic size is the root element's `width` and `height` in absolute units (at 96 dpi),
///   else its `viewBox` size in user units, else ``defaultSize``.
/// - **Pixels**: RGBA8 with straight alpha; what the drawing leaves uncovered is transparent.
///   Colours are sRGB, as SVG's are. ``AlcedoImage/orientation`` is `.up`.
/// - **Nothing is fetched**: the document is read from memory with no base URL, and librsvg
///   then refuses every external reference (`http:`, `https:`, `file:` and relative ones) in
///   `<image>`, `<use>`, stylesheets and fonts; only `data:` URLs inside the document are read.
///   XML external entities and DTDs are not loaded.
/// - **Limits**: the rendered size is checked against ``DecodingOptions/limits`` before the
///   canvas is allocated, and cairo draws at most 32,767 pixels a side. Before drawing, the
///   cost of the render is estimated from the document's text (elements, each filter use's
///   region times its primitives' cost, output pixels: see `SVGCostEstimate`): an estimate over
///   ``DecodingLimits/decodingTimeout`` is `.tooComplex`, and filter surfaces over
///   ``DecodingLimits/maxWorkingMemory`` are `.workingMemoryTooLarge`, both at once. librsvg bounds the
///   rest itself (entities declared in the document may add at most 1 MiB of text, checked
///   before libxml2 expands them: `.workingMemoryTooLarge`): at most 1,000,000 elements loaded and 500,000 referenced while rendering
///   (`<use>` bombs), libxml2's entity-amplification check (billion laughs), and an error
///   for reference cycles. librsvg cannot be interrupted while it draws, and a small document
///   can ask for hours of drawing (full-canvas blurs by the thousand, `feTurbulence` with a huge
///   `numOctaves`): the render runs on a thread of its own whose CPU time the decoding thread
///   watches (with the process's CPU time spread over the cores, which counts the worker
///   threads librsvg runs filters on), and past ``DecodingLimits/decodingTimeout`` the decode ends with `.timedOut` at
///   once while the abandoned render finishes on its own and frees what it holds: its canvas,
///   its filter surfaces and the parsed document, counted meanwhile in
///   ``DecodingOptions/abandonedWorkBudget`` when one is set (the decode's own reservation and
///   processing place are given back when it returns). At most one
///   abandoned render per core may be drawing at a time; past that, a new render waits for one
///   to end, at most the budget's length, and is refused after it (`.unsupportedFeature`), so
///   hostile documents cannot pile up CPU or memory.
public struct SVGDecoder: ImageDecoding {
    /// Always ``ImageFormat/svg``.
    public var format: ImageFormat { .svg }

    /// The size of an SVG that states neither an absolute size nor a `viewBox`
    /// (default 300x150, the size CSS gives such a replaced element).
    public let defaultSize: PixelSize

    /// Creates an SVG decoder; `defaultSize` (default 300x150) sizes documents that state none.
    public init(defaultSize: PixelSize = PixelSize(width: 300, height: 150)) {
        self.defaultSize = defaultSize
    }

    /// Parses the document and reports its intrinsic size (see the type's notes); it is
    /// not rendered, and the decoding limits are not applied.
    /// - Throws: `.decodingError` with `.emptyData` or `.invalidHeader` (not an SVG librsvg can read).
    public func info(for data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> ImageInfo {
        try SVGDocument.with(data) { document throws(AlcedoError) in
            let size = try document.intrinsicSize(default: defaultSize)
            var info = ImageInfo(format: .svg, width: size.width, height: size.height, hasAlpha: true)
            info.bitDepth = 8
            info.compression = "vector"
            return info
        }
    }

    /// Renders the document at the size the options ask for.
    /// - Throws: `.decodingError` with `.emptyData`, `.invalidHeader` (unreadable document),
    ///   `.corrupt` (librsvg or cairo could not render), `.tooManyPixels`, `.unsupportedFeature`
    ///   (over cairo's 32,767 pixels a side), `.tooComplex` or `.workingMemoryTooLarge` (by the
    ///   estimate, before drawing) or `.timedOut`.
    public func decode(_ data: Data, options: DecodingOptions = .default) throws(AlcedoError) -> AlcedoImage {
        let deadline = options.limits.startDeadline(format: .svg)
        return try SVGDocument.with(data) { document throws(AlcedoError) in
            let intrinsic = try document.intrinsicSize(default: defaultSize)
            let size = Self.renderSize(intrinsic: intrinsic, options: options)
            try options.limits.check(width: size.width, height: size.height, format: .svg)
            let estimate = SVGCostEstimate(data, canvas: size)
            try estimate.check(options.limits, size: size)
            let held = size.width * size.height * 4 + estimate.filterMemory
            let pixels = try SVGRenderJob.render(document, size: size, deadline: deadline,
                                                 abandonedHold: options.abandonedWorkBudget.map { ($0, held) })
            return AlcedoImage(width: size.width, height: size.height, pixels: pixels, sourceFormat: .svg)
        }
    }

    /// The size a decode with `options` renders at: `intrinsic` scaled by the options'
    /// minimum scale, each side at least 1 pixel.
    static func renderSize(intrinsic: PixelSize, options: DecodingOptions) -> PixelSize {
        let scale = options.minimumScale(forWidth: intrinsic.width, height: intrinsic.height)
        guard scale < 1 else { return intrinsic }
        return PixelSize(width: max(1, Int((Double(intrinsic.width) * scale).rounded())),
                         height: max(1, Int((Double(intrinsic.height) * scale).rounded())))
    }
}

/// librsvg, loaded on first use (see `CRSVG.h`): a process that never reads SVG does not pay
/// for loading it and the libraries it brings.
enum RSVGLibrary {
    private static let table: Result<alcedo_rsvg_api, DynamicLibraryFailure> = {
        guard let table = alcedo_rsvg_load() else {
            return .failure(DynamicLibraryFailure(message: alcedo_rsvg_load_error().map { String(cString: $0) } ?? "librsvg could not be loaded"))
        }
        return .success(table.pointee)
    }()

    /// The function table, or `.unsupportedFeature` naming why librsvg could not be loaded.
    static func functions() throws(AlcedoError) -> alcedo_rsvg_api {
        switch table {
        case .success(let functions): return functions
        case .failure(let failure): throw .decodingError(reason: .unsupportedFeature(format: .svg, message: failure.message))
        }
    }

    /// The version of librsvg loaded ("2.54.7"), or `nil` when it cannot be loaded.
    static var version: String? {
        guard case .success = table, let text = alcedo_rsvg_version() else { return nil }
        let version = String(cString: text)
        return version.isEmpty ? nil : version
    }
}

/// One parsed SVG document (an `RsvgHandle`), alive for the duration of a closure.
struct SVGDocument {
    let lib: alcedo_rsvg_api
    let handle: OpaquePointer

    /// The largest side cairo's image surfaces take.
    static let maximumSide = 32_767

    static func with<T>(_ data: Data, _ body: (SVGDocument) throws(AlcedoError) -> T) throws(AlcedoError) -> T {
        guard !data.isEmpty else { throw .decodingError(reason: .emptyData) }
        try SVGEntityBudget.check(data)
        let lib = try RSVGLibrary.functions()
        var error: UnsafeMutablePointer<alcedo_gerror>?
        let handle = data.withUnsafeBytes { raw in
            lib.rsvg_handle_new_from_data(raw.baseAddress!.assumingMemoryBound(to: UInt8.self), raw.count, &error)
        }
        guard let handle else {
            let message = take(error, lib: lib) ?? "librsvg could not read the document"
            throw .decodingError(reason: .invalidHeader(format: .svg, message: message))
        }
        let document = SVGDocument(lib: lib, handle: handle)
        defer { lib.g_object_unref(UnsafeMutableRawPointer(handle)) }
        lib.rsvg_handle_set_dpi(handle, 96)
        return try body(document)
    }

    /// The message of a GError, which is freed.
    static func take(_ error: UnsafeMutablePointer<alcedo_gerror>?, lib: alcedo_rsvg_api) -> String? {
        guard let error else { return nil }
        defer { lib.g_error_free(error) }
        return error.pointee.message.map { String(cString: $0) }
    }

    private var rawHandle: OpaquePointer { handle }

    /// The root element's size in pixels: absolute `width`/`height`, else the `viewBox`,
    /// else `fallback`. Sides round up to whole pixels, as `rsvg-convert` sizes its output.
    func intrinsicSize(default fallback: PixelSize) throws(AlcedoError) -> PixelSize {
        var width = 0.0, height = 0.0
        if lib.rsvg_handle_get_intrinsic_size_in_pixels(rawHandle, &width, &height) == 0 {
            var hasWidth: Int32 = 0, hasHeight: Int32 = 0, hasViewBox: Int32 = 0
            var w = alcedo_rsvg_length(), h = alcedo_rsvg_length(), viewBox = alcedo_rsvg_rectangle()
            lib.rsvg_handle_get_intrinsic_dimensions(rawHandle, &hasWidth, &w, &hasHeight, &h, &hasViewBox, &viewBox)
            if hasViewBox != 0, viewBox.width > 0, viewBox.height > 0 {
                (width, height) = (viewBox.width, viewBox.height)
            } else {
                (width, height) = (Double(fallback.width), Double(fallback.height))
            }
        }
        guard width.isFinite, height.isFinite, width > 0, height > 0 else {
            throw .decodingError(reason: .invalidHeader(format: .svg, message: "the document's size \(width)x\(height) is not positive"))
        }
        // Sizes past Int32 are reported as Int32.max: no render of them is possible anyway.
        func side(_ value: Double) -> Int { Int(min(Double(Int32.max), (value - 1e-6).rounded(.up))) }
        return PixelSize(width: max(1, side(width)), height: max(1, side(height)))
    }

    /// Draws the whole document into a `size` canvas (the document fitted by its
    /// `preserveAspectRatio`), returned as RGBA8 with straight alpha.
    func render(size: PixelSize) throws(AlcedoError) -> [UInt8] {
        guard size.width <= Self.maximumSide, size.height <= Self.maximumSide else {
            throw .decodingError(reason: .unsupportedFeature(
                format: .svg, message: "\(size.width)x\(size.height) is over cairo's \(Self.maximumSide) pixels a side"))
        }
        let stride = size.width * 4
        var failure: AlcedoError?
        var pixels = [UInt8](repeating: 0, count: stride * size.height)
        pixels.withUnsafeMutableBytes { raw in
            let base = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            guard let surface = lib.cairo_image_surface_create_for_data(base, ALCEDO_CAIRO_FORMAT_ARGB32, Int32(size.width),
                                                                        Int32(size.height), Int32(stride)) else {
                failure = .decodingError(reason: .corrupt(format: .svg, message: "cairo could not make a surface"))
                return
            }
            defer { lib.cairo_surface_destroy(surface) }
            let surfaceStatus = lib.cairo_surface_status(surface)
            guard surfaceStatus == 0, let cairo = lib.cairo_create(surface) else {
                failure = .decodingError(reason: .corrupt(format: .svg, message: "cairo could not make a \(size.width)x\(size.height) surface: "
                                                          + (lib.cairo_status_to_string(surfaceStatus).map { String(cString: $0) } ?? "status \(surfaceStatus)")))
                return
            }
            defer { lib.cairo_destroy(cairo) }
            var viewport = alcedo_rsvg_rectangle(x: 0, y: 0, width: Double(size.width), height: Double(size.height))
            var error: UnsafeMutablePointer<alcedo_gerror>?
            if lib.rsvg_handle_render_document(rawHandle, cairo, &viewport, &error) == 0 {
                let message = Self.take(error, lib: lib) ?? "librsvg could not render the document"
                failure = .decodingError(reason: .corrupt(format: .svg, message: message))
                return
            }
            lib.cairo_surface_flush(surface)
        }
        if let failure { throw failure }
        Self.straightRGBA(fromPremultipliedNativeARGB: &pixels)
        return pixels
    }

    /// Turns cairo's ARGB32 (premultiplied, native-endian 32-bit words: B, G, R, A bytes on a
    /// little-endian machine) into RGBA8 with straight alpha, in place.
    static func straightRGBA(fromPremultipliedNativeARGB pixels: inout [UInt8]) {
        pixels.withUnsafeMutableBytes { raw in
            let words = raw.bindMemory(to: UInt32.self)
            for index in words.indices {
                let word = words[index]  // native order: A in the top byte
                let a = word >> 24
                if a == 0 { words[index] = 0; continue }
                var r = (word >> 16) & 0xFF, g = (word >> 8) & 0xFF, b = word & 0xFF
                if a != 255 {
                    r = (r * 255 + a / 2) / a
                    g = (g * 255 + a / 2) / a
                    b = (b * 255 + a / 2) / a
                }
                // RGBA bytes in memory order, whatever the machine's byte order.
                words[index] = UInt32(littleEndian: r | g << 8 | b << 16 | a << 24)
            }
        }
    }
}

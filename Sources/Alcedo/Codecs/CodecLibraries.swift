import CAlcedoCodecs
import CAVIF
import CGIF
import CHEIF
import CLCMS2
import CJXL
import CPNG
import CRSVG
import CTIFF
import CWebP

/// One C library Alcedo's codecs use, with its version.
public struct CodecLibrary: Sendable, Hashable, CustomStringConvertible {
    /// How the library reaches the process.
    public enum Linkage: String, Sendable, Hashable {
        /// Linked into the executable: loaded at start; ``CodecLibrary/version`` is the running library's.
        case linked
        /// Loaded with `dlopen` on the first image that needs it (libavif, libheif, libtiff, libjxl,
        /// librsvg): every other process never pays for it. ``CodecLibrary/version`` is the header's
        /// Alcedo was built with.
        case onFirstUse = "on first use"
    }

    /// The library's name, as its package calls it (`libjpeg-turbo`, `libpng`, …).
    public let name: String
    /// Its version, `major.minor.patch`.
    public let version: String
    /// The formats it serves, such as `JPEG` or `AVIF, HEIC`.
    public let formats: String
    /// Whether it is linked or loaded on first use.
    public let linkage: Linkage

    public init(name: String, version: String, formats: String, linkage: Linkage) {
        self.name = name
        self.version = version
        self.formats = formats
        self.linkage = linkage
    }

    /// `libpng 1.6.39 (PNG)`, with `, loaded on first use` for the dlopen ones.
    public var description: String {
        "\(name) \(version) (\(formats)\(linkage == .onFirstUse ? "; loaded on first use" : ""))"
    }
}

extension CodecLibrary {
    /// The C libraries behind Alcedo's built-in codecs and colour management, in a stable order.
    /// Reading it costs a few function calls: nothing is loaded that is not loaded already.
    public static var all: [CodecLibrary] {
        [
            CodecLibrary(name: "libjpeg-turbo", version: Self.dotted(Int(alcedo_jpeg_library_version()), base: 1000),
                         formats: "JPEG", linkage: .linked),
            CodecLibrary(name: "libpng", version: Self.dotted(Int(png_access_version_number()), base: 100),
                         formats: "PNG", linkage: .linked),
            CodecLibrary(name: "giflib", version: "\(GIFLIB_MAJOR).\(GIFLIB_MINOR).\(GIFLIB_RELEASE)",
                         formats: "GIF", linkage: .linked),
            CodecLibrary(name: "libwebp", version: Self.hexDotted(Int(WebPGetDecoderVersion())),
                         formats: "WebP", linkage: .linked),
            CodecLibrary(name: "lcms2", version: Self.lcmsVersion(Int(cmsGetEncodedCMMversion())),
                         formats: "ICC colour management", linkage: .linked),
            CodecLibrary(name: "libavif", version: "\(AVIF_VERSION_MAJOR).\(AVIF_VERSION_MINOR).\(AVIF_VERSION_PATCH)",
                         formats: "AVIF", linkage: .onFirstUse),
            CodecLibrary(name: "libheif", version: Self.heifVersion(ALCEDO_LIBHEIF_HEADER_VERSION),
                         formats: "HEIC", linkage: .onFirstUse),
            CodecLibrary(name: "libtiff", version: "\(TIFFLIB_MAJOR_VERSION).\(TIFFLIB_MINOR_VERSION).\(TIFFLIB_MICRO_VERSION)",
                         formats: "TIFF", linkage: .onFirstUse),
            CodecLibrary(name: "libjxl", version: "\(JPEGXL_MAJOR_VERSION).\(JPEGXL_MINOR_VERSION).\(JPEGXL_PATCH_VERSION)",
                         formats: "JPEG XL", linkage: .onFirstUse),
            CodecLibrary(name: "librsvg", version: String(cString: alcedo_rsvg_header_version()),
                         formats: "SVG", linkage: .onFirstUse),
        ]
    }

    /// 2001005 → `2.1.5` (base 1000), 10639 → `1.6.39` (base 100).
    static func dotted(_ number: Int, base: Int) -> String {
        guard number > 0 else { return "unknown" }
        return "\(number / (base * base)).\(number / base % base).\(number % base)"
    }

    /// 0x010204 → `1.2.4`.
    static func hexDotted(_ number: Int) -> String {
        "\(number >> 16).\((number >> 8) & 0xff).\(number & 0xff)"
    }

    /// 2140 → `2.14`.
    static func lcmsVersion(_ number: Int) -> String {
        "\(number / 1000).\(number / 10 % 100)"
    }

    /// (major << 24) | (minor << 16) | (patch << 8) → `1.15.1`.
    static func heifVersion(_ number: UInt32) -> String {
        "\(number >> 24).\((number >> 16) & 0xff).\((number >> 8) & 0xff)"
    }
}

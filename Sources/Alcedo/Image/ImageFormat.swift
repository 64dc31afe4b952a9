#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The container format of encoded image bytes, as told by their first bytes (never by a file
/// name or a `Content-Type` header).
///
/// The raw value is the lower-case name used in the command-line tool's JSON output.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case png
    /// Animated PNG: a PNG with an `acTL` chunk before its first `IDAT`.
    case apng
    case jpeg
    case gif
    case webp
    case tiff
    case bmp
    case ico
    case heic
    case heif
    case avif
    case svg
    /// JPEG XL: a bare codestream (`FF 0A`) or the ISO BMFF container (`JXL ` signature box).
    case jxl
    /// Bytes that match no known image signature.
    case unknown

    public var description: String { rawValue }

    /// The usual file extension for the format, without a dot (`"jpg"` for JPEG).
    public var preferredFileExtension: String {
        switch self {
        case .jpeg: return "jpg"
        case .apng: return "png"
        case .unknown: return "bin"
        default: return rawValue
        }
    }

    /// The format named by a file extension or a command-line word (`jpg`, `jpeg`, `PNG`, …),
    /// or `nil` when the word names no format.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "jpg", "jpeg", "jpe", "jfif": self = .jpeg
        case "png": self = .png
        case "apng": self = .apng
        case "gif": self = .gif
        case "webp": self = .webp
        case "tif", "tiff": self = .tiff
        case "bmp": self = .bmp
        case "ico", "cur": self = .ico
        case "heic": self = .heic
        case "heif": self = .heif
        case "avif": self = .avif
        case "svg": self = .svg
        case "jxl": self = .jxl
        default: return nil
        }
    }

    /// The MIME type of the format (`application/octet-stream` for `.unknown`).
    public var mimeType: String {
        switch self {
        case .png: return "image/png"
        case .apng: return "image/apng"
        case .jpeg: return "image/jpeg"
        case .gif: return "image/gif"
        case .webp: return "image/webp"
        case .tiff: return "image/tiff"
        case .bmp: return "image/bmp"
        case .ico: return "image/x-icon"
        case .heic: return "image/heic"
        case .heif: return "image/heif"
        case .avif: return "image/avif"
        case .svg: return "image/svg+xml"
        case .jxl: return "image/jxl"
        case .unknown: return "application/octet-stream"
        }
    }
}

/// The kind of a WebP file, read from its first chunk header.
public enum WebPVariant: String, Sendable, Hashable {
    /// `VP8 `: lossy, without alpha.
    case lossy
    /// `VP8L`: lossless (alpha possible).
    case lossless
    /// `VP8X` without the animation flag: a lossy or lossless image with alpha, ICC or EXIF.
    case extended
    /// `VP8X` with the animation flag.
    case animated
}

extension ImageFormat {
    /// Tells the format of `data` from its signature. Reads at most the first 4 KiB
    /// (SVG's text sniff) and never past the end of `data`: empty or short input is `.unknown`.
    public static func sniff(_ data: Data) -> ImageFormat {
        data.withUnsafeBytes { sniff(UnsafeRawBufferPointer($0)) }
    }

    /// Tells the format of the bytes in `bytes`; see ``sniff(_:)-(Data)``.
    public static func sniff(_ bytes: UnsafeRawBufferPointer) -> ImageFormat {
        let count = bytes.count
        func at(_ i: Int) -> UInt8 { bytes[i] }
        func matches(_ signature: [UInt8], at offset: Int = 0) -> Bool {
            guard offset + signature.count <= count else { return false }
            for (i, byte) in signature.enumerated() where bytes[offset + i] != byte { return false }
            return true
        }

        if matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            return PNGChunkScanner.hasAnimationControl(bytes) ? .apng : .png
        }
        if matches([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if matches(Array("GIF87a".utf8)) || matches(Array("GIF89a".utf8)) { return .gif }
        if matches(Array("RIFF".utf8)) && matches(Array("WEBP".utf8), at: 8) { return .webp }
        if matches([0x49, 0x49, 0x2A, 0x00]) || matches([0x4D, 0x4D, 0x00, 0x2A])
            || matches([0x49, 0x49, 0x2B, 0x00]) || matches([0x4D, 0x4D, 0x00, 0x2B]) {
            return .tiff
        }
        if matches(Array("BM".utf8)) && count >= 18 {
            // The DIB header size distinguishes a bitmap from any text starting with "BM".
            let dibSize = Int(at(14)) | Int(at(15)) << 8 | Int(at(16)) << 16 | Int(at(17)) << 24
            if [12, 16, 40, 52, 56, 64, 108, 124].contains(dibSize) { return .bmp }
        }
        // Icons (type 1) and cursors (type 2) share one layout and one decoder.
        if (matches([0x00, 0x00, 0x01, 0x00]) || matches([0x00, 0x00, 0x02, 0x00])) && count >= 6 && (at(4) != 0 || at(5) != 0) {
            return .ico
        }
        if matches([0xFF, 0x0A]) && count >= 3 { return .jxl }
        if matches([0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) { return .jxl }
        if let isoFormat = sniffISOBaseMedia(bytes) { return isoFormat }
        if sniffSVG(bytes) { return .svg }
        return .unknown
    }

    /// The WebP variant of `data`, or `nil` when `data` is not a WebP file with a known first chunk.
    public static func webPVariant(of data: Data) -> WebPVariant? {
        data.withUnsafeBytes { raw -> WebPVariant? in
            let bytes = UnsafeRawBufferPointer(raw)
            guard bytes.count >= 16, sniff(bytes) == .webp else { return nil }
            let fourCC = String(decoding: bytes[12..<16], as: UTF8.self)
            switch fourCC {
            case "VP8 ": return .lossy
            case "VP8L": return .lossless
            case "VP8X":
                guard bytes.count >= 21 else { return .extended }
                return bytes[20] & 0x02 != 0 ? .animated : .extended
            default: return nil
            }
        }
    }

    /// HEIC, HEIF and AVIF: an ISO base media `ftyp` box whose major or compatible brands name them.
    private static func sniffISOBaseMedia(_ bytes: UnsafeRawBufferPointer) -> ImageFormat? {
        guard bytes.count >= 12, String(decoding: bytes[4..<8], as: UTF8.self) == "ftyp" else { return nil }
        let boxSize = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        let end = min(bytes.count, max(boxSize, 12), 4096)
        var brands: [String] = [String(decoding: bytes[8..<12], as: UTF8.self)]
        var offset = 16  // skip major brand and minor version
        while offset + 4 <= end {
            brands.append(String(decoding: bytes[offset..<offset + 4], as: UTF8.self))
            offset += 4
        }
        if brands.contains(where: { $0 == "avif" || $0 == "avis" }) { return .avif }
        if brands.contains(where: { ["heic", "heix", "heim", "heis", "hevc", "hevx"].contains($0) }) { return .heic }
        if brands.contains(where: { $0 == "mif1" || $0 == "msf1" }) { return .heif }
        return nil
    }

    /// SVG: text (optionally after a UTF-8 BOM, whitespace, an XML declaration, comments or a
    /// doctype) whose first element is `<svg`. Looks at the first 4 KiB only.
    private static func sniffSVG(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let limit = min(bytes.count, 4096)
        guard limit >= 4 else { return false }
        let text = String(decoding: bytes[0..<limit], as: UTF8.self)
        var rest = Substring(text)
        if rest.hasPrefix("\u{FEFF}") { rest = rest.dropFirst() }
        while true {
            rest = rest.drop(while: { $0.isWhitespace })
            if rest.hasPrefix("<?") || rest.hasPrefix("<!--") || rest.hasPrefix("<!") {
                let terminator = rest.hasPrefix("<?") ? "?>" : (rest.hasPrefix("<!--") ? "-->" : ">")
                guard let close = rest.range(ofLiteral: terminator) else { return false }
                rest = rest[close.upperBound...]
                continue
            }
            return rest.hasPrefix("<svg") && rest.dropFirst(4).first.map { $0.isWhitespace || $0 == ">" || $0 == "/" } ?? false
        }
    }
}

/// Walks PNG chunk headers without reading past the buffer.
enum PNGChunkScanner {
    /// `true` when an `acTL` chunk comes before the first `IDAT` (the APNG signal).
    static func hasAnimationControl(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 8
        while offset + 8 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16
                | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            if type == "acTL" { return true }
            if type == "IDAT" { return false }
            // length is at most 2^32-1, so the sum cannot overflow Int on 64-bit.
            offset += 12 + length
        }
        return false
    }
}

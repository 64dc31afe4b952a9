import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// File names for fetched images, derived from their URLs.
///
/// The name is the URL's last path component (percent-decoding undone, `data` for a `data:`
/// URL, `image` when there is none) without its extension, cut to 48 characters, with every
/// character other than ASCII letters, digits, `-` and `_` replaced by `_` and leading `_`
/// and `-` removed; then `-` and 8 hexadecimal digits of a hash of the whole URL, so two URLs
/// ending in the same name get different files; then `.` and the extension. The result never
/// holds a `/`, never starts with `.` (so it always names a file inside the output folder) and
/// never starts with `-` (so no later `rm *` or `tar cf x *` in that folder takes it for an option).
enum OutputFileName {
    static func make(for url: String, extension ext: String) -> String {
        var base = lastComponent(of: url)
        if let dot = base.lastIndex(of: "."), dot != base.startIndex { base = String(base[..<dot]) }
        var safe = String(base.unicodeScalars.prefix(48).map { scalar -> Character in
            scalar.isASCIIAlphanumeric || scalar == "-" || scalar == "_"
                ? Character(scalar) : "_"
        })
        while let first = safe.first, first == "_" || first == "-" { safe.removeFirst() }
        if safe.isEmpty { safe = "image" }
        let safeExtension = String(ext.unicodeScalars.filter(\.isASCIIAlphanumeric).map(Character.init))
        return "\(safe)-\(ShortHash.hex(of: Array(url.utf8), digits: 8)).\(safeExtension.isEmpty ? "bin" : safeExtension)"
    }

    private static func lastComponent(of url: String) -> String {
        if url.lowercased().hasPrefix("data:") { return "data" }
        var path = Substring(url)
        if let scheme = path.range(ofLiteral: "://") {
            path = path[scheme.upperBound...]
            path = path.drop { $0 != "/" }  // the host
        }
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        return last.percentDecoded ?? last
    }
}

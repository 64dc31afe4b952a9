import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What happened to one URL of `alcedo fetch` (and of the demo's runs).
struct FetchReport: Sendable {
    /// The URL as given on the command line.
    let url: String
    /// Where the image came from: `none` (loaded: downloaded, read or decoded from the URL),
    /// `memory` or `disk`; nil when the fetch failed.
    var cacheType: String?
    /// The size of the image before processing, when known (the demo's "source" column).
    var sourceSize: PixelSize?
    /// The size of the result image.
    var size: PixelSize?
    /// The size in bytes of the file written.
    var bytes: Int?
    /// Wall-clock milliseconds from the start of the retrieval to the file written.
    var milliseconds: Double = 0
    /// Wall-clock milliseconds of the retrieval alone (cache lookups, loading, decoding,
    /// processing), without encoding and writing the file.
    var retrievalMilliseconds: Double?
    /// The file written.
    var file: String?
    /// The status of the download's final response (`304` for a revalidation), if any.
    var httpStatus: Int?
    /// Why the fetch failed, in one line.
    var error: String?
    /// The result image, kept only when asked for (the demo's contact sheet).
    var image: AlcedoImage?

    var succeeded: Bool { error == nil }

    /// The most bytes of a URL a report shows (a `data:` URL can be megabytes long).
    static let shownURLLength = 200

    /// `url` as reports show it: whole up to ``shownURLLength`` bytes, else its start,
    /// `…` and its length (`data:image/png;base64,iVBO… (44739267 bytes)`).
    static func shown(_ url: String) -> String {
        let utf8 = url.utf8
        guard utf8.count > shownURLLength else { return url }
        var cut = utf8.index(utf8.startIndex, offsetBy: shownURLLength)
        while cut > utf8.startIndex, cut.samePosition(in: url.unicodeScalars) == nil { cut = utf8.index(before: cut) }
        return String(url.unicodeScalars[..<cut]) + "… (\(utf8.count) bytes)"
    }

    /// The JSON line of `alcedo fetch --json`: exactly the keys `url`, `cacheType`, `width`,
    /// `height`, `bytes`, `ms`, `file` and `error`, with `null` for what is missing.
    var jsonObject: [String: Any] {
        [
            "url": Self.shown(url),
            "cacheType": cacheType.orJSONNull,
            "width": (size?.width).orJSONNull,
            "height": (size?.height).orJSONNull,
            "bytes": bytes.orJSONNull,
            "ms": milliseconds.roundedToTenth,
            "file": file.orJSONNull,
            "error": error.orJSONNull,
        ]
    }

    /// The text line: `URL: memory, 400x300, 12.3 KB, 4.2 ms -> FILE`, or `URL: error`.
    var textLine: String {
        guard error == nil, let size, let bytes, let file else {
            return "\(Self.shown(url)): \(error ?? "failed")"
        }
        return "\(Self.shown(url)): \(cacheType ?? "none"), \(size), \(Formatting.bytes(bytes)), "
            + "\(Formatting.milliseconds(milliseconds)) ms -> \(file)"
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ImageInfo {
    /// The facts `alcedo info --json` prints, as a JSON object (for `JSONSerialization`):
    /// `format`, `width`, `height`, `frames`, `loopCount`, `durations`, `totalDuration`,
    /// `orientation` (the EXIF value), `hasAlpha`, `bytes` (the file's size, `byteCount`),
    /// `iccProfile` (the embedded colour profile, or null) and `pages`; `bitDepth`,
    /// `compression` and `colorModel` when the decoder reports them, and `entries` for icons
    /// and cursors (each with `width`, `height`, `bitDepth`, `encoding`, `bytes`, and `hotSpot`
    /// `[x, y]` for cursors).
    public func jsonObject(byteCount: Int) -> [String: Any] {
        var object = baseJSONObject(byteCount: byteCount)
        object["pages"] = pageCount
        if let bitDepth { object["bitDepth"] = bitDepth }
        if let compression { object["compression"] = compression }
        if let colorModel { object["colorModel"] = colorModel }
        if !entries.isEmpty {
            object["entries"] = entries.map { entry -> [String: Any] in
                var item: [String: Any] = ["width": entry.width, "height": entry.height, "bitDepth": entry.bitDepth,
                                           "encoding": entry.encoding.rawValue, "bytes": entry.byteCount]
                if let hotSpot = entry.hotSpot { item["hotSpot"] = [hotSpot.x, hotSpot.y] }
                return item
            }
        }
        return object
    }

    private func baseJSONObject(byteCount: Int) -> [String: Any] {
        [
            "format": format.rawValue,
            "width": width,
            "height": height,
            "frames": frameCount,
            "loopCount": loopCount,
            "durations": frameDurations,
            "totalDuration": totalDuration,
            "orientation": orientation.rawValue,
            "hasAlpha": hasAlpha,
            "bytes": byteCount,
            "iccProfile": colorProfile?.jsonObject ?? JSONNull(),
        ]
    }
}

extension ImageColorProfile {
    /// The `iccProfile` value of `alcedo info --json`, `fetch --json` and the server's `/info`:
    /// `description`, `colorSpace`, `bytes` and `origin`.
    public var jsonObject: [String: Any] {
        ["description": description, "colorSpace": colorSpace.rawValue, "bytes": byteCount, "origin": origin.rawValue]
    }
}

import Foundation

extension ImageInfo {
    /// The facts `alcedo info --json` prints, as a JSON object (for `JSONSerialization`):
    /// `format`, `width`, `height`, `frames`, `loopCount`, `durations`, `totalDuration`,
    /// `orientation` (the EXIF value), `hasAlpha` and `bytes` (the file's size, `byteCount`).
    public func jsonObject(byteCount: Int) -> [String: Any] {
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
        ]
    }
}

import Foundation

extension ImageInfo {
    /// The facts `alcedo info --json` prints, as a JSON object (for `JSONSerialization`):
    /// `format`, `width`, `height`, `frames`, `loopCount`, `durations`, `totalDuration`,
    /// `orientation` (the EXIF value), `hasAlpha`, `bytes` (the file's size, `byteCount`) and
    /// `iccProfile` (the embedded colour profile, or null); `bitDepth` and `compression` when
    /// the decoder reports them.
    public func jsonObject(byteCount: Int) -> [String: Any] {
        var object: [String: Any] = [
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
            "iccProfile": colorProfile?.jsonObject ?? NSNull(),
        ]
        if let bitDepth { object["bitDepth"] = bitDepth }
        if let compression { object["compression"] = compression }
        return object
    }
}

extension ImageColorProfile {
    /// The `iccProfile` value of `alcedo info --json`, `fetch --json` and the server's `/info`:
    /// `description`, `colorSpace`, `bytes` and `origin`.
    public var jsonObject: [String: Any] {
        ["description": description, "colorSpace": colorSpace.rawValue, "bytes": byteCount, "origin": origin.rawValue]
    }
}

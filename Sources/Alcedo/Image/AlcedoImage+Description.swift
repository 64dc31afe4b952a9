#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// An image prints as one line (size, format, frames, colour), never as its pixels: `print`,
// string interpolation, `debugPrint`, `dump` and the values that hold an image (a
// `RetrieveImageResult`, a cache result) all go through these.

extension AlcedoImage: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// One line: `AlcedoImage(1200x900, jpeg, 1 frame, sRGB)`, or for an animation
    /// `AlcedoImage(64x64, gif, 12 frames, 1.2 s, loops forever, sRGB)`.
    public var description: String {
        var parts = ["\(width)x\(height)", "\(sourceFormat)"]
        parts.append(frames.count == 1 ? "1 frame" : "\(frames.count) frames")
        if isAnimated {
            let total = frames.reduce(0) { $0 + $1.duration }
            parts.append(String(cFormat: "%.2g s", total))
            parts.append(loopCount == 0 ? "loops forever" : "\(loopCount) loops")
        }
        if orientation != .up { parts.append("orientation \(orientation)") }
        parts.append(colorSummary)
        return "AlcedoImage(\(parts.joined(separator: ", ")))"
    }

    /// The same line as ``description``.
    public var debugDescription: String { description }

    /// The colour space of the pixels, in a few words.
    private var colorSummary: String {
        guard let profile = colorMetadata.pixelProfile else {
            return colorMetadata.sourceProfile.map { "sRGB from \($0.colorSpace.rawValue) profile" } ?? "sRGB"
        }
        let name = profile.description.isEmpty ? profile.colorSpace.rawValue : profile.description
        return "profile \"\(name)\""
    }

    /// The size, format, frame count, loop count, orientation and colour metadata; the frames
    /// as their sizes in bytes and durations, not their pixels.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "width": width, "height": height, "sourceFormat": sourceFormat,
            "frames": frames, "loopCount": loopCount, "orientation": orientation,
            "colorMetadata": colorMetadata.description,
        ], displayStyle: .struct)
    }
}

extension AlcedoImage.Frame: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// One line: `Frame(3686400 bytes, 0.1 s)`.
    public var description: String {
        duration > 0 ? "Frame(\(pixels.count) bytes, \(duration) s)" : "Frame(\(pixels.count) bytes)"
    }

    /// The same line as ``description``.
    public var debugDescription: String { description }

    /// The byte count and the duration, not the pixels.
    public var customMirror: Mirror {
        Mirror(self, children: ["byteCount": pixels.count, "duration": duration], displayStyle: .struct)
    }
}

extension ImageColorMetadata: CustomStringConvertible {
    /// One line naming the source and pixel profiles (or `none`), never their bytes.
    public var description: String {
        func name(_ profile: ImageColorProfile?) -> String {
            guard let profile else { return "none" }
            let label = profile.description.isEmpty ? profile.colorSpace.rawValue : profile.description
            return "\"\(label)\" (\(profile.byteCount) bytes)"
        }
        var text = "source \(name(sourceProfile)), pixels \(name(pixelProfile))"
        if let warning { text += ", warning: \(warning)" }
        return text
    }
}

import Foundation

/// Finds the EXIF orientation in a PNG `eXIf` chunk or a WebP `EXIF` chunk, by walking the
/// container's chunk headers (no pixel data is read). Malformed containers yield `nil`.
enum ContainerExifReader {
    /// The orientation of the PNG's `eXIf` chunk (anywhere in the file), or `nil`.
    static func pngOrientation(_ bytes: UnsafeRawBufferPointer) -> ImageOrientation? {
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let start = offset + 8
            guard length <= bytes.count - start else { return nil }
            let type = (bytes[offset + 4], bytes[offset + 5], bytes[offset + 6], bytes[offset + 7])
            if type == (0x65, 0x58, 0x49, 0x66) {  // "eXIf"
                return ExifOrientationReader.orientation(in: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)]))
            }
            if type == (0x49, 0x45, 0x4E, 0x44) { return nil }  // "IEND"
            offset = start + length + 4
        }
        return nil
    }

    /// The orientation of the WebP's `EXIF` chunk (extended format), or `nil`.
    static func webpOrientation(_ bytes: UnsafeRawBufferPointer) -> ImageOrientation? {
        guard bytes.count >= 12 else { return nil }
        var offset = 12
        while offset + 8 <= bytes.count {
            let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
            let start = offset + 8
            guard size <= bytes.count - start else { return nil }
            if bytes[offset] == 0x45, bytes[offset + 1] == 0x58, bytes[offset + 2] == 0x49, bytes[offset + 3] == 0x46 {  // "EXIF"
                return ExifOrientationReader.orientation(in: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + size)]))
            }
            offset = start + size + (size & 1)
        }
        return nil
    }
}

extension AlcedoImage {
    /// This image with `orientation` applied to every frame (when it is not `.up`), recording it.
    func applyingOrientation(_ orientation: ImageOrientation) -> AlcedoImage {
        guard orientation != .up else { return self }
        var width = self.width, height = self.height
        let turned = frames.map { frame -> Frame in
            let result = orientation.apply(to: frame.pixels, width: self.width, height: self.height)
            width = result.width
            height = result.height
            return Frame(pixels: result.pixels, duration: frame.duration)
        }
        var image = AlcedoImage(width: width, height: height, frames: turned, loopCount: loopCount,
                                sourceFormat: sourceFormat, orientation: orientation, colorMetadata: colorMetadata)
        image.metadata = metadata
        return image
    }

    /// This image recording `orientation` without turning the pixels (orientation not applied).
    func recordingOrientation(_ orientation: ImageOrientation) -> AlcedoImage {
        guard orientation != self.orientation else { return self }
        var image = AlcedoImage(width: width, height: height, frames: frames, loopCount: loopCount,
                                sourceFormat: sourceFormat, orientation: orientation, colorMetadata: colorMetadata)
        image.metadata = metadata
        return image
    }
}

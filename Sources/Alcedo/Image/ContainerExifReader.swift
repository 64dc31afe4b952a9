#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Finds the EXIF orientation in a PNG `eXIf` chunk or a WebP `EXIF` chunk, through
/// ``MetadataContainers``' walk of the container's chunk headers (no pixel data is read).
/// Malformed containers yield `nil`.
enum ContainerExifReader {
    /// The orientation of the PNG's `eXIf` chunk (anywhere in the file), or `nil`.
    static func pngOrientation(_ bytes: UnsafeRawBufferPointer) -> ImageOrientation? {
        orientation(in: MetadataContainers.readPNG(bytes).exif)
    }

    /// The orientation of the WebP's `EXIF` chunk (extended format), or `nil`.
    static func webpOrientation(_ bytes: UnsafeRawBufferPointer) -> ImageOrientation? {
        orientation(in: MetadataContainers.readWebP(bytes).exif)
    }

    private static func orientation(in exif: Data?) -> ImageOrientation? {
        exif.flatMap { block in block.withUnsafeBytes { ExifOrientationReader.orientation(in: $0) } }
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

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes a binary PAM (Netpbm `P7`) file with `TUPLTYPE RGB_ALPHA`: the image's RGBA8 pixels
/// (straight alpha) behind a short text header, so any tool can compare pixels exactly.
public enum PAMWriter {
    /// The text header of a PAM file of `width` x `height` RGBA8 pixels; the pixels follow it
    /// as they are stored in a frame, so a writer can send the header and then the frame's own
    /// bytes, without building the file in a second buffer.
    public static func header(width: Int, height: Int) -> [UInt8] {
        Array("P7\nWIDTH \(width)\nHEIGHT \(height)\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n".utf8)
    }

    /// The PAM bytes of frame `frameIndex` (default 0) of `image`, in one new buffer (header
    /// and a copy of the pixels). To write a file, prefer ``header(width:height:)`` followed by
    /// the frame's pixels.
    /// - Precondition: `frameIndex` is a valid frame index.
    public static func encode(_ image: AlcedoImage, frameIndex: Int = 0) -> Data {
        let header = header(width: image.width, height: image.height)
        var data = Data(capacity: header.count + image.width * image.height * 4)
        data.append(contentsOf: header)
        data.append(contentsOf: image.frames[frameIndex].pixels)
        return data
    }
}

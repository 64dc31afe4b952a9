import Foundation

/// Writes a binary PAM (Netpbm `P7`) file with `TUPLTYPE RGB_ALPHA`: the image's RGBA8 pixels
/// (straight alpha) behind a short text header, so any tool can compare pixels exactly.
public enum PAMWriter {
    /// The PAM bytes of frame `frameIndex` (default 0) of `image`.
    /// - Precondition: `frameIndex` is a valid frame index.
    public static func encode(_ image: AlcedoImage, frameIndex: Int = 0) -> Data {
        let header = "P7\nWIDTH \(image.width)\nHEIGHT \(image.height)\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n"
        var data = Data(capacity: header.utf8.count + image.width * image.height * 4)
        data.append(contentsOf: Array(header.utf8))
        data.append(contentsOf: image.frames[frameIndex].pixels)
        return data
    }
}

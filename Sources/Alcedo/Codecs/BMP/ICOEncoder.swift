#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes an image as a Windows icon (`.ico`) of PNG entries, one per size.
///
/// Each entry is the first frame scaled to fit inside a square of its size (aspect ratio
/// kept, never enlarged; Lanczos3 as ``AlcedoImage/resized(to:)``) and written as an RGBA PNG,
/// which Windows Vista and later, browsers and every icon tool read. Entries are written
/// smallest first. ``EncodingOptions/quality`` is ignored.
public struct ICOEncoder: ImageEncoding {
    /// `.ico`.
    public var format: ImageFormat { .ico }

    /// The longest side of each entry, each in 1...256 (default `[]`: one entry, the image
    /// fitted inside 256x256). Duplicates and sizes larger than the image give one entry at
    /// the image's own size.
    public var sizes: [Int]

    /// Creates an icon encoder writing one entry per size in `sizes` (default `[]`: one entry
    /// at the image's size, fitted inside 256x256).
    public init(sizes: [Int] = []) {
        self.sizes = sizes
    }

    /// Encodes `image`.
    /// - Throws: `.encodingError(.imageNotEncodable)` for a size outside 1...256 or more than
    ///   256 entries, or the PNG encoder's error.
    public func encode(_ image: AlcedoImage, options: EncodingOptions = .default) throws(AlcedoError) -> Data {
        guard sizes.count <= 256 else {
            throw .encodingError(reason: .imageNotEncodable(format: .ico, message: "\(sizes.count) entries (at most 256)"))
        }
        if let bad = sizes.first(where: { !(1...256).contains($0) }) {
            throw .encodingError(reason: .imageNotEncodable(format: .ico, message: "entry size \(bad) is outside 1...256"))
        }
        let still = image.frames.count > 1 ? image.frame(at: 0) : image
        var boxes = Set((sizes.isEmpty ? [256] : sizes).map { side in still.pixelSize.fitting(in: PixelSize(width: side, height: side)) })
            .sorted { $0.pixelCount < $1.pixelCount }
        if boxes.isEmpty { boxes = [still.pixelSize] }
        let png = PNGEncoder(reducesChannels: false)
        var entries: [(PixelSize, Data)] = []
        for size in boxes {
            entries.append((size, try png.encode(still.resized(to: size), options: options)))
        }
        var out = Data()
        func put16(_ v: Int) { out.append(UInt8(v & 0xFF)); out.append(UInt8((v >> 8) & 0xFF)) }
        func put32(_ v: Int) { put16(v & 0xFFFF); put16((v >> 16) & 0xFFFF) }
        put16(0); put16(1); put16(entries.count)
        var offset = 6 + 16 * entries.count
        for (size, data) in entries {
            out.append(UInt8(size.width >= 256 ? 0 : size.width))
            out.append(UInt8(size.height >= 256 ? 0 : size.height))
            out.append(0)   // colour count: not a palette
            out.append(0)   // reserved
            put16(1)        // planes
            put16(32)       // bits a pixel
            put32(data.count)
            put32(offset)
            offset += data.count
        }
        for (_, data) in entries { out.append(data) }
        return out
    }
}

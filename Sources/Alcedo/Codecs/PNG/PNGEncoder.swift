import CPNG
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes the first frame of an image as an 8-bit PNG with libpng's simplified API.
///
/// The output is lossless: decoding it with ``PNGDecoder`` gives back the same RGBA bytes. By
/// default the smallest layout that keeps every byte is written: RGB when every pixel is
/// opaque, gray (or gray + alpha) when every pixel has red = green = blue, RGBA otherwise. The
/// file carries an `sRGB` chunk (libpng writes it for 8-bit images), so readers keep the sample
/// values. ``EncodingOptions/quality`` is ignored.
///
/// The output buffer is sized once from libpng's worst-case bound
/// (`PNG_IMAGE_PNG_SIZE_MAX`), so the image is compressed once; should the bound ever be too
/// small, the write is retried with the size libpng asks for.
public struct PNGEncoder: ImageEncoding {
    /// `.png`.
    public var format: ImageFormat { .png }

    /// Write RGB, gray or gray + alpha instead of RGBA when that loses nothing (default `true`).
    public var reducesChannels: Bool

    /// Creates a PNG encoder; `reducesChannels` (default `true`) picks the smallest lossless layout.
    public init(reducesChannels: Bool = true) {
        self.reducesChannels = reducesChannels
    }

    /// Encodes the first frame of `image`.
    /// - Throws: `.encodingError(.libraryFailure)` when libpng fails.
    public func encode(_ image: AlcedoImage, options: EncodingOptions = .default) throws(AlcedoError) -> Data {
        let rgba = image.pixels
        let profile = image.colorMetadata.pixelProfile
        // An RGB profile cannot describe gray samples: a tagged image keeps its colour channels.
        var layout = reducesChannels ? PNGPixelLayout.smallest(for: rgba) : .rgba
        if profile != nil && layout == .gray { layout = .rgb }
        if profile != nil && layout == .grayAlpha { layout = .rgba }
        let input = layout == .rgba ? rgba : layout.pack(rgba)
        var png = PNGLibrary.makeImage()
        png.width = UInt32(image.width)
        png.height = UInt32(image.height)
        png.format = layout.libraryFormat
        defer { png_image_free(&png) }

        var capacity = Int(alcedo_png_image_png_size_max(&png))
        for _ in 0..<2 {
            var written = capacity
            var succeeded = false
            let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
                var size = png_alloc_size_t(capacity)
                succeeded = input.withUnsafeBytes { source in
                    png_image_write_to_memory(&png, buffer.baseAddress, &size, 0, source.baseAddress, 0, nil) != 0
                }
                written = Int(size)
                initialized = succeeded ? written : 0
            }
            if succeeded {
                return ICCProfileEmbedding.embed(profile, in: Data(output), format: .png,
                                                 width: image.width, height: image.height, hasAlpha: layout == .rgba)
            }
            // A larger size means the buffer was too small; anything else is a failure.
            guard written > capacity else { break }
            capacity = written
            png_image_free(&png)
        }
        let message = PNGLibrary.message(of: png)
        throw .encodingError(reason: .libraryFailure(format: .png, message: message.isEmpty ? "libpng could not write the image" : message))
    }
}

/// The channel layouts ``PNGEncoder`` writes.
enum PNGPixelLayout: Int, Sendable {
    case gray = 1, grayAlpha = 2, rgb = 3, rgba = 4

    /// The simplified API's format constant.
    var libraryFormat: UInt32 {
        switch self {
        case .gray: return ALCEDO_PNG_FORMAT_GRAY
        case .grayAlpha: return ALCEDO_PNG_FORMAT_GA
        case .rgb: return ALCEDO_PNG_FORMAT_RGB
        case .rgba: return ALCEDO_PNG_FORMAT_RGBA
        }
    }

    /// The smallest layout that holds `rgba` without loss.
    static func smallest(for rgba: [UInt8]) -> PNGPixelLayout {
        var opaque = true, gray = true
        rgba.withUnsafeBufferPointer { p in
            var i = 0
            while i < p.count && (opaque || gray) {
                if p[i + 3] != 255 { opaque = false }
                if p[i] != p[i + 1] || p[i] != p[i + 2] { gray = false }
                i += 4
            }
        }
        switch (gray, opaque) {
        case (true, true): return .gray
        case (true, false): return .grayAlpha
        case (false, true): return .rgb
        case (false, false): return .rgba
        }
    }

    /// `rgba` repacked to this layout's channels (gray is taken from red).
    func pack(_ rgba: [UInt8]) -> [UInt8] {
        let channels = rawValue
        let pixelCount = rgba.count / 4
        return [UInt8](unsafeUninitializedCapacity: pixelCount * channels) { out, initialized in
            rgba.withUnsafeBufferPointer { p in
                for i in 0..<pixelCount {
                    let s = i * 4, d = i * channels
                    switch self {
                    case .gray: out[d] = p[s]
                    case .grayAlpha: out[d] = p[s]; out[d + 1] = p[s + 3]
                    case .rgb: out[d] = p[s]; out[d + 1] = p[s + 1]; out[d + 2] = p[s + 2]
                    case .rgba: out[d] = p[s]; out[d + 1] = p[s + 1]; out[d + 2] = p[s + 2]; out[d + 3] = p[s + 3]
                    }
                }
            }
            initialized = pixelCount * channels
        }
    }
}

import CAlcedoCodecs
import CPNG
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes the first frame of an image as an 8-bit PNG: rows filtered by Alcedo, the zlib stream
/// made by libdeflate.
///
/// The output is lossless unless ``quantizes`` is set: decoding it with ``PNGDecoder`` gives
/// back the same RGBA bytes. By default the smallest layout that keeps every byte is written:
/// RGB when every pixel is opaque, gray (or gray + alpha) when every pixel has red = green =
/// blue, RGBA otherwise. The file carries an `sRGB` chunk (or the image's ICC profile), so
/// readers keep the sample values. ``EncodingOptions/quality`` is ignored.
///
/// Speed and size: with the default ``Filter/auto`` a sample of the rows decides between the
/// adaptive filter (photographs, gradients, alpha) and none (flat-coloured screenshots, line
/// art), whichever compresses smaller. On a 712x534 photograph this writes the bytes libpng's
/// defaults write (zlib level 6, every filter) in about a sixth of the time, and 0.7x the bytes
/// of libvips' defaults (no filter) in about half its time; Benchmarks/Codecs has the figures.
public struct PNGEncoder: ImageEncoding {
    /// How rows are filtered before compression.
    public enum Filter: Int, Sendable, Hashable, CaseIterable {
        /// Per row, the filter with the smallest sum of absolute differences (the PNG
        /// specification's heuristic; libpng's "all filters").
        case adaptive = 0
        /// No filtering (libvips' default).
        case none = 1
        /// Sub on every row.
        case sub = 2
        /// Up on every row.
        case up = 3
        /// Paeth on every row.
        case paeth = 4
        /// Adaptive or none, whichever compresses a sample of the rows smaller; when adaptive
        /// wins, the level is lowered by 2 (to at least 1), which on such content costs about 1%
        /// of the bytes and saves 40 to 50% of the time (the default).
        case auto = 5
    }

    /// `.png`.
    public var format: ImageFormat { .png }

    /// Write RGB, gray or gray + alpha instead of RGBA when that loses nothing (default `true`).
    public var reducesChannels: Bool
    /// Adam7 interlacing (imgproxy's `IMGPROXY_PNG_INTERLACED`; default `false`).
    public var interlaced: Bool
    /// Write a palette image of at most ``quantizationColors`` colours (imgproxy's
    /// `IMGPROXY_PNG_QUANTIZE`; default `false`). Lossy unless the image has that few colours:
    /// the palette is built by median cut (as for GIF), alpha becomes opaque or transparent at
    /// 128, without dithering.
    public var quantizes: Bool
    /// The palette size when ``quantizes`` is set, 2 to 256 (imgproxy's
    /// `IMGPROXY_PNG_QUANTIZATION_COLORS`; default 256).
    public var quantizationColors: Int
    /// zlib's compression scale, 0 (stored) to 9 (thumbor's `PNG_COMPRESSION_LEVEL`; default 6,
    /// libvips' and libpng's default).
    public var compressionLevel: Int
    /// The row filter (default ``Filter/auto``).
    public var filter: Filter

    /// Creates a PNG encoder; every parameter defaults to the value stated on its property.
    public init(reducesChannels: Bool = true, interlaced: Bool = false, quantizes: Bool = false,
                quantizationColors: Int = 256, compressionLevel: Int = 6, filter: Filter = .auto) {
        self.reducesChannels = reducesChannels
        self.interlaced = interlaced
        self.quantizes = quantizes
        self.quantizationColors = quantizationColors
        self.compressionLevel = compressionLevel
        self.filter = filter
    }

    /// Encodes the first frame of `image`.
    /// - Throws: `.encodingError(.libraryFailure)` when memory runs out, `.encodingError(.imageNotEncodable)`
    ///   for a compression level outside 0...9 or a palette size outside 2...256.
    public func encode(_ image: AlcedoImage, options: EncodingOptions = .default) throws(AlcedoError) -> Data {
        guard (0...9).contains(compressionLevel) else {
            throw .encodingError(reason: .imageNotEncodable(format: .png, message: "the compression level \(compressionLevel) is not in 0...9"))
        }
        guard !quantizes || (2...256).contains(quantizationColors) else {
            throw .encodingError(reason: .imageNotEncodable(format: .png, message: "the palette size \(quantizationColors) is not in 2...256"))
        }
        let rgba = image.pixels
        let profile = image.colorMetadata.pixelProfile
        var params = alcedo_png_write_params()
        params.width = UInt32(image.width)
        params.height = UInt32(image.height)
        params.interlaced = interlaced ? 1 : 0
        params.level = Int32(compressionLevel)
        params.filter = Int32(filter.rawValue)
        params.srgb = profile == nil ? 1 : 0
        var hasAlpha = false
        let written: (status: Int32, bytes: UnsafeMutablePointer<UInt8>?, count: Int)
        if quantizes {
            let quantized = GIFColorQuantizer.quantize(rgba, maxColors: quantizationColors)
            var alphas = [UInt8](repeating: 255, count: quantized.colorCount)
            if let transparent = quantized.transparentIndex {
                alphas[transparent] = 0
                hasAlpha = true
            }
            // tRNS lists entries up to the last one that is not opaque.
            let alphaCount = quantized.transparentIndex.map { $0 + 1 } ?? 0
            params.stride = Int(image.width)
            params.channels = 1
            params.source_channels = 1
            params.palette_count = Int32(quantized.colorCount)
            params.alpha_count = Int32(alphaCount)
            written = quantized.indices.withUnsafeBufferPointer { indices in
                quantized.palette.withUnsafeBufferPointer { palette in
                    alphas.withUnsafeBufferPointer { alpha in
                        params.pixels = indices.baseAddress
                        params.palette = palette.baseAddress
                        params.palette_alpha = alphaCount > 0 ? alpha.baseAddress : nil
                        return Self.write(&params)
                    }
                }
            }
        } else {
            // An RGB profile cannot describe gray samples: a tagged image keeps its colour channels.
            var layout = reducesChannels ? PNGPixelLayout.smallest(for: rgba) : .rgba
            if profile != nil && layout == .gray { layout = .rgb }
            if profile != nil && layout == .grayAlpha { layout = .rgba }
            hasAlpha = layout == .rgba
            // The writer takes the channels it writes straight from the RGBA rows.
            params.stride = Int(image.width) * 4
            params.channels = Int32(layout.rawValue)
            params.source_channels = 4
            written = rgba.withUnsafeBufferPointer { pixels in
                params.pixels = pixels.baseAddress
                return Self.write(&params)
            }
        }
        guard written.status == 0, let bytes = written.bytes else {
            throw .encodingError(reason: .libraryFailure(format: .png, message: written.status == -2
                ? "out of memory writing a \(image.width)x\(image.height) PNG" : "the PNG writer refused its parameters"))
        }
        let data = Data(bytesNoCopy: bytes, count: written.count, deallocator: .free)
        return ICCProfileEmbedding.embed(profile, in: data, format: .png,
                                         width: image.width, height: image.height, hasAlpha: hasAlpha)
    }

    private static func write(_ params: inout alcedo_png_write_params) -> (status: Int32, bytes: UnsafeMutablePointer<UInt8>?, count: Int) {
        var bytes: UnsafeMutablePointer<UInt8>?
        var count = 0
        let status = alcedo_png_write(&params, &bytes, &count)
        return (status, bytes, count)
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
}


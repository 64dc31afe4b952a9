import CLCMS2
import CPNG
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Finds the colour information a PNG, WebP or GIF file carries, without decoding pixels.
/// (JPEG profiles come from libjpeg, AVIF and HEIC profiles from their libraries.)
enum EmbeddedProfileReader {
    /// Profiles larger than this are refused (the largest real-world CMYK profiles are a few MB).
    static let maxProfileBytes = 16 << 20

    /// What a PNG says about its colour, read from the chunks before `IDAT`.
    struct PNGColorChunks {
        /// The inflated `iCCP` profile, or `nil`.
        var iccProfile: Data?
        /// The `iCCP` chunk is there but could not be inflated.
        var brokenICCP = false
        /// An `sRGB` chunk is present.
        var sRGB = false
        /// `gAMA` as stated (e.g. 0.45455), or `nil`.
        var gamma: Double?
        /// `cHRM`: white x, y, red x, y, green x, y, blue x, y.
        var chromaticities: [Double]?
        /// The `IHDR` colour type (0 gray, 2 RGB, 3 palette, 4 gray + alpha, 6 RGBA).
        var colorType: UInt8 = 0

        /// `gAMA` + `cHRM` describe colour that libpng's gamma step alone does not handle:
        /// no `iCCP` or `sRGB`, a colour (not gray) image, and primaries or white point that
        /// are not sRGB's (for sRGB's, libpng's gamma step is all there is to do).
        var needsChromaticityProfile: Bool {
            guard !sRGB, iccProfile == nil, !brokenICCP, gamma != nil, let chromaticities,
                  colorType == 2 || colorType == 3 || colorType == 6 else { return false }
            let sRGBChromaticities = [0.3127, 0.3290, 0.64, 0.33, 0.30, 0.60, 0.15, 0.06]
            return zip(chromaticities, sRGBChromaticities).contains { abs($0 - $1) > 0.002 }
        }
    }

    /// Walks the chunks of a PNG up to the first `IDAT`. Malformed chunk lengths end the walk.
    static func pngColorChunks(_ bytes: UnsafeRawBufferPointer) -> PNGColorChunks {
        var result = PNGColorChunks()
        if bytes.count > 25 { result.colorType = bytes[25] }
        var offset = 8
        while offset + 8 <= bytes.count {
            let length = Int(readBigEndian32(bytes, offset))
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            let start = offset + 8
            guard length >= 0, length <= bytes.count - start else { break }
            let body = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)])
            switch type {
            case "IDAT", "IEND":
                return result
            case "iCCP":
                if let nul = body.firstIndex(of: 0), nul + 2 <= body.count, body[nul + 1] == 0 {
                    let compressed = UnsafeRawBufferPointer(rebasing: body[(nul + 2)...])
                    result.iccProfile = inflate(compressed)
                    result.brokenICCP = result.iccProfile == nil
                } else {
                    result.brokenICCP = true
                }
            case "sRGB":
                result.sRGB = true
            case "gAMA" where length == 4:
                let value = readBigEndian32(body, 0)
                if value > 0 { result.gamma = Double(value) / 100_000 }
            case "cHRM" where length == 32:
                result.chromaticities = (0..<8).map { Double(readBigEndian32(body, $0 * 4)) / 100_000 }
            default:
                break
            }
            offset = start + length + 4
        }
        return result
    }

    /// The colour plan for a PNG: its `iCCP` profile; nothing for `sRGB`; a profile built from
    /// `gAMA` and `cHRM` when both are there without `iCCP` or `sRGB`. With `rawSamples`, that
    /// last profile describes the samples as stored (the caller decodes them without the gamma
    /// step: one 8-bit rounding instead of two, which would lose up to 7 levels in saturated
    /// darks); otherwise it describes the gamma-converted output.
    static func pngPlan(_ bytes: UnsafeRawBufferPointer, mode: ColorManagement, format: ImageFormat,
                        rawSamples: Bool = false) -> ColorPlan {
        guard mode != .ignore else { return .none }
        let chunks = pngColorChunks(bytes)
        if chunks.sRGB { return .none }
        if let icc = chunks.iccProfile { return ColorPlan.forRGBA(iccData: icc, mode: mode, format: format) }
        if chunks.brokenICCP {
            return ColorPlan(metadata: ImageColorMetadata(warning: "\(format): the iCCP chunk cannot be inflated; the profile was ignored"),
                             transform: nil)
        }
        if chunks.needsChromaticityProfile, let gamma = chunks.gamma, let chromaticities = chunks.chromaticities,
           let profile = chromaticityProfile(gamma: gamma, chromaticities: chromaticities, rawSamples: rawSamples) {
            return ColorPlan.forRGBA(profile: profile, mode: mode)
        }
        return .none
    }

    /// The profile of what libpng's simplified API hands back for a file with `gAMA` and
    /// `cHRM`: the file's primaries and white point, and the transfer curve of the decoded
    /// samples. libpng re-encodes samples to a 2.2 power law unless the file's gamma is
    /// within 5% of that, in which case it leaves them as stored (then the curve is the
    /// file's own, 1 / gAMA).
    /// With `rawSamples` the curve is the file's own (1 / gAMA), for samples decoded as stored.
    static func chromaticityProfile(gamma: Double, chromaticities c: [Double], rawSamples: Bool = false) -> ImageColorProfile? {
        guard c.count == 8, c.allSatisfy({ $0 > 0 && $0 < 1 }) else { return nil }
        let product = gamma * 2.2
        let curveGamma = rawSamples || abs(product - 1) < 0.05 ? 1 / gamma : 2.2
        var white = cmsCIExyY(x: c[0], y: c[1], Y: 1)
        var primaries = cmsCIExyYTRIPLE(Red: cmsCIExyY(x: c[2], y: c[3], Y: 1),
                                        Green: cmsCIExyY(x: c[4], y: c[5], Y: 1),
                                        Blue: cmsCIExyY(x: c[6], y: c[7], Y: 1))
        _ = LCMSProfile.installSilentHandler
        guard let curve = cmsBuildGamma(nil, curveGamma) else { return nil }
        defer { cmsFreeToneCurve(curve) }
        var curves: [OpaquePointer?] = [curve, curve, curve]
        guard let handle = cmsCreateRGBProfile(&white, &primaries, &curves) else { return nil }
        let profile = LCMSProfile(handle: handle)
        let description = String(cFormat: "PNG gAMA %.5f cHRM", gamma)
        guard let mlu = cmsMLUalloc(nil, 1) else { return nil }
        defer { cmsMLUfree(mlu) }
        cmsMLUsetASCII(mlu, "en", "US", description)
        cmsWriteTag(profile.handle, cmsSigProfileDescriptionTag, UnsafeRawPointer(mlu))
        guard let data = profile.iccData() else { return nil }
        return ImageColorProfile(data: data, description: description, colorSpace: .rgb, origin: .pngChromaticities)
    }

    /// `true` when the PNG's colour comes from `gAMA` + `cHRM` (no `iCCP`, no `sRGB`): its
    /// samples are then best decoded as stored and converted in one step.
    /// Palette files keep libpng's gamma step (their colour table is read from the original bytes).
    static func pngUsesChromaticities(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let chunks = pngColorChunks(bytes)
        return chunks.needsChromaticityProfile && chunks.colorType != 3
    }

    /// The `ICCP` chunk of a WebP (extended format), or `nil`.
    static func webpICCProfile(_ bytes: UnsafeRawBufferPointer) -> Data? {
        guard bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)),
              Array(bytes[8..<12]) == Array("WEBP".utf8) else { return nil }
        var offset = 12
        while offset + 8 <= bytes.count {
            let size = Int(readLittleEndian32(bytes, offset + 4))
            let start = offset + 8
            guard size <= bytes.count - start else { return nil }
            if Array(bytes[offset..<(offset + 4)]) == Array("ICCP".utf8) {
                guard size <= maxProfileBytes else { return nil }
                return Data(bytes[start..<(start + size)])
            }
            offset = start + size + (size & 1)
        }
        return nil
    }

    /// The profile of a GIF's `ICCRGBG1012` application extension (before the first image), or `nil`.
    static func gifICCProfile(_ bytes: UnsafeRawBufferPointer) -> Data? {
        guard bytes.count >= 13, bytes.starts(with: Array("GIF".utf8)) else { return nil }
        var offset = 13
        let packed = bytes[10]
        if packed & 0x80 != 0 { offset += 3 << (Int(packed & 0x07) + 1) }
        while offset < bytes.count {
            let introducer = bytes[offset]
            guard introducer == 0x21, offset + 1 < bytes.count else { return nil }  // an image or the trailer: stop
            let label = bytes[offset + 1]
            offset += 2
            var blocks: [Data] = []
            var total = 0
            while offset < bytes.count {
                let length = Int(bytes[offset])
                offset += 1
                if length == 0 { break }
                guard offset + length <= bytes.count else { return nil }
                total += length
                guard total <= maxProfileBytes + 11 else { return nil }
                blocks.append(Data(bytes[offset..<(offset + length)]))
                offset += length
            }
            if label == 0xFF, let first = blocks.first, first == Data("ICCRGBG1012".utf8) {
                return blocks.dropFirst().reduce(into: Data()) { $0.append($1) }
            }
        }
        return nil
    }

    /// zlib-inflates `compressed`, up to ``maxProfileBytes``; `nil` on any zlib error.
    static func inflate(_ compressed: UnsafeRawBufferPointer) -> Data? {
        guard let source = compressed.baseAddress?.assumingMemoryBound(to: UInt8.self), !compressed.isEmpty else { return nil }
        var capacity = max(4096, compressed.count * 4)
        while capacity <= maxProfileBytes {
            var output = Data(count: capacity)
            var length = uLongf(capacity)
            let status = output.withUnsafeMutableBytes { raw in
                uncompress(raw.baseAddress!.assumingMemoryBound(to: Bytef.self), &length, source, uLong(compressed.count))
            }
            if status == Z_OK { return output.prefix(Int(length)) }
            guard status == Z_BUF_ERROR else { return nil }
            capacity *= 4
        }
        return nil
    }

    private static func readBigEndian32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        (UInt32(bytes[offset]) << 24) | (UInt32(bytes[offset + 1]) << 16) | (UInt32(bytes[offset + 2]) << 8) | UInt32(bytes[offset + 3])
    }

    private static func readLittleEndian32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | (UInt32(bytes[offset + 1]) << 8) | (UInt32(bytes[offset + 2]) << 16) | (UInt32(bytes[offset + 3]) << 24)
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns runs of decoded TIFF samples (after decompression and the predictor, in host byte
/// order as libtiff returns them) into RGBA8, straight alpha.
///
/// Gray (min-is-black and min-is-white), palette, RGB, CMYK and CIE L*a*b* samples of 1, 2, 4, 8, 16 or
/// 32 bits (unsigned integers), or floating-point samples of 16, 32 or 64 bits (0 black, 1
/// white, values outside clamped, no transfer curve applied: the values are taken as encoded),
/// interleaved (contiguous) or one plane a sample (separate), with associated or unassociated
/// alpha. Every sample goes through a 16-bit intermediate, rounded to 8 bits at the end;
/// narrower ones are widened (1-bit 0/255, 4-bit × 17…). CMYK is written as C, M, Y, K bytes for the colour
/// transform that follows, or, with `naiveCMYK`, turned into RGB with the naive formula.
struct TIFFSampleConverter {
    let page: TIFFPage
    /// CMYK to RGB with R = (1 − C)(1 − K)… here (colour management off); else CMYK bytes out.
    let naiveCMYK: Bool
    /// L*a*b* to sRGB for the page's white point.
    private let lab: TIFFLabConverter

    init(page: TIFFPage, naiveCMYK: Bool) {
        self.page = page
        self.naiveCMYK = naiveCMYK
        lab = TIFFLabConverter(white: page.whitePoint)
    }

    private var bits: Int { page.bitsPerSample }
    private var samples: Int { page.samplesPerPixel }
    private var isFloat: Bool { page.sampleFormat == TIFFPage.floatingPoint }

    /// The sample layouts the converter reads: `bits` bits of `sampleFormat` (1 unsigned
    /// integer, 3 IEEE floating point; 4, "void", is read as unsigned).
    static func reads(bits: Int, sampleFormat: Int) -> Bool {
        sampleFormat == TIFFPage.floatingPoint ? [16, 32, 64].contains(bits) : [1, 2, 4, 8, 16, 32].contains(bits)
    }

    /// Converts `count` pixels whose samples start at `sources` (one pointer for contiguous
    /// data; one a sample, the colour samples then alpha, for separate planes) into `target`.
    func convert(_ sources: UnsafePointer<UnsafeRawPointer>, count: Int, into target: UnsafeMutablePointer<UInt8>) {
        if bits == 8 && !page.separatePlanes && fastPath(sources[0], count: count, into: target) { return }
        generic(sources, count: count, into: target)
    }

    /// 8-bit interleaved gray and RGB, straight alpha or none: byte copies.
    private func fastPath(_ source: UnsafeRawPointer, count: Int, into target: UnsafeMutablePointer<UInt8>) -> Bool {
        let s = source.assumingMemoryBound(to: UInt8.self)
        let spp = samples
        switch (page.model, page.alpha) {
        case (.rgb, .none):
            for i in 0..<count {
                let p = s + i * spp, d = target + i * 4
                d[0] = p[0]; d[1] = p[1]; d[2] = p[2]; d[3] = 255
            }
            return true
        case (.rgb, .unassociated):
            if spp == 4 {
                (UnsafeMutableRawPointer(target)).copyMemory(from: source, byteCount: count * 4)
                return true
            }
            for i in 0..<count {
                let p = s + i * spp, d = target + i * 4
                d[0] = p[0]; d[1] = p[1]; d[2] = p[2]; d[3] = p[3]
            }
            return true
        case (.gray(minIsWhite: false), .none):
            for i in 0..<count {
                let g = s[i * spp], d = target + i * 4
                d[0] = g; d[1] = g; d[2] = g; d[3] = 255
            }
            return true
        case (.gray(minIsWhite: false), .unassociated):
            for i in 0..<count {
                let g = s[i * spp], d = target + i * 4
                d[0] = g; d[1] = g; d[2] = g; d[3] = s[i * spp + 1]
            }
            return true
        case (.palette, .none):
            page.palette.withUnsafeBufferPointer { lut in
                let out = UnsafeMutableRawPointer(target)
                for i in 0..<count { out.storeBytes(of: lut[Int(s[i * spp])], toByteOffset: i * 4, as: UInt32.self) }
            }
            return true
        default:
            return false
        }
    }

    /// Raw sample `s` of pixel `i`.
    @inline(__always)
    private func raw(_ sources: UnsafePointer<UnsafeRawPointer>, _ s: Int, _ i: Int) -> UInt32 {
        let separate = page.separatePlanes
        let base = separate ? sources[s] : sources[0]
        let index = separate ? i : i * samples + s
        switch bits {
        case 8: return UInt32(base.load(fromByteOffset: index, as: UInt8.self))
        case 16: return UInt32(base.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self))
        case 32: return base.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)
        case 64: return 0  // floating point only: read by `sample`
        default:
            let bit = index * bits
            let byte = UInt32(base.load(fromByteOffset: bit >> 3, as: UInt8.self))
            return (byte >> UInt32(8 - bits - (bit & 7))) & UInt32((1 << bits) - 1)
        }
    }

    /// Sample `s` of pixel `i` on a 0...65535 scale, whatever its width and type.
    @inline(__always)
    private func sample(_ sources: UnsafePointer<UnsafeRawPointer>, _ s: Int, _ i: Int, widen: UInt32) -> UInt32 {
        guard bits > 16 || isFloat else { return raw(sources, s, i) * widen }
        guard isFloat else { return raw(sources, s, i) >> 16 }
        let value: Double
        switch bits {
        case 16: value = Double(Float16(bitPattern: UInt16(truncatingIfNeeded: raw(sources, s, i))))
        case 32: value = Double(Float(bitPattern: raw(sources, s, i)))
        default:
            let separate = page.separatePlanes
            let base = separate ? sources[s] : sources[0]
            value = Double(bitPattern: base.loadUnaligned(fromByteOffset: (separate ? i : i * samples + s) * 8, as: UInt64.self))
        }
        guard value > 0 else { return 0 }  // NaN too
        return value >= 1 ? 65535 : UInt32((value * 65535).rounded())
    }

    /// The factor taking integer samples of up to 16 bits to the 0...65535 scale.
    private var widen: UInt32 { bits <= 16 ? 65535 / UInt32((1 << bits) - 1) : 1 }  // exact for 1, 2, 4, 8 and 16 bits

    @inline(__always)
    private func narrow(_ v: UInt32) -> UInt8 { UInt8((v * 255 + 32767) / 65535) }

    /// Writes only the alpha byte of `count` pixels (after a CMYK transform set it to 255).
    func writeAlpha(_ sources: UnsafePointer<UnsafeRawPointer>, count: Int, into target: UnsafeMutablePointer<UInt8>) {
        guard page.alpha != .none else { return }
        let widen = self.widen
        for i in 0..<count { target[i * 4 + 3] = narrow(sample(sources, page.colorSamples, i, widen: widen)) }
    }

    /// Any supported layout, one sample at a time through 16-bit intermediates.
    private func generic(_ sources: UnsafePointer<UnsafeRawPointer>, count: Int, into target: UnsafeMutablePointer<UInt8>) {
        let widen = self.widen
        let colorSamples = page.colorSamples
        let hasAlpha = page.alpha != .none
        @inline(__always) func raw(_ s: Int, _ i: Int) -> UInt32 { self.raw(sources, s, i) }
        @inline(__always) func sample(_ s: Int, _ i: Int) -> UInt32 { self.sample(sources, s, i, widen: widen) }
        let lut = page.palette
        lut.withUnsafeBufferPointer { palette in
            for i in 0..<count {
                let d = target + i * 4
                var a: UInt32 = 65535
                if hasAlpha { a = sample(colorSamples, i) }
                switch page.model {
                case .palette:
                    let index = Int(raw(0, i))
                    let rgba = index < palette.count ? palette[index] : 0xFF00_0000
                    d[0] = UInt8(truncatingIfNeeded: rgba); d[1] = UInt8(truncatingIfNeeded: rgba >> 8)
                    d[2] = UInt8(truncatingIfNeeded: rgba >> 16)
                case .gray(let minIsWhite):
                    var g = sample(0, i)
                    if minIsWhite { g = 65535 - g }
                    if page.alpha == .associated { g = a == 0 ? 0 : min(65535, (g * 65535 + a / 2) / a) }
                    let v = narrow(g)
                    d[0] = v; d[1] = v; d[2] = v
                case .rgb:
                    for c in 0..<3 {
                        var v = sample(c, i)
                        if page.alpha == .associated { v = a == 0 ? 0 : UInt32(min(65535, (UInt64(v) * 65535 + UInt64(a / 2)) / UInt64(a))) }
                        d[c] = narrow(v)
                    }
                case .cmyk:
                    let c = sample(0, i), m = sample(1, i), y = sample(2, i), k = sample(3, i)
                    if naiveCMYK {
                        let white = UInt64(65535 - k)
                        d[0] = narrow(UInt32(UInt64(65535 - c) * white / 65535))
                        d[1] = narrow(UInt32(UInt64(65535 - m) * white / 65535))
                        d[2] = narrow(UInt32(UInt64(65535 - y) * white / 65535))
                    } else {
                        // C, M, Y, K bytes for the CMYK transform (which sets alpha).
                        d[0] = narrow(c); d[1] = narrow(m); d[2] = narrow(y); d[3] = narrow(k)
                        continue
                    }
                case .lab(let unsignedAB):
                    // L* over the whole range; a* and b* signed (CIELab) or offset (ICCLab), in
                    // units of 1 (8-bit) or 1/256 (16-bit).
                    let half = Double(1 << (bits - 1)), full = Double((1 << bits) - 1)
                    func chroma(_ v: UInt32) -> Double {
                        let value = unsignedAB ? Double(v) - half : Double(v) - (Double(v) >= half ? 2 * half : 0)
                        return bits == 16 ? value / 256 : value
                    }
                    let (r, g, b) = lab.rgb(l: Double(raw(0, i)) * 100 / full, a: chroma(raw(1, i)), b: chroma(raw(2, i)))
                    d[0] = narrow(r); d[1] = narrow(g); d[2] = narrow(b)
                case .other:
                    d[0] = 0; d[1] = 0; d[2] = 0
                }
                d[3] = narrow(a)
            }
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How the samples of one PNG file become RGBA8, built once per file from its header and
/// colour chunks (`PLTE`, `tRNS`, `gAMA`, `sRGB`) and shared by every frame of an APNG.
///
/// - Colour samples go through a table indexed by the raw sample (65,536 entries for 16-bit
///   files): `round(v / max * 255)`, or with a `gAMA` chunk (and no `sRGB` chunk) more than 5%
///   away from sRGB's 1/2.2, `round((v / max) ^ (1 / (gamma * 2.2)) * 255)`, the conversion
///   browsers apply to tagged files. Untagged files keep their sample values at every bit depth.
/// - Alpha samples are never gamma-converted: 16-bit alpha rounds to 8 bits.
/// - `tRNS` makes a palette entry's alpha, or marks the one gray or RGB value (compared on the
///   raw samples) fully transparent.
struct PNGSampleConversion: Sendable {
    /// Colour type (0 gray, 2 RGB, 3 palette, 4 gray + alpha, 6 RGBA) and bit depth of the file.
    let colorType: Int
    let bitDepth: Int
    /// Colour sample to 8-bit output, indexed by the raw sample (`1 << bitDepth` entries).
    let colorTable: [UInt8]
    /// Palette entries as RGBA (gamma applied, `tRNS` alpha), for colour type 3.
    let palette: [UInt8]
    /// Number of palette entries.
    var paletteCount: Int { palette.count / 4 }
    /// The `tRNS` colour key as raw samples (gray: `keyRed` only), -1 when there is none.
    let keyRed: Int
    let keyGreen: Int
    let keyBlue: Int
    /// The exponent applied to colour samples, `nil` when none is.
    let gammaExponent: Double?

    /// Samples per pixel of the file's colour type.
    let channels: Int
    /// Bytes between a sample and the one the filters predict it from (at least 1).
    var filterUnit: Int { max(1, channels * bitDepth / 8) }

    /// Reads the colour chunks of `structure` (those before the first `IDAT`).
    /// With `appliesGamma` false the `gAMA` chunk is not applied (a colour transform built from
    /// the file's gamma and chromaticities then takes the stored samples).
    init(structure: PNGStructure, bytes: UnsafeRawBufferPointer, appliesGamma: Bool = true) {
        colorType = structure.colorType
        bitDepth = structure.bitDepth
        channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][structure.colorType] ?? 1
        var gamma: Double?
        var sRGB = false
        var plte: Range<Int>?
        var trns: Range<Int>?
        for chunk in structure.chunks {
            switch chunk.type {
            case PNGChunk.IDAT: break
            case PNGChunk.gAMA where appliesGamma: gamma = Double(PNGChunkValidator.readUInt32(bytes, at: chunk.data.lowerBound)) / 100_000
            case PNGChunk.sRGB: sRGB = true
            case PNGChunk.PLTE: plte = chunk.data
            case PNGChunk.tRNS: trns = chunk.data
            default: continue
            }
            if chunk.type == PNGChunk.IDAT { break }
        }
        var exponent: Double?
        if let gamma, gamma > 0, !sRGB, abs(gamma * 2.2 - 1) > 0.05 { exponent = 1 / (gamma * 2.2) }
        gammaExponent = exponent

        let depth = structure.colorType == 3 ? 8 : structure.bitDepth
        colorTable = PNGSampleConversion.table(depth: depth, exponent: exponent)

        var palette: [UInt8] = []
        if structure.colorType == 3, let plte {
            let entries = plte.count / 3
            palette.reserveCapacity(entries * 4)
            for entry in 0..<entries {
                let at = plte.lowerBound + entry * 3
                palette += [colorTable[Int(bytes[at])], colorTable[Int(bytes[at + 1])], colorTable[Int(bytes[at + 2])]]
                if let trns, entry < trns.count {
                    palette.append(bytes[trns.lowerBound + entry])
                } else {
                    palette.append(255)
                }
            }
        }
        self.palette = palette
        var key: [Int]?
        if let trns, structure.colorType == 0 || structure.colorType == 2 {
            let count = structure.colorType == 0 ? 1 : 3
            if trns.count >= count * 2 {
                key = (0..<count).map { Int(bytes[trns.lowerBound + $0 * 2]) << 8 | Int(bytes[trns.lowerBound + $0 * 2 + 1]) }
            }
        }
        keyRed = key?[0] ?? -1
        keyGreen = key.map { $0.count > 1 ? $0[1] : -1 } ?? -1
        keyBlue = key.map { $0.count > 2 ? $0[2] : -1 } ?? -1
    }

    /// `1 << depth` entries: each sample value to 8 bits, rounded, through `exponent` if any.
    static func table(depth: Int, exponent: Double?) -> [UInt8] {
        let count = 1 << depth
        let maximum = count - 1
        return [UInt8](unsafeUninitializedCapacity: count) { table, initialized in
            for value in 0..<count {
                if let exponent {
                    let level = pow(Double(value) / Double(maximum), exponent)
                    table[value] = UInt8(max(0, min(255, (level * 255 + 0.5).rounded(.down))))
                } else {
                    table[value] = UInt8((2 * value * 255 + maximum) / (2 * maximum))
                }
            }
            initialized = count
        }
    }

    /// A 16-bit alpha sample rounded to 8 bits.
    @inline(__always)
    static func alpha16(_ value: Int) -> UInt8 { UInt8((value * 510 + 65_535) / 131_070) }
}

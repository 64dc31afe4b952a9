#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads the orientation tag (0x0112) from EXIF metadata, for any format that carries EXIF
/// (JPEG's APP1 segment, PNG's `eXIf` chunk, WebP's `EXIF` chunk).
///
/// The blob is a TIFF structure (byte order `II` or `MM`, the magic number 42, the offset of
/// the first IFD), optionally preceded by JPEG's `Exif\0\0` identifier. Only the first IFD
/// (IFD0, where the orientation lives) is read. Every offset is checked against the blob:
/// malformed or hostile metadata yields `nil`, never a trap or a read past the end.
enum ExifOrientationReader {
    /// The orientation stated in `exif`, or `nil` when the blob is malformed, has no
    /// orientation tag, or states a value outside 1...8.
    static func orientation(in exif: Data) -> ImageOrientation? {
        exif.withUnsafeBytes { orientation(in: $0) }
    }

    /// The orientation stated in the EXIF blob `bytes`; see ``orientation(in:)-(Data)``.
    static func orientation(in bytes: UnsafeRawBufferPointer) -> ImageOrientation? {
        guard let tiff = TIFFView(bytes) else { return nil }
        guard let ifdOffset = tiff.uint32(at: 4), let entryCount = tiff.uint16(at: Int(ifdOffset)) else { return nil }
        let firstEntry = Int(ifdOffset) + 2
        for index in 0..<Int(entryCount) {
            let entry = firstEntry + index * 12
            guard let tag = tiff.uint16(at: entry) else { return nil }
            guard tag == orientationTag else { continue }
            let value: UInt32?
            switch tiff.uint16(at: entry + 2) {
            case shortType: value = tiff.uint16(at: entry + 8).map(UInt32.init)
            case longType: value = tiff.uint32(at: entry + 8)
            default: value = nil
            }
            return value.flatMap { ImageOrientation(rawValue: Int($0)) }
        }
        return nil
    }

    private static let orientationTag: UInt16 = 0x0112
    private static let shortType: UInt16 = 3
    private static let longType: UInt16 = 4
}

/// Bounds-checked reads from a TIFF structure, in its byte order, with offsets relative to
/// the TIFF header.
private struct TIFFView {
    private let bytes: UnsafeRawBufferPointer
    private let start: Int
    private let bigEndian: Bool

    /// `nil` unless `bytes` starts (after an optional `Exif\0\0`) with a TIFF header.
    init?(_ bytes: UnsafeRawBufferPointer) {
        let exifIdentifier: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00]
        let start = bytes.count >= 6 && bytes[0..<6].elementsEqual(exifIdentifier) ? 6 : 0
        guard bytes.count - start >= 8 else { return nil }
        switch (bytes[start], bytes[start + 1]) {
        case (0x49, 0x49): bigEndian = false
        case (0x4D, 0x4D): bigEndian = true
        default: return nil
        }
        self.bytes = bytes
        self.start = start
        guard uint16(at: 2) == 42 else { return nil }
    }

    /// The 16-bit value at `offset`, or `nil` when it lies outside the blob.
    func uint16(at offset: Int) -> UInt16? {
        guard let position = position(offset, length: 2) else { return nil }
        let first = UInt16(bytes[position]), second = UInt16(bytes[position + 1])
        return bigEndian ? first << 8 | second : second << 8 | first
    }

    /// The 32-bit value at `offset`, or `nil` when it lies outside the blob.
    func uint32(at offset: Int) -> UInt32? {
        guard let position = position(offset, length: 4) else { return nil }
        var value: UInt32 = 0
        for index in 0..<4 {
            let byte = UInt32(bytes[position + (bigEndian ? index : 3 - index)])
            value = value << 8 | byte
        }
        return value
    }

    private func position(_ offset: Int, length: Int) -> Int? {
        guard offset >= 0, offset <= bytes.count - start - length else { return nil }
        return start + offset
    }
}

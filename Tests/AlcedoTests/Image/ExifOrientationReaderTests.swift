import Foundation
import Testing
@testable import Alcedo

@Suite("EXIF orientation reader")
struct ExifOrientationReaderTests {
    /// A TIFF blob whose IFD0 holds `entries` (tag, type, value) in the given byte order,
    /// optionally behind JPEG's `Exif\0\0`.
    static func blob(bigEndian: Bool, exifPrefix: Bool = false, entries: [(tag: UInt16, type: UInt16, value: UInt32)],
                     ifdOffset: UInt32 = 8, magic: UInt16 = 42) -> [UInt8] {
        func u16(_ value: UInt16) -> [UInt8] {
            bigEndian ? [UInt8(value >> 8), UInt8(value & 0xFF)] : [UInt8(value & 0xFF), UInt8(value >> 8)]
        }
        func u32(_ value: UInt32) -> [UInt8] {
            let bytes = (0..<4).map { UInt8((value >> (8 * UInt32($0))) & 0xFF) }
            return bigEndian ? bytes.reversed() : bytes
        }
        var bytes: [UInt8] = exifPrefix ? Array("Exif".utf8) + [0, 0] : []
        bytes += bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]
        bytes += u16(magic) + u32(ifdOffset)
        bytes += u16(UInt16(entries.count))
        for entry in entries {
            bytes += u16(entry.tag) + u16(entry.type) + u32(1)
            // A SHORT value sits in the first two bytes of the value field.
            bytes += entry.type == 3 ? u16(UInt16(truncatingIfNeeded: entry.value)) + [0, 0] : u32(entry.value)
        }
        bytes += u32(0)
        return bytes
    }

    static func read(_ bytes: [UInt8]) -> ImageOrientation? {
        ExifOrientationReader.orientation(in: Data(bytes))
    }

    @Test("every value in both byte orders, with and without the Exif identifier", arguments: 1...8)
    func everyValue(_ value: Int) {
        let expected = ImageOrientation(rawValue: value)
        for bigEndian in [false, true] {
            for prefix in [false, true] {
                let bytes = Self.blob(bigEndian: bigEndian, exifPrefix: prefix,
                                      entries: [(0x0112, 3, UInt32(value))])
                #expect(Self.read(bytes) == expected, "bigEndian \(bigEndian), prefix \(prefix)")
            }
        }
    }

    @Test("the tag is found among others, and a LONG value is accepted")
    func amongOtherTags() {
        let entries: [(tag: UInt16, type: UInt16, value: UInt32)] = [(0x010F, 2, 0), (0x0110, 2, 0), (0x0112, 3, 6), (0x011A, 5, 0)]
        #expect(Self.read(Self.blob(bigEndian: true, entries: entries)) == .right)
        #expect(Self.read(Self.blob(bigEndian: false, entries: [(0x0112, 4, 8)])) == .left)
        #expect(Self.read(Self.blob(bigEndian: true, entries: [(0x0112, 4, 3)])) == .down)
    }

    @Test("no tag, values outside 1...8 and other types give nil")
    func absentOrInvalid() {
        #expect(Self.read(Self.blob(bigEndian: false, entries: [])) == nil)
        #expect(Self.read(Self.blob(bigEndian: false, entries: [(0x0110, 2, 0)])) == nil)
        #expect(Self.read(Self.blob(bigEndian: false, entries: [(0x0112, 3, 0)])) == nil)
        #expect(Self.read(Self.blob(bigEndian: true, entries: [(0x0112, 3, 9)])) == nil)
        #expect(Self.read(Self.blob(bigEndian: true, entries: [(0x0112, 3, 0xFFFF)])) == nil)
        #expect(Self.read(Self.blob(bigEndian: false, entries: [(0x0112, 2, 1)])) == nil)
    }

    @Test("malformed headers give nil")
    func malformed() {
        #expect(Self.read([]) == nil)
        #expect(Self.read(Array("Exif".utf8) + [0, 0]) == nil)
        #expect(Self.read([0x49, 0x4D, 42, 0, 8, 0, 0, 0, 0, 0]) == nil)
        #expect(Self.read(Self.blob(bigEndian: false, entries: [(0x0112, 3, 6)], magic: 43)) == nil)
        #expect(Self.read(Self.blob(bigEndian: false, entries: [(0x0112, 3, 6)], ifdOffset: 0xFFFF_FFFF)) == nil)
        #expect(Self.read(Self.blob(bigEndian: true, entries: [(0x0112, 3, 6)], ifdOffset: 1_000)) == nil)
        // An entry count far beyond the data.
        var bytes = Self.blob(bigEndian: false, entries: [(0x0110, 2, 0)])
        bytes[8] = 0xFF
        bytes[9] = 0xFF
        #expect(Self.read(bytes) == nil)
    }

    @Test("every prefix of a valid blob is read or refused, never past its end")
    func prefixes() {
        for bigEndian in [false, true] {
            let bytes = Self.blob(bigEndian: bigEndian, exifPrefix: true,
                                  entries: [(0x010F, 2, 0), (0x0112, 3, 5), (0x0131, 2, 0)])
            // The SHORT value of the second entry ends at 6 (identifier) + 8 (header) + 2 (count)
            // + 12 (first entry) + 10 (tag, type, count and the value's two bytes).
            let needed = 6 + 8 + 2 + 12 + 10
            for length in 0...bytes.count {
                let result = Self.read(Array(bytes.prefix(length)))
                #expect(result == (length >= needed ? .leftMirrored : nil), "length \(length)")
            }
        }
    }

    @Test("random blobs never trap")
    func random() {
        var random = SeededRandom(seed: 7)
        for _ in 0..<2_000 {
            var bytes = Self.blob(bigEndian: Bool.random(using: &random), entries: [(0x0112, 3, 6), (0x0110, 2, 0)])
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            _ = Self.read(bytes)
        }
    }
}

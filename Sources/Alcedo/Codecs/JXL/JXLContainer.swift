#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The ISO BMFF boxes of a JPEG XL container, read without libjxl.
enum JXLContainer {
    /// The signature box that opens a container (a bare codestream starts `FF 0A` instead).
    static let signature: [UInt8] = [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]

    /// The four-character types of the top-level boxes, in order, stopping at the first box
    /// whose size runs past the data; empty for a bare codestream.
    static func boxTypes(_ data: Data) -> [String] {
        data.withUnsafeBytes { raw in boxes(raw).map(\.type) }
    }

    /// The top-level boxes: each one's type and the range of its contents (a box whose size
    /// runs past the data is listed, its contents cut at the end, and ends the walk); at most
    /// 1,000; empty for a bare codestream.
    static func boxes(_ bytes: UnsafeRawBufferPointer) -> [(type: String, contents: Range<Int>)] {
        guard bytes.count >= signature.count, bytes.prefix(signature.count).elementsEqual(signature) else { return [] }
        var boxes: [(type: String, contents: Range<Int>)] = []
        var offset = 0
        while offset + 8 <= bytes.count && boxes.count < 1_000 {
            var size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            var header = 8
            if size == 1 {
                guard offset + 16 <= bytes.count else {
                    boxes.append((type, bytes.count..<bytes.count))
                    break
                }
                size = bytes[offset + 8..<offset + 16].reduce(0) { ($0 << 8) | Int($1) }
                header = 16
            } else if size == 0 {
                size = bytes.count - offset  // the last box runs to the end of the file
            }
            guard size >= header, size <= bytes.count - offset else {
                boxes.append((type, min(offset + header, bytes.count)..<bytes.count))
                break
            }
            boxes.append((type, (offset + header)..<(offset + size)))
            offset += size
        }
        return boxes
    }

    /// `true` when the file carries a `jbrd` box: it was made from a JPEG, losslessly.
    static func hasJPEGReconstruction(_ data: Data) -> Bool {
        boxTypes(data).contains("jbrd")
    }
}

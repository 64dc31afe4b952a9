import Foundation

/// The ISO BMFF boxes of a JPEG XL container, read without libjxl.
enum JXLContainer {
    /// The signature box that opens a container (a bare codestream starts `FF 0A` instead).
    static let signature: [UInt8] = [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]

    /// The four-character types of the top-level boxes, in order, stopping at the first box
    /// whose size runs past the data; empty for a bare codestream.
    static func boxTypes(_ data: Data) -> [String] {
        data.withUnsafeBytes { raw -> [String] in
            let bytes = UnsafeRawBufferPointer(raw)
            guard bytes.count >= signature.count, bytes.prefix(signature.count).elementsEqual(signature) else { return [] }
            var types: [String] = []
            var offset = 0
            while offset + 8 <= bytes.count && types.count < 1_000 {
                var size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
                let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
                types.append(type)
                if size == 1 {
                    guard offset + 16 <= bytes.count else { break }
                    size = bytes[offset + 8..<offset + 16].reduce(0) { ($0 << 8) | Int($1) }
                    guard size >= 16 else { break }
                } else if size == 0 {
                    break  // the last box runs to the end of the file
                } else if size < 8 {
                    break
                }
                guard size <= bytes.count - offset else { break }
                offset += size
            }
            return types
        }
    }

    /// `true` when the file carries a `jbrd` box: it was made from a JPEG, losslessly.
    static func hasJPEGReconstruction(_ data: Data) -> Bool {
        boxTypes(data).contains("jbrd")
    }
}

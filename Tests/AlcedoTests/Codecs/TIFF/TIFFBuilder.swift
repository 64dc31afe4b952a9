import Foundation

/// Writes small classic little-endian TIFFs tag by tag, so tests can state what a hostile
/// file declares (sizes, strip and tile tables, compressions) without a tool that refuses to.
struct TIFFBuilder {
    private var entries: [(tag: UInt16, type: UInt16, values: [UInt32])] = []
    /// Bytes placed after the directory (pixel data, usually); ``dataOffset`` says where.
    var data: [UInt8] = []

    /// SHORT (type 3) values for `tag`.
    mutating func short(_ tag: UInt16, _ values: UInt32...) { entries.append((tag, 3, values)) }
    /// LONG (type 4) values for `tag`.
    mutating func long(_ tag: UInt16, _ values: [UInt32]) { entries.append((tag, 4, values)) }
    mutating func long(_ tag: UInt16, _ values: UInt32...) { long(tag, values) }

    /// Where ``data`` starts in the file, once every tag is set.
    var dataOffset: UInt32 {
        let directory = 8 + 2 + entries.count * 12 + 4
        let arrays = entries.reduce(0) { sum, entry in
            let size = entry.values.count * (entry.type == 3 ? 2 : 4)
            return sum + (size > 4 ? (size + 1) & ~1 : 0)
        }
        return UInt32(directory + arrays)
    }

    /// The file: header, one directory (tags sorted), the arrays that do not fit in an entry, then ``data``.
    func build() -> Data {
        var out: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0]
        func put16(_ v: UInt32, into bytes: inout [UInt8]) { bytes += [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
        func put32(_ v: UInt32, into bytes: inout [UInt8]) { for i in 0..<4 { bytes.append(UInt8((v >> (8 * UInt32(i))) & 0xFF)) } }
        let sorted = entries.sorted { $0.tag < $1.tag }
        var arrays: [UInt8] = []
        let arraysStart = UInt32(8 + 2 + sorted.count * 12 + 4)
        put16(UInt32(sorted.count), into: &out)
        for entry in sorted {
            put16(UInt32(entry.tag), into: &out)
            put16(UInt32(entry.type), into: &out)
            put32(UInt32(entry.values.count), into: &out)
            var payload: [UInt8] = []
            for v in entry.values { entry.type == 3 ? put16(v, into: &payload) : put32(v, into: &payload) }
            if payload.count <= 4 {
                out += payload + [UInt8](repeating: 0, count: 4 - payload.count)
            } else {
                put32(arraysStart + UInt32(arrays.count), into: &out)
                arrays += payload
                if arrays.count & 1 == 1 { arrays.append(0) }
            }
        }
        put32(0, into: &out)
        return Data(out + arrays + data)
    }

    /// An uncompressed 8-bit RGB file of `width` x `height` in one strip holding `pixels`
    /// (the strip table can be overridden with `stripOffset` and `stripByteCount`).
    static func rgb(width: UInt32, height: UInt32, pixels: [UInt8], stripOffset: UInt32? = nil,
                    stripByteCount: UInt32? = nil, compression: UInt32 = 1) -> Data {
        var builder = TIFFBuilder()
        builder.long(256, width)
        builder.long(257, height)
        builder.short(258, 8, 8, 8)
        builder.short(259, compression)
        builder.short(262, 2)
        builder.short(277, 3)
        builder.long(278, height)
        builder.long(279, stripByteCount ?? UInt32(pixels.count))
        builder.long(273, 0)  // placeholder, set below once the data offset is known
        builder.data = pixels
        let offset = stripOffset ?? builder.dataOffset
        builder.entries.removeAll { $0.tag == 273 }
        builder.long(273, offset)
        return builder.build()
    }
}

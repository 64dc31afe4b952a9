#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The directory of an icon (ICO, type 1) or cursor (CUR, type 2) file, each entry checked
/// against the data and described by its own PNG or bitmap header (the directory's width,
/// height and colour bytes are hints that writers get wrong, and hostile files lie in).
struct ICODirectory {
    /// One entry: where its bytes lie and what its own header says.
    struct Entry {
        /// The bytes of the entry within the file.
        let range: Range<Int>
        /// What the entry's header says (`nil` when it is unreadable: see ``problem``).
        let description: IconEntry?
        /// Why the entry cannot be decoded, when it cannot.
        let problem: AlcedoError?
    }

    /// `true` for a cursor (type 2).
    let isCursor: Bool
    let entries: [Entry]

    static let maximumEntries = 1024

    static func parse(_ bytes: UnsafeRawBufferPointer) throws(AlcedoError) -> ICODirectory {
        guard !bytes.isEmpty else { throw .decodingError(reason: .emptyData) }
        guard bytes.count >= 6 else { throw .decodingError(reason: .truncated(format: .ico, message: "the file ends inside the directory header")) }
        let reader = LittleEndianReader(bytes)
        let type = reader.u16(2)
        guard reader.u16(0) == 0, type == 1 || type == 2 else {
            throw .decodingError(reason: .invalidHeader(format: .ico, message: "not an icon or cursor directory (type \(type))"))
        }
        let count = Int(reader.u16(4))
        guard count > 0 else { throw .decodingError(reason: .invalidHeader(format: .ico, message: "the directory has no entries")) }
        guard count <= maximumEntries else {
            throw .decodingError(reason: .invalidHeader(format: .ico, message: "\(count) entries is over the limit of \(maximumEntries)"))
        }
        guard 6 + count * 16 <= bytes.count else {
            throw .decodingError(reason: .truncated(format: .ico, message: "the file ends inside the directory of \(count) entries"))
        }
        var entries: [Entry] = []
        for index in 0..<count {
            let e = LittleEndianReader(bytes, base: 6 + index * 16)
            let size = Int(e.u32(8)), offset = Int(e.u32(12))
            let hotSpot: (x: Int, y: Int)? = type == 2 ? (Int(e.u16(4)), Int(e.u16(6))) : nil
            guard size > 0, offset >= 6, offset <= bytes.count, size <= bytes.count - offset else {
                let problem = AlcedoError.decodingError(reason: .truncated(format: .ico, message:
                    "entry \(index) states \(size) bytes at offset \(offset), past the end of the \(bytes.count)-byte file"))
                entries.append(Entry(range: 0..<0, description: nil, problem: problem))
                continue
            }
            let range = offset..<offset + size
            do throws(AlcedoError) {
                let description = try describe(UnsafeRawBufferPointer(rebasing: bytes[range]), hotSpot: hotSpot)
                entries.append(Entry(range: range, description: description, problem: nil))
            } catch {
                entries.append(Entry(range: range, description: nil, problem: error))
            }
        }
        return ICODirectory(isCursor: type == 2, entries: entries)
    }

    /// Whether `bytes` start with the PNG signature.
    static func isPNG(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 8 && Array(bytes[0..<8]) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    }

    /// The entry's size and depth from its own header: a PNG's `IHDR` or a bitmap's DIB header.
    private static func describe(_ bytes: UnsafeRawBufferPointer, hotSpot: (x: Int, y: Int)?) throws(AlcedoError) -> IconEntry {
        if isPNG(bytes) {
            guard bytes.count >= 33, Array(bytes[12..<16]) == Array("IHDR".utf8) else {
                throw .decodingError(reason: .truncated(format: .ico, message: "a PNG entry without its IHDR chunk"))
            }
            func be32(_ o: Int) -> Int { Int(bytes[o]) << 24 | Int(bytes[o + 1]) << 16 | Int(bytes[o + 2]) << 8 | Int(bytes[o + 3]) }
            guard be32(16) > 0, be32(20) > 0 else {
                throw .decodingError(reason: .invalidHeader(format: .ico, message: "a PNG entry of \(be32(16))x\(be32(20)) pixels"))
            }
            let depth = Int(bytes[24])
            let channels: Int
            switch bytes[25] {
            case 0, 3: channels = 1
            case 4: channels = 2
            case 2: channels = 3
            default: channels = 4
            }
            return IconEntry(width: be32(16), height: be32(20), bitDepth: depth * channels, encoding: .png,
                             hotSpot: hotSpot, byteCount: bytes.count)
        }
        let header = try BMPHeader.parse(bytes, dibOffset: 0, fileHeaderPixelOffset: nil, iconBitmap: true, format: .ico)
        return IconEntry(width: header.width, height: header.height, bitDepth: header.bitCount, encoding: .bmp,
                         hotSpot: hotSpot, byteCount: bytes.count)
    }

    /// The entry to decode: the one closest to `preferred` when given; else, with `target`, the
    /// smallest that covers it under `mode`; else the largest (ties: deeper, then earlier).
    func choose(preferred: PixelSize?, target: PixelSize?, mode: ContentMode) -> Int? {
        let usable = entries.indices.filter { entries[$0].description != nil }
        func area(_ i: Int) -> Int { entries[i].description!.width * entries[i].description!.height }
        func depth(_ i: Int) -> Int { entries[i].description!.bitDepth }
        let largestFirst = usable.sorted { a, b in
            area(a) != area(b) ? area(a) > area(b) : (depth(a) != depth(b) ? depth(a) > depth(b) : a < b)
        }
        if let preferred {
            func distance(_ i: Int) -> Int {
                abs(entries[i].description!.width - preferred.width) + abs(entries[i].description!.height - preferred.height)
            }
            return largestFirst.min { distance($0) < distance($1) }
        }
        if let target {
            let covering = largestFirst.filter { i in
                let sx = Double(target.width) / Double(entries[i].description!.width)
                let sy = Double(target.height) / Double(entries[i].description!.height)
                return (mode == .aspectFit ? min(sx, sy) : max(sx, sy)) <= 1
            }
            if let smallest = covering.last { return smallest }
        }
        return largestFirst.first
    }
}

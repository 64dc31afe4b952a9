#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Finds and writes ``EmbeddedMetadata`` blocks in JPEG, PNG and WebP containers, by walking
/// segment and chunk headers only. Malformed containers end the walk (reading) or leave the
/// file unchanged (writing).
enum MetadataContainers {
    static let exifIdentifier: [UInt8] = Array("Exif".utf8) + [0, 0]
    static let xmpIdentifier: [UInt8] = Array("http://ns.adobe.com/xap/1.0/".utf8) + [0]
    static let photoshopIdentifier: [UInt8] = Array("Photoshop 3.0".utf8) + [0]
    static let xmpKeyword: [UInt8] = Array("XML:com.adobe.xmp".utf8)

    // MARK: JPEG

    static func readJPEG(_ bytes: UnsafeRawBufferPointer) -> EmbeddedMetadata {
        var metadata = EmbeddedMetadata()
        var offset = 2
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) || marker == 0xFF {
                offset += marker == 0xFF ? 1 : 2
                continue
            }
            if marker == 0xDA || marker == 0xD9 { break }  // start of scan: no metadata after it
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let start = offset + 4, end = offset + 2 + length
            guard length >= 2, end <= bytes.count else { break }
            let body = bytes[start..<end]
            if marker == 0xE1, metadata.exif == nil, body.starts(with: exifIdentifier) {
                metadata.exif = Data(body.dropFirst(exifIdentifier.count))
            } else if marker == 0xE1, metadata.xmp == nil, body.starts(with: xmpIdentifier) {
                metadata.xmp = Data(body.dropFirst(xmpIdentifier.count))
            } else if marker == 0xED, metadata.iptc == nil, body.starts(with: photoshopIdentifier) {
                metadata.iptc = iptcResource(Array(body.dropFirst(photoshopIdentifier.count)))
            }
            offset = end
        }
        return metadata
    }

    /// The IPTC resource (0x0404) of a Photoshop image resource block.
    static func iptcResource(_ block: [UInt8]) -> Data? {
        var offset = 0
        while offset + 12 <= block.count, block[offset..<(offset + 4)].elementsEqual(Array("8BIM".utf8)) {
            let id = Int(block[offset + 4]) << 8 | Int(block[offset + 5])
            let nameLength = Int(block[offset + 6])
            var position = offset + 6 + 1 + nameLength
            if (1 + nameLength) % 2 == 1 { position += 1 }  // the Pascal name is padded to even
            guard position + 4 <= block.count else { return nil }
            let size = Int(block[position]) << 24 | Int(block[position + 1]) << 16 | Int(block[position + 2]) << 8 | Int(block[position + 3])
            let start = position + 4
            guard size >= 0, start + size <= block.count else { return nil }
            if id == 0x0404 { return size > 0 ? Data(block[start..<(start + size)]) : nil }
            offset = start + size + size % 2
        }
        return nil
    }

    static func writeJPEG(_ bytes: [UInt8], _ metadata: EmbeddedMetadata) -> [UInt8]? {
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var insertAt = 2
        if bytes[2] == 0xFF, bytes[3] == 0xE0, bytes.count > 6 {
            insertAt = 4 + (Int(bytes[4]) << 8 | Int(bytes[5]))
            guard insertAt <= bytes.count else { return nil }
        }
        var segments: [UInt8] = []
        func segment(_ marker: UInt8, _ body: [UInt8]) {
            let length = body.count + 2
            guard length <= 0xFFFF else { return }  // one segment at most: a larger block is left out
            segments += [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)] + body
        }
        if let exif = metadata.exif { segment(0xE1, exifIdentifier + [UInt8](exif)) }
        if let xmp = metadata.xmp { segment(0xE1, xmpIdentifier + [UInt8](xmp)) }
        if let iptc = metadata.iptc {
            let size = iptc.count
            let resource = Array("8BIM".utf8) + [0x04, 0x04, 0, 0]
                + [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
                + [UInt8](iptc) + (size % 2 == 1 ? [0] : [])
            segment(0xED, photoshopIdentifier + resource)
        }
        return Array(bytes[..<insertAt]) + segments + bytes[insertAt...]
    }

    // MARK: PNG

    /// Calls `body` with each chunk's type and data range until it returns `false`, `IEND`
    /// or the end of valid chunks.
    private static func pngChunks<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, _ body: (String, Range<Int>, Range<Int>) -> Bool)
        where Bytes.Index == Int {
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let start = offset + 8, end = start + length + 4
            guard length >= 0, end <= bytes.count else { return }
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            guard body(type, start..<(start + length), offset..<end), type != "IEND" else { return }
            offset = end
        }
    }

    static func readPNG(_ bytes: UnsafeRawBufferPointer) -> EmbeddedMetadata {
        var metadata = EmbeddedMetadata()
        pngChunks(bytes) { type, data, _ in
            if type == "eXIf", metadata.exif == nil {
                metadata.exif = Data(bytes[data])
            } else if type == "iTXt", metadata.xmp == nil, bytes[data].starts(with: xmpKeyword + [0]) {
                // keyword, 0, compression flag, method, language, 0, translated keyword, 0, text
                var position = data.lowerBound + xmpKeyword.count + 1
                guard position + 2 <= data.upperBound, bytes[position] == 0 else { return true }  // compressed: not read
                position += 2
                for _ in 0..<2 {
                    guard let zero = bytes[position..<data.upperBound].firstIndex(of: 0) else { return true }
                    position = zero + 1
                }
                metadata.xmp = Data(bytes[position..<data.upperBound])
            }
            return true
        }
        return metadata
    }

    static func writePNG(_ bytes: [UInt8], _ metadata: EmbeddedMetadata) -> [UInt8]? {
        guard bytes.count > 8 + 25 else { return nil }
        var added: [UInt8] = []
        if let exif = metadata.exif { added += ICCProfileEmbedding.chunk("eXIf", [UInt8](exif)) }
        if let xmp = metadata.xmp { added += ICCProfileEmbedding.chunk("iTXt", xmpKeyword + [0, 0, 0, 0, 0] + [UInt8](xmp)) }
        var output = Array(bytes[..<8])
        var complete = false
        pngChunks(bytes) { type, _, whole in
            output += bytes[whole]
            if type == "IHDR" { output += added }
            complete = type == "IEND"
            return true
        }
        return complete ? output : nil
    }

    // MARK: WebP

    static func readWebP(_ bytes: UnsafeRawBufferPointer) -> EmbeddedMetadata {
        var metadata = EmbeddedMetadata()
        guard bytes.count >= 12 else { return metadata }
        var offset = 12
        while offset + 8 <= bytes.count {
            let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
            let start = offset + 8
            guard size >= 0, start + size <= bytes.count else { break }
            let type = String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self)
            let body = bytes[start..<(start + size)]
            if type == "EXIF", metadata.exif == nil {
                metadata.exif = Data(body.starts(with: exifIdentifier) ? body.dropFirst(exifIdentifier.count) : body)
            } else if type == "XMP ", metadata.xmp == nil {
                metadata.xmp = Data(body)
            }
            offset = start + size + (size & 1)
        }
        return metadata
    }

    /// WebP: the extended format (`VP8X` with the EXIF and XMP flags) with `EXIF` and `XMP `
    /// chunks after the image data, where the container's specification orders them.
    static func writeWebP(_ bytes: [UInt8], _ metadata: EmbeddedMetadata, width: Int, height: Int, hasAlpha: Bool) -> [UInt8]? {
        guard bytes.count > 20, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) else { return nil }
        func chunk(_ type: String, _ data: Data) -> [UInt8] {
            Array(type.utf8) + ICCProfileEmbedding.littleEndian(UInt32(data.count), bytes: 4) + [UInt8](data) + (data.count % 2 == 1 ? [0] : [])
        }
        var flags: UInt8 = 0
        var trailer: [UInt8] = []
        if let exif = metadata.exif { flags |= 0x08; trailer += chunk("EXIF", exif) }
        if let xmp = metadata.xmp { flags |= 0x04; trailer += chunk("XMP ", xmp) }
        guard flags != 0 else { return nil }
        var body: [UInt8]
        if Array(bytes[12..<16]) == Array("VP8X".utf8) {
            guard bytes.count >= 30 else { return nil }
            body = Array(bytes[12...])
            body[8] |= flags
        } else {
            let vp8x = Array("VP8X".utf8) + ICCProfileEmbedding.littleEndian(10, bytes: 4) + [flags | (hasAlpha ? 0x10 : 0), 0, 0, 0]
                + ICCProfileEmbedding.littleEndian(UInt32(width - 1), bytes: 3) + ICCProfileEmbedding.littleEndian(UInt32(height - 1), bytes: 3)
            body = vp8x + bytes[12...]
        }
        body = Array("WEBP".utf8) + body + trailer
        return Array("RIFF".utf8) + ICCProfileEmbedding.littleEndian(UInt32(body.count), bytes: 4) + body
    }
}

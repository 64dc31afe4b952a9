import CPNG
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes an ICC profile into encoded JPEG, PNG and WebP bytes, for images whose pixels are
/// still in their source's colour space (``ColorManagement/preserve``).
enum ICCProfileEmbedding {
    /// `data` with `profile` embedded, or `data` itself when `profile` is `nil` or the
    /// bytes are not laid out as the format's encoder writes them.
    static func embed(_ profile: ImageColorProfile?, in data: Data, format: ImageFormat,
                      width: Int, height: Int, hasAlpha: Bool) -> Data {
        guard let profile, !profile.data.isEmpty else { return data }
        switch format {
        case .jpeg: return jpeg(data, icc: profile.data) ?? data
        case .png, .apng: return png(data, icc: profile.data) ?? data
        case .webp: return webp(data, icc: profile.data, width: width, height: height, hasAlpha: hasAlpha) ?? data
        default: return data
        }
    }

    /// JPEG: `APP2` `ICC_PROFILE` segments (at most 65,519 profile bytes each, numbered from 1)
    /// after the SOI marker and the `APP0` JFIF segment.
    static func jpeg(_ data: Data, icc: Data) -> Data? {
        let bytes = [UInt8](data)
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var insertAt = 2
        if bytes.count > 6, bytes[2] == 0xFF, bytes[3] == 0xE0 {
            insertAt = 4 + (Int(bytes[4]) << 8 | Int(bytes[5]))
            guard insertAt <= bytes.count else { return nil }
        }
        let chunkSize = 65_519
        let count = (icc.count + chunkSize - 1) / chunkSize
        guard count <= 255 else { return nil }
        var segments: [UInt8] = []
        let profile = [UInt8](icc)
        for index in 0..<count {
            let chunk = profile[(index * chunkSize)..<min(profile.count, (index + 1) * chunkSize)]
            let length = 2 + 12 + 2 + chunk.count
            segments += [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)]
            segments += Array("ICC_PROFILE".utf8) + [0, UInt8(index + 1), UInt8(count)]
            segments += chunk
        }
        return Data(bytes[..<insertAt] + segments + bytes[insertAt...])
    }

    /// PNG: an `iCCP` chunk right after `IHDR`; the `sRGB`, `gAMA`, `cHRM` and `iCCP` chunks
    /// the encoder may have written are dropped (the profile replaces them).
    static func png(_ data: Data, icc: Data) -> Data? {
        let bytes = [UInt8](data)
        guard bytes.count > 8 + 25 else { return nil }
        var compressedLength = compressBound(uLong(icc.count))
        var compressed = [UInt8](repeating: 0, count: Int(compressedLength))
        let status = icc.withUnsafeBytes { source in
            compress2(&compressed, &compressedLength, source.baseAddress!.assumingMemoryBound(to: Bytef.self),
                      uLong(icc.count), Z_BEST_COMPRESSION)
        }
        guard status == Z_OK else { return nil }
        let body = Array("ICC Profile".utf8) + [0, 0] + compressed[..<Int(compressedLength)]
        var output = Array(bytes[..<8])
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let end = offset + 12 + length
            guard end <= bytes.count else { return nil }
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            if !["sRGB", "gAMA", "cHRM", "iCCP"].contains(type) { output += bytes[offset..<end] }
            if type == "IHDR" { output += chunk("iCCP", body) }
            offset = end
        }
        return Data(output)
    }

    static func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        let crcInput = typeBytes + body
        let crc = UInt32(truncatingIfNeeded: alcedo_crc32(0, crcInput, UInt32(crcInput.count)))
        return bigEndian(UInt32(body.count)) + crcInput + bigEndian(crc)
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    static func littleEndian(_ value: UInt32, bytes count: Int) -> [UInt8] {
        (0..<count).map { UInt8(value >> (8 * UInt32($0)) & 0xFF) }
    }

    /// WebP: the extended format (`VP8X` with the ICC flag) with an `ICCP` chunk before the image data.
    static func webp(_ data: Data, icc: Data, width: Int, height: Int, hasAlpha: Bool) -> Data? {
        let bytes = [UInt8](data)
        guard bytes.count > 20, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) else { return nil }
        let iccChunk = Array("ICCP".utf8) + littleEndian(UInt32(icc.count), bytes: 4) + [UInt8](icc) + (icc.count % 2 == 1 ? [0] : [])
        var body: [UInt8]
        if Array(bytes[12..<16]) == Array("VP8X".utf8) {
            guard bytes.count >= 30 else { return nil }
            var vp8x = Array(bytes[12..<30])
            vp8x[8] |= 0x20
            body = vp8x + iccChunk + bytes[30...]
        } else {
            let flags: UInt8 = 0x20 | (hasAlpha ? 0x10 : 0)
            let vp8x = Array("VP8X".utf8) + littleEndian(10, bytes: 4) + [flags, 0, 0, 0]
                + littleEndian(UInt32(width - 1), bytes: 3) + littleEndian(UInt32(height - 1), bytes: 3)
            body = vp8x + iccChunk + bytes[12...]
        }
        body = Array("WEBP".utf8) + body
        return Data(Array("RIFF".utf8) + littleEndian(UInt32(body.count), bytes: 4) + body)
    }
}

/// Reads the picture size an HEVC decoder outputs from the sequence parameter set (SPS) in an
/// `hvcC` box (ISO/IEC 14496-15 decoder configuration; the SPS syntax of ITU-T H.265 7.3.2.2),
/// for checks made before libheif decodes anything.
enum HEVCSequenceParameters {
    /// The output size of the first SPS in an `hvcC` payload: `pic_width_in_luma_samples` x
    /// `pic_height_in_luma_samples` less the conformance window. `nil` when there is no SPS or
    /// it cannot be read.
    static func outputSize(hvcC: [UInt8]) -> (width: Int, height: Int)? {
        guard let sps = firstSPS(in: hvcC) else { return nil }
        var reader = BitReader(bytes: unescaped(sps))
        guard reader.skip(16) else { return nil }  // NAL unit header
        guard reader.skip(4), let maxSubLayersMinus1 = reader.bits(3), reader.skip(1) else { return nil }
        // profile_tier_level(1, sps_max_sub_layers_minus1)
        guard reader.skip(88 + 8) else { return nil }
        var profilePresent = [Bool](), levelPresent = [Bool]()
        for _ in 0..<maxSubLayersMinus1 {
            guard let profile = reader.bits(1), let level = reader.bits(1) else { return nil }
            profilePresent.append(profile == 1)
            levelPresent.append(level == 1)
        }
        if maxSubLayersMinus1 > 0, !reader.skip(2 * (8 - maxSubLayersMinus1)) { return nil }
        for index in 0..<maxSubLayersMinus1 {
            if profilePresent[index], !reader.skip(88) { return nil }
            if levelPresent[index], !reader.skip(8) { return nil }
        }
        guard reader.exponentialGolomb() != nil, let chromaFormat = reader.exponentialGolomb() else { return nil }
        var separateColourPlanes = false
        if chromaFormat == 3 {
            guard let flag = reader.bits(1) else { return nil }
            separateColourPlanes = flag == 1
        }
        guard let width = reader.exponentialGolomb(), let height = reader.exponentialGolomb(),
              let window = reader.bits(1) else { return nil }
        guard window == 1 else { return (width, height) }
        guard let left = reader.exponentialGolomb(), let right = reader.exponentialGolomb(),
              let top = reader.exponentialGolomb(), let bottom = reader.exponentialGolomb() else { return nil }
        let subWidth = !separateColourPlanes && (chromaFormat == 1 || chromaFormat == 2) ? 2 : 1
        let subHeight = !separateColourPlanes && chromaFormat == 1 ? 2 : 1
        return (width - subWidth * (left + right), height - subHeight * (top + bottom))
    }

    /// The first NAL unit of type 33 (SPS) in the `hvcC` arrays.
    static func firstSPS(in hvcC: [UInt8]) -> ArraySlice<UInt8>? {
        guard hvcC.count > 22 else { return nil }
        var position = 23
        for _ in 0..<Int(hvcC[22]) {
            guard position + 3 <= hvcC.count else { return nil }
            let type = hvcC[position] & 0x3F
            let count = Int(hvcC[position + 1]) << 8 | Int(hvcC[position + 2])
            position += 3
            for _ in 0..<count {
                guard position + 2 <= hvcC.count else { return nil }
                let length = Int(hvcC[position]) << 8 | Int(hvcC[position + 1])
                position += 2
                guard position + length <= hvcC.count else { return nil }
                if type == 33 { return hvcC[position..<position + length] }
                position += length
            }
        }
        return nil
    }

    /// The NAL unit without its emulation prevention bytes (the 3 of each 00 00 03).
    static func unescaped(_ nal: ArraySlice<UInt8>) -> [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(nal.count)
        var zeros = 0
        for byte in nal {
            if zeros >= 2 && byte == 3 {
                zeros = 0
                continue
            }
            zeros = byte == 0 ? zeros + 1 : 0
            result.append(byte)
        }
        return result
    }

    struct BitReader {
        let bytes: [UInt8]
        var position = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        /// The next `count` (at most 32) bits, most significant first.
        mutating func bits(_ count: Int) -> Int? {
            guard count <= 32, position + count <= bytes.count * 8 else { return nil }
            var value = 0
            for _ in 0..<count {
                value = value << 1 | Int(bytes[position >> 3] >> (7 - UInt8(position & 7)) & 1)
                position += 1
            }
            return value
        }

        mutating func skip(_ count: Int) -> Bool {
            guard count >= 0, position + count <= bytes.count * 8 else { return false }
            position += count
            return true
        }

        /// An unsigned Exp-Golomb number (`ue(v)`), at most 32 leading zeros.
        mutating func exponentialGolomb() -> Int? {
            var zeros = 0
            while true {
                guard let bit = bits(1) else { return nil }
                if bit == 1 { break }
                zeros += 1
                if zeros > 31 { return nil }
            }
            guard let rest = bits(zeros) else { return nil }
            return (1 << zeros) - 1 + rest
        }
    }
}

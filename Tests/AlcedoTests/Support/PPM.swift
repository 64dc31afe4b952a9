import Foundation

/// A reader for the binary PPM (P6) and PGM (P5) reference decodes among the fixtures.
struct PPMImage {
    let width: Int
    let height: Int
    /// 3 bytes a pixel (PGM samples are expanded to RGB).
    let rgb: [UInt8]

    init(data: Data) throws {
        let bytes = [UInt8](data)
        var index = 0
        func token() throws -> String {
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "#") {
                    while index < bytes.count && bytes[index] != 0x0A { index += 1 }
                } else if bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                    index += 1
                } else { break }
            }
            let start = index
            while index < bytes.count && !(bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09) {
                index += 1
            }
            guard start < index else { throw CocoaError(.fileReadCorruptFile) }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
        let magic = try token()
        guard magic == "P6" || magic == "P5", let w = Int(try token()), let h = Int(try token()),
              let maxValue = Int(try token()), maxValue == 255 else { throw CocoaError(.fileReadCorruptFile) }
        index += 1
        let channels = magic == "P6" ? 3 : 1
        guard bytes.count - index >= w * h * channels else { throw CocoaError(.fileReadCorruptFile) }
        width = w
        height = h
        if channels == 3 {
            rgb = Array(bytes[index..<index + w * h * 3])
        } else {
            rgb = bytes[index..<index + w * h].flatMap { [$0, $0, $0] }
        }
    }
}

/// Compares RGB(A) buffers.
enum PixelCompare {
    /// The largest absolute difference between the RGB channels of `rgba` (4 bytes a pixel)
    /// and `rgb` (3 bytes a pixel).
    static func maxDifference(rgba: [UInt8], rgb: [UInt8]) -> Int {
        precondition(rgba.count / 4 == rgb.count / 3)
        var worst = 0
        for i in 0..<(rgb.count / 3) {
            for c in 0..<3 { worst = max(worst, abs(Int(rgba[i * 4 + c]) - Int(rgb[i * 3 + c]))) }
        }
        return worst
    }

    /// Peak signal-to-noise ratio in dB between two buffers of equal length (`.infinity` when equal).
    static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        precondition(a.count == b.count)
        var sum = 0.0
        for i in 0..<a.count { let d = Double(a[i]) - Double(b[i]); sum += d * d }
        if sum == 0 { return .infinity }
        let mse = sum / Double(a.count)
        return 10 * log10(255 * 255 / mse)
    }
}

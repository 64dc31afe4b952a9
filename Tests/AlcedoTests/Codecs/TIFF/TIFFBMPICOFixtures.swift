import Foundation
import Testing
@testable import Alcedo

/// The files of `Fixtures/tiff-bmp-ico-generated` and their reference decodes.
enum ConformanceFixture {
    static let folder = "tiff-bmp-ico-generated"

    static func data(_ name: String) throws -> Data { try Fixtures.data("\(folder)/\(name)") }

    /// ImageMagick's RGBA8 decode of `name` (`suffix`: `.page1`, `.0`… for other pages and entries).
    static func reference(_ name: String, suffix: String = "") throws -> [UInt8] {
        [UInt8](try Fixtures.data("\(folder)/\(name)\(suffix).rgba"))
    }

    /// The largest difference between two RGBA buffers of one size (Int.max when sizes differ).
    static func maxDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard a.count == b.count else { return Int.max }
        var worst = 0
        for i in a.indices { worst = max(worst, abs(Int(a[i]) - Int(b[i]))) }
        return worst
    }

    /// The largest difference over pixels whose reference alpha is not 0 (colour under full
    /// transparency is free), alpha always compared.
    static func maxVisibleDifference(_ image: [UInt8], _ reference: [UInt8]) -> Int {
        guard image.count == reference.count else { return Int.max }
        var worst = 0
        for p in stride(from: 0, to: image.count, by: 4) {
            worst = max(worst, abs(Int(image[p + 3]) - Int(reference[p + 3])))
            guard reference[p + 3] != 0 else { continue }
            for c in 0..<3 { worst = max(worst, abs(Int(image[p + c]) - Int(reference[p + c]))) }
        }
        return worst
    }
}

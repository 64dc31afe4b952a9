import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Hummingbird

/// The client hints a request carries, read as imgproxy reads them when
/// ``ImageServerConfiguration/clientHints`` is on: `Sec-CH-DPR` (else `DPR`), a number in
/// (0, 8], and `Sec-CH-Width` (else `Width`), a positive integer of device pixels.
struct ClientHints: Sendable, Equatable {
    /// The header fields read, in the order imgproxy names them in `Vary`.
    static let headerNames = ["Sec-CH-DPR", "DPR", "Sec-CH-Width", "Width"]

    var dpr: Double?
    var width: Int?

    init(dpr: Double? = nil, width: Int? = nil) {
        self.dpr = dpr
        self.width = width
    }

    init(_ headers: HTTPFields) {
        for name in ["Sec-CH-DPR", "DPR"] {
            if let field = HTTPField.Name(name), let text = headers[field], let value = Double(text.trimmingSpaces()),
               value > 0, value <= 8 {
                dpr = value
                break
            }
        }
        for name in ["Sec-CH-Width", "Width"] {
            if let field = HTTPField.Name(name), let text = headers[field], let value = Int(text.trimmingSpaces()),
               value > 0 {
                width = value
                break
            }
        }
    }

    /// Sets the options a URL starts from: the DPR, and the width in CSS pixels (the hint's
    /// device pixels divided by the DPR, rounded); the URL's own options are applied after.
    func apply(to options: inout ProcessingOptions) {
        if let dpr { options.dpr = dpr }
        if let width { options.width = Int((Double(width) / (dpr ?? 1)).rounded()) }
    }
}

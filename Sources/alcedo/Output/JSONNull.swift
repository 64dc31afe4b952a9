import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Optional {
    /// The wrapped value, or ``JSONNull`` so that ``Console/jsonLine(_:)`` writes an explicit
    /// `null` for a missing value instead of leaving the key out.
    var orJSONNull: Any {
        switch self {
        case .some(let value): value
        case .none: JSONNull()
        }
    }
}

extension Double {
    /// Rounded to one decimal, so JSON shows `12.3` rather than `12.300000000000001`.
    var roundedToTenth: Double { (self * 10).rounded() / 10 }
}

import CJXL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// libjxl, loaded on first use (see `CJXL.h`): a process that never reads or writes JPEG XL
/// does not pay for loading it and the libraries it brings.
enum JXLLibrary {
    private static let table: Result<alcedo_jxl_api, DynamicLibraryFailure> = {
        guard let table = alcedo_jxl_load() else {
            return .failure(DynamicLibraryFailure(message: alcedo_jxl_load_error().map { String(cString: $0) } ?? "libjxl could not be loaded"))
        }
        return .success(table.pointee)
    }()

    /// The function table, or the error `failure` makes of the reason libjxl could not be loaded.
    static func functions(orThrow failure: (String) -> AlcedoError) throws(AlcedoError) -> alcedo_jxl_api {
        switch table {
        case .success(let functions): return functions
        case .failure(let reason): throw failure(reason.message)
        }
    }
}

/// A CPU-time budget that libjxl's work runs under (see `alcedo_jxl_serial_runner`), owned by
/// one decode or encode and alive as long as the libjxl object it was handed to.
final class JXLBudget {
    let pointer: UnsafeMutablePointer<alcedo_jxl_budget>

    /// Starts the clock now on the calling thread with `limit` of CPU time.
    init(limit: Duration) {
        pointer = .allocate(capacity: 1)
        let (seconds, attoseconds) = limit.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let limitNs = nanoseconds.overflow ? Int64.max : nanoseconds.partialValue &+ attoseconds / 1_000_000_000
        alcedo_jxl_budget_start(pointer, max(0, limitNs))
    }

    deinit { pointer.deallocate() }

    /// Whether libjxl's work was refused because the budget was used up.
    var expired: Bool { pointer.pointee.expired != 0 }
}

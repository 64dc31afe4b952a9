import CTIFF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// libtiff, loaded on first use (see `CTIFF.h`): a process that never reads or writes TIFF
/// does not pay for loading it and the compression libraries it brings.
enum TIFFLibrary {
    private static let table: Result<alcedo_tiff_api, DynamicLibraryFailure> = {
        guard let table = alcedo_tiff_load() else {
            return .failure(DynamicLibraryFailure(message: alcedo_tiff_load_error().map { String(cString: $0) } ?? "libtiff could not be loaded"))
        }
        return .success(table.pointee)
    }()

    /// The function table, or the reason libtiff could not be loaded.
    static func functions() -> Result<alcedo_tiff_api, DynamicLibraryFailure> { table }

    /// The function table, or `.unsupportedFeature` naming why libtiff could not be loaded.
    static func decodingFunctions() throws(AlcedoError) -> alcedo_tiff_api {
        switch table {
        case .success(let functions): return functions
        case .failure(let failure): throw .decodingError(reason: .unsupportedFeature(format: .tiff, message: failure.message))
        }
    }
}

/// One TIFF opened by libtiff over bytes in memory or an open file, its errors and warnings
/// captured (never printed), alive for the duration of ``with(_:maxSingleAllocation:_:)``.
struct TIFFReadSession {
    let lib: alcedo_tiff_api
    let file: UnsafeMutablePointer<alcedo_tiff_file>
    /// The size of the data, for checking strip offsets.
    let dataSize: Int

    var handle: OpaquePointer { file.pointee.tiff! }

    /// Opens `bytes` (which must outlive the call) and runs `body` with the session.
    static func with<T>(_ bytes: UnsafeRawBufferPointer, maxSingleAllocation: Int,
                        _ body: (TIFFReadSession) throws(AlcedoError) -> T) throws(AlcedoError) -> T {
        guard !bytes.isEmpty else { throw .decodingError(reason: .emptyData) }
        return try open(size: bytes.count, body) { file in
            alcedo_tiff_open_memory(file, bytes.baseAddress, UInt64(bytes.count), Int64(maxSingleAllocation))
        }
    }

    /// Opens the file at `fileDescriptor`, `size` bytes long (it must stay open during the
    /// call), and runs `body` with the session. Strips and tiles are read from the file as they
    /// are needed: the file is never held whole.
    static func with<T>(fileDescriptor: Int32, size: Int, maxSingleAllocation: Int,
                        _ body: (TIFFReadSession) throws(AlcedoError) -> T) throws(AlcedoError) -> T {
        guard size > 0 else { throw .decodingError(reason: .emptyData) }
        return try open(size: size, body) { file in
            alcedo_tiff_open_descriptor(file, fileDescriptor, UInt64(size), Int64(maxSingleAllocation))
        }
    }

    private static func open<T>(size: Int, _ body: (TIFFReadSession) throws(AlcedoError) -> T,
                                opener: (UnsafeMutablePointer<alcedo_tiff_file>) -> Int32) throws(AlcedoError) -> T {
        let lib = try TIFFLibrary.decodingFunctions()
        let file = UnsafeMutablePointer<alcedo_tiff_file>.allocate(capacity: 1)
        defer { file.deallocate() }
        guard opener(file) == 0 else {
            let message = Self.firstError(file) ?? "libtiff could not read the header"
            throw .decodingError(reason: Self.looksTruncated(message) ? .truncated(format: .tiff, message: message)
                                                                         : .invalidHeader(format: .tiff, message: message))
        }
        defer { _ = alcedo_tiff_close(file, nil, nil) }
        return try body(TIFFReadSession(lib: lib, file: file, dataSize: size))
    }

    /// The first error libtiff reported, if any.
    var firstError: String? { Self.firstError(file) }

    /// The first warning libtiff reported, if any.
    var firstWarning: String? {
        guard file.pointee.messages.warnings > 0 else { return nil }
        return withUnsafeBytes(of: file.pointee.messages.warning) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// Forgets earlier errors (before a step whose failure is reported on its own).
    func clearErrors() {
        file.pointee.messages.errors = 0
    }

    /// The error for a libtiff call that failed: its first message, as `.truncated` when it
    /// says the data ended, `.corrupt` (or `.invalidHeader` for `inHeader`) otherwise.
    func error(_ fallback: String, inHeader: Bool = false) -> AlcedoError {
        let message = firstError ?? fallback
        if Self.looksTruncated(message) { return .decodingError(reason: .truncated(format: .tiff, message: message)) }
        return .decodingError(reason: inHeader ? .invalidHeader(format: .tiff, message: message) : .corrupt(format: .tiff, message: message))
    }

    private static func firstError(_ file: UnsafeMutablePointer<alcedo_tiff_file>) -> String? {
        guard file.pointee.messages.errors > 0 else { return nil }
        return withUnsafeBytes(of: file.pointee.messages.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    private static func looksTruncated(_ message: String) -> Bool {
        let lower = message.lowercased()
        return lower.contains(literal: "read error") || lower.contains(literal: "past end") || lower.contains(literal: "unexpected end")
            || lower.contains(literal: "cannot read tiff header") || lower.contains(literal: "premature")
    }

    // MARK: Fields

    func u16(_ tag: Int32) -> UInt16? {
        var value: UInt16 = 0
        return alcedo_tiff_get_u16(handle, UInt32(tag), &value) != 0 ? value : nil
    }

    func u16Defaulted(_ tag: Int32) -> UInt16? {
        var value: UInt16 = 0
        return alcedo_tiff_get_u16_defaulted(handle, UInt32(tag), &value) != 0 ? value : nil
    }

    func u32(_ tag: Int32) -> UInt32? {
        var value: UInt32 = 0
        return alcedo_tiff_get_u32(handle, UInt32(tag), &value) != 0 ? value : nil
    }

    /// The directory count, walking the IFD chain (libtiff stops at loops).
    var pageCount: Int { Int(lib.TIFFNumberOfDirectories!(handle)) }

    /// Makes page `index` current.
    func select(page index: Int) throws(AlcedoError) {
        if index == 0 { return }  // libtiff reads the first directory on open
        guard index <= Int(UInt16.max) * 16, lib.TIFFSetDirectory!(handle, UInt32(index)) != 0 else {
            throw .decodingError(reason: .pageOutOfRange(format: .tiff, page: index, count: pageCount))
        }
    }
}

/// What libtiff's compression numbers are called in `alcedo info`.
enum TIFFCompressionName {
    static func name(_ value: UInt16) -> String {
        switch Int32(value) {
        case COMPRESSION_NONE: return "none"
        case COMPRESSION_CCITTRLE: return "ccitt-rle"
        case COMPRESSION_CCITTFAX3: return "ccitt-g3"
        case COMPRESSION_CCITTFAX4: return "ccitt-g4"
        case COMPRESSION_LZW: return "lzw"
        case COMPRESSION_OJPEG: return "old-jpeg"
        case COMPRESSION_JPEG: return "jpeg"
        case COMPRESSION_ADOBE_DEFLATE, COMPRESSION_DEFLATE: return "deflate"
        case COMPRESSION_PACKBITS: return "packbits"
        case COMPRESSION_JBIG: return "jbig"
        case COMPRESSION_LZMA: return "lzma"
        case COMPRESSION_ZSTD: return "zstd"
        case COMPRESSION_WEBP: return "webp"
        case COMPRESSION_LERC: return "lerc"
        case COMPRESSION_JP2000: return "jpeg2000"
        case COMPRESSION_SGILOG, COMPRESSION_SGILOG24: return "sgilog"
        case COMPRESSION_PIXARLOG: return "pixarlog"
        case COMPRESSION_THUNDERSCAN: return "thunderscan"
        case COMPRESSION_NEXT: return "next"
        default: return "compression \(value)"
        }
    }
}

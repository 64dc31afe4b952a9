#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An entry file read into memory: its header, its current record, and its data.
///
/// A file of up to ``wholeFileLimit`` bytes is read with one `pread` into one buffer, and the
/// data is handed to `Data` without a copy; a larger one has its header read first, so a
/// foreign multi-gigabyte file is rejected before its size is allocated.
final class DiskEntryFile {
    /// Files up to this size are read whole at once.
    static let wholeFileLimit = 1 << 20

    let size: Int
    /// `true` when the file starts with the entry magic: Alcedo wrote it (valid or not).
    private(set) var hasMagic = false
    private(set) var header: DiskEntryHeader?
    private(set) var record: (payload: [UInt8], sequence: UInt64, slot: Int)?
    /// The bytes read from offset 0 (malloc'd); `nil` once handed to a `Data`.
    private var buffer: UnsafeMutableRawPointer?
    private var bufferCount: Int

    private init(size: Int, capacity: Int) {
        self.size = size
        self.buffer = malloc(max(capacity, 1))
        self.bufferCount = capacity
    }

    deinit { free(buffer) }

    /// Reads and parses the header of the open file `fd` (and, with `includingData`, a small
    /// file whole). An invalid file gives a value whose ``header`` or ``record`` is `nil`.
    static func read(_ fd: Int32, includingData: Bool) -> Result<DiskEntryFile, POSIXFile.Errno> {
        let size: Int
        switch POSIXFile.size(fd) {
        case .success(let value): size = value
        case .failure(let error): return .failure(error)
        }
        let first = includingData && size <= wholeFileLimit ? size : min(size, 4096)
        let file = DiskEntryFile(size: size, capacity: first)
        if let error = file.fill(fd, count: first) { return .failure(error) }
        file.hasMagic = file.withBytes { $0.starts(with: DiskEntryHeader.magic) }
        guard let header = file.withBytes({ DiskEntryHeader(fixedBytes: $0, fileSize: size) }) else { return .success(file) }
        if header.headerLength > file.bufferCount {
            file.buffer = realloc(file.buffer, header.headerLength)
            file.bufferCount = header.headerLength
            if let error = file.fill(fd, count: header.headerLength) { return .failure(error) }
        }
        file.header = header
        file.record = file.withBytes { header.currentRecord(in: $0) }
        return .success(file)
    }

    /// The entry's data, from the buffer when the file was read whole (without a copy: the
    /// buffer goes to the `Data`), else read straight into a buffer of its own.
    func data(_ fd: Int32) -> Result<Data, POSIXFile.Errno> {
        guard let header else { return .success(Data()) }
        if bufferCount == size, let base = buffer {
            buffer = nil
            let address = Int(bitPattern: base)
            return .success(Data(bytesNoCopy: base + header.headerLength, count: header.dataLength,
                                 deallocator: .custom { _, _ in free(UnsafeMutableRawPointer(bitPattern: address)) }))
        }
        let count = header.dataLength
        guard let target = malloc(max(count, 1)) else { return .failure(POSIXFile.Errno(ENOMEM)) }
        switch POSIXFile.read(fd, into: target, count: count, at: header.headerLength) {
        case .success(let read) where read == count:
            return .success(Data(bytesNoCopy: target, count: count, deallocator: .free))
        case .success:
            free(target)
            return .failure(POSIXFile.Errno(EIO))
        case .failure(let error):
            free(target)
            return .failure(error)
        }
    }

    private func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        body(UnsafeRawBufferPointer(start: buffer, count: buffer == nil ? 0 : bufferCount))
    }

    /// Reads `count` bytes from offset 0 into the buffer; a short file is an `EIO` (it changed under us).
    private func fill(_ fd: Int32, count: Int) -> POSIXFile.Errno? {
        guard let buffer else { return POSIXFile.Errno(ENOMEM) }
        switch POSIXFile.read(fd, into: buffer, count: count, at: 0) {
        case .success(let read) where read == count: return nil
        case .success: return POSIXFile.Errno(EIO)
        case .failure(let error): return error
        }
    }
}

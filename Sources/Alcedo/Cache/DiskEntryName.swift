/// The name of an entry's file in a ``DiskStorage/EntryStore`` folder: the SHA-256 of the
/// entry's key in hex, then `.` and an extension when it has one. The extension is the store's
/// ``DiskStorage/EntryStore/Config/pathExtension``, or the one a caller forced for that entry
/// (Kingfisher's `forcedExtension:`): the same key stored with two extensions is two entries, as
/// in Kingfisher, where they are two files.
struct DiskEntryName: Hashable, Sendable {
    /// The hash of the entry's key.
    let hash: CacheKeyHash
    /// The extension, without the dot: ASCII letters and digits, 1 to 16 of them; `nil` for none.
    let pathExtension: String?

    /// The name of `key`'s file with `pathExtension`, which must already be cleaned
    /// (``DiskStorage/EntryStore/Config/cleanedExtension(_:)``).
    init(key: String, pathExtension: String?) {
        self.hash = CacheKeyHash(key: key)
        self.pathExtension = pathExtension
    }

    /// Parses a file name of a scan: 64 lower-case hex digits, alone or followed by `.` and 1 to
    /// 16 ASCII letters and digits; `nil` for any other name.
    init?(fileName bytes: UnsafeBufferPointer<UInt8>) {
        guard let hash = CacheKeyHash(hexBytes: bytes) else { return nil }
        self.hash = hash
        if bytes.count == 64 {
            pathExtension = nil
            return
        }
        let tail = UnsafeBufferPointer(rebasing: bytes[65...])
        guard bytes[64] == UInt8(ascii: "."), (1...16).contains(tail.count),
              tail.allSatisfy(\.isASCIIAlphanumeric) else { return nil }
        pathExtension = String(decoding: tail, as: UTF8.self)
    }

    /// The hash in hex: the file name without its extension.
    var hex: String { hash.hex }

    /// The file name.
    var fileName: String { pathExtension.map { hash.hex + "." + $0 } ?? hash.hex }
}

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

extension DiskStorage.EntryStore {
    /// Makes sure the folder can hold entries, creating it (and its parents) when missing, so a
    /// caller can say at start-up that the disk tier will not work instead of finding out from
    /// every store. Nothing else is touched. Blocking: call it off the cooperative thread pool.
    /// - Throws: `.cacheError(.cannotCreateDirectory)` when the path names something that is
    ///   not a folder (a regular file, a dangling symbolic link) or a folder cannot be made
    ///   there; `.cacheError(.readOnly)` when the folder exists but this process cannot write
    ///   in it (entries can still be read).
    public func prepareFolder() throws(AlcedoError) {
        if let error = POSIXFile.makeDirectory(directoryPath) {
            throw .cacheError(reason: .cannotCreateDirectory(path: directoryPath, errno: error.code))
        }
        if access(directoryPath, W_OK | X_OK) != 0 {
            throw .cacheError(reason: .readOnly(path: directoryPath, errno: errno))
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A value that can be turned into bytes and back: what a ``DiskStorage/Backend`` stores
/// (Kingfisher's `DataTransformable`).
///
/// Alcedo conforms `Data` only, as Kingfisher does: a conformance of `String` or of an image
/// type in the library would clash with the one an app writes for its own encoding (and with
/// Kingfisher's tests, which write `String`'s). Images are stored by ``ImageCache`` through a
/// ``CacheSerializer``, which chooses the format.
public protocol DataTransformable {
    /// The value's bytes.
    /// - Throws: when the value cannot be turned into bytes; the storage reports it as
    ///   `.cacheError(.cannotConvertToData)`.
    func toData() throws -> Data

    /// The value that `data` holds.
    /// - Throws: when `data` does not hold a value; the storage reports it as
    ///   `.cacheError(.cannotLoadDataFromDisk)`.
    static func fromData(_ data: Data) throws -> Self

    /// A placeholder value, returned where the storage looked a value up without loading it
    /// (``DiskStorage/Backend/isCached(forKey:forcedExtension:)``). Must be cheap to make.
    static var empty: Self { get }
}

extension Data: DataTransformable {
    /// The bytes themselves.
    public func toData() throws -> Data { self }

    /// `data` itself.
    public static func fromData(_ data: Data) throws -> Data { data }

    /// No bytes.
    public static var empty: Data { Data() }
}

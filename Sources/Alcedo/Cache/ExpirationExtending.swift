/// What an access does to a cached entry's expiration.
public enum ExpirationExtending: Sendable, Hashable {
    /// The expiration stays as it was set when the entry was stored.
    case none
    /// The entry gets its original duration again, counted from the access: an entry stored
    /// with `.seconds(300)` expires 300 s after its last access. Entries stored with
    /// `.never` or `.date(_:)` keep their expiration. This is the default.
    case cacheTime
    /// The entry expires as `expiration` says, counted from the access.
    case expirationTime(StorageExpiration)
}

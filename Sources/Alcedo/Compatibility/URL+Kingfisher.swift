#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension URL {
    /// The prefix of a local file's cache key (Kingfisher's `localFileCacheKeyPrefix`).
    static let localFileCacheKeyPrefix = "kingfisher.local.cacheKey"

    /// Kingfisher's cache key of a local file: the prefix, then the path from the last folder
    /// named `….app` or `….appex` on (the whole path when there is none), then `?` and the
    /// query when there is one. An app bundle moves to a new container folder on every
    /// install; the part kept is the same across installs, and so is the key.
    var localFileCacheKey: String {
        var validComponents: [String] = []
        for part in pathComponents.reversed() {
            validComponents.append(part)
            if part.hasSuffix(".app") || part.hasSuffix(".appex") {
                break
            }
        }
        let fixedPath = "\(Self.localFileCacheKeyPrefix)/\(validComponents.reversed().joined(separator: "/"))"
        if let q = query {
            return "\(fixedPath)?\(q)"
        } else {
            return fixedPath
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// How a URL becomes a cache key.
///
/// Signed or tokenised URLs (`…/a.jpg?token=…&expires=…`) change on every request though the
/// image does not; caching them under their full text stores one copy per token and never
/// hits. A rule that strips those query items keys them all alike:
///
/// ```swift
/// CacheKeyRule.global = .removingQueryItems(named: ["token", "expires", "signature"])
/// ```
///
/// ``global`` applies to every `URL` used as a ``Resource`` (and so to every manager,
/// prefetcher and binding); an ``ImageResource`` with an explicit key bypasses it.
public struct CacheKeyRule: Sendable {
    private let transform: @Sendable (URL) -> String

    /// A rule from a function of the URL.
    public init(_ transform: @escaping @Sendable (URL) -> String) {
        self.transform = transform
    }

    /// The key for `url` under this rule.
    public func cacheKey(for url: URL) -> String { transform(url) }

    /// The URL's absolute string, as given. The default.
    public static let absoluteString = CacheKeyRule { $0.absoluteString }

    /// The URL without its query and fragment.
    public static let removingQuery = CacheKeyRule { url in
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        components.query = nil
        components.fragment = nil
        return components.string ?? url.absoluteString
    }

    /// The URL without the query items whose names are in `names` (compared exactly); the
    /// other items keep their order. A query left empty is dropped with its `?`.
    public static func removingQueryItems(named names: Set<String>) -> CacheKeyRule {
        CacheKeyRule { url in
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
                  let items = components.percentEncodedQueryItems else { return url.absoluteString }
            let kept = items.filter { !names.contains($0.name.percentDecoded ?? $0.name) }
            components.percentEncodedQueryItems = kept.isEmpty ? nil : kept
            return components.string ?? url.absoluteString
        }
    }

    private static let current = Mutex(CacheKeyRule.absoluteString)

    /// The rule every `URL` resource uses for its ``Resource/cacheKey``. Default
    /// ``absoluteString``. Set it once, at start-up: entries cached under another rule are
    /// not found under the new one.
    public static var global: CacheKeyRule {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}

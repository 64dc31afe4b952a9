import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Rewrites source URLs before they are checked and fetched, as imgproxy's
/// `IMGPROXY_URL_REPLACEMENTS` and `IMGPROXY_BASE_URL` do: first each replacement in order,
/// then the base URL is put in front of a URL that does not already start with it.
///
/// ```swift
/// var rewriter = SourceURLRewriter(baseURL: "https://cdn.example.com/images/")
/// try rewriter.addReplacements("local://*/=https://${1}.example.com/")
/// rewriter.rewrite("cat.jpg")                  // https://cdn.example.com/images/cat.jpg
/// rewriter.rewrite("local://assets/cat.jpg")   // https://assets.example.com/cat.jpg
/// ```
///
/// The signature covers the URL as written in the path; the rewritten URL is the one the
/// allowed-sources check and the caches see.
public struct SourceURLRewriter: Sendable, Hashable {
    /// One prefix replacement: a URL starting with ``pattern`` has that start replaced by
    /// ``replacement``.
    public struct Replacement: Sendable, Hashable {
        /// A URL prefix; each `*` matches a run of characters other than `/`.
        public var pattern: String
        /// What the matched prefix becomes; `${N}` (or `$N`) is the text the N-th `*` matched.
        public var replacement: String

        /// Creates a replacement.
        public init(pattern: String, replacement: String) {
            self.pattern = pattern
            self.replacement = replacement
        }
    }

    /// Put in front of every source URL that does not start with it (default empty: none).
    public var baseURL: String
    /// Applied in order before ``baseURL`` (default none).
    public var replacements: [Replacement]

    /// Creates a rewriter; every parameter defaults to the value stated on its property.
    public init(baseURL: String = "", replacements: [Replacement] = []) {
        self.baseURL = baseURL
        self.replacements = replacements
    }

    /// `true` when ``rewrite(_:)`` returns every URL unchanged.
    public var isIdentity: Bool { baseURL.isEmpty && replacements.isEmpty }

    /// Adds replacements written as imgproxy's `IMGPROXY_URL_REPLACEMENTS`:
    /// `PATTERN=REPLACEMENT` pairs separated by `;` (empty items are skipped).
    /// - Throws: ``ServerConfigurationError/invalidValue(_:message:)`` for an item without `=`
    ///   or with an empty pattern.
    public mutating func addReplacements(_ text: String) throws(ServerConfigurationError) {
        for item in text.split(separator: ";") where !item.trimmingSpaces().isEmpty {
            guard let equals = item.firstIndex(of: "="), equals != item.startIndex else {
                throw .invalidValue("URL replacements", message: "\"\(item)\" is not PATTERN=REPLACEMENT")
            }
            replacements.append(Replacement(pattern: String(item[..<equals]), replacement: String(item[item.index(after: equals)...])))
        }
    }

    /// The URL to fetch for `url` as written in the request path.
    public func rewrite(_ url: String) -> String {
        var result = url
        for replacement in replacements {
            let text = Array(result.unicodeScalars)
            guard let (length, captures) = Self.match(Array(replacement.pattern.unicodeScalars)[...], text[...], captures: []) else {
                continue
            }
            var rewritten = String.UnicodeScalarView()
            rewritten.append(contentsOf: Self.expand(replacement.replacement, captures: captures).unicodeScalars)
            rewritten.append(contentsOf: text[length...])
            result = String(rewritten)
        }
        if !baseURL.isEmpty, !result.hasPrefix(baseURL) { result = baseURL + result }
        return result
    }

    /// Matches `pattern` at the start of `text`: the length matched and what each `*` took.
    /// A `*` takes as much as it can (no `/`) and gives back what the rest of the pattern needs.
    private static func match(_ pattern: ArraySlice<Unicode.Scalar>, _ text: ArraySlice<Unicode.Scalar>,
                              captures: [String]) -> (Int, [String])? {
        guard let star = pattern.firstIndex(of: "*") else {
            guard text.starts(with: pattern) else { return nil }
            return (text.startIndex + pattern.count, captures)
        }
        let literal = pattern[pattern.startIndex..<star]
        guard text.starts(with: literal) else { return nil }
        let start = text.startIndex + literal.count
        var end = start
        while end < text.endIndex, text[end] != "/" { end += 1 }
        while end >= start {
            var taken = String.UnicodeScalarView()
            taken.append(contentsOf: text[start..<end])
            if let found = match(pattern[(star + 1)...], text[end...], captures: captures + [String(taken)]) { return found }
            end -= 1
        }
        return nil
    }

    /// `replacement` with `${N}` and `$N` replaced by the N-th capture (1-based; empty when
    /// there is no such capture).
    private static func expand(_ replacement: String, captures: [String]) -> String {
        guard replacement.contains(literal: "$") else { return replacement }
        let scalars = Array(replacement.unicodeScalars)
        var out = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            guard scalar == "$", index + 1 < scalars.count else {
                out.append(scalar)
                index += 1
                continue
            }
            var cursor = index + 1
            let braced = scalars[cursor] == "{"
            if braced { cursor += 1 }
            var digits = ""
            while cursor < scalars.count, ("0"..."9").contains(scalars[cursor]) {
                digits.unicodeScalars.append(scalars[cursor])
                cursor += 1
            }
            if digits.isEmpty || (braced && (cursor >= scalars.count || scalars[cursor] != "}")) {
                out.append(scalar)
                index += 1
                continue
            }
            if braced { cursor += 1 }
            if let number = Int(digits), number >= 1, number <= captures.count {
                out.append(contentsOf: captures[number - 1].unicodeScalars)
            }
            index = cursor
        }
        return String(out)
    }
}

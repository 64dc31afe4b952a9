#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Bounds what the XML entities an SVG declares in its internal DTD subset can expand to,
/// before libxml2 expands them: libxml2 stops exponential "billion laughs" documents itself,
/// but not a quadratic blow-up (one 50 kB entity referenced 20,000 times is 1 GB of text).
enum SVGEntityBudget {
    /// The most text the declared entities may add to a document (1 MiB; an editor's entities,
    /// such as Illustrator's namespace names, take a few hundred bytes).
    static let limit = 1 << 20

    /// Throws `.workingMemoryTooLarge` when the references in `data` to the entities its
    /// doctype declares would expand to more than ``limit`` bytes (or refer in a cycle).
    ///
    /// The text is read Unicode scalar by scalar, as libxml2 reads it: a combining mark after
    /// `;`, a quote or `]` does not hide it (it would from a `Character`-wise reading, where the
    /// mark and the character before it are one character).
    static func check(_ data: Data) throws(AlcedoError) {
        let text = String(decoding: data, as: UTF8.self)
        let scalars = text.unicodeScalars
        guard let doctype = text.firstRangeIgnoringCase(of: "<!DOCTYPE"),
              let open = scalars[doctype.upperBound...].firstIndex(of: "["),
              let close = text[open...].range(ofLiteral: "]>")?.lowerBound ?? scalars[open...].lastIndex(of: "]") else { return }
        let subset = scalars[scalars.index(after: open)..<close]
        var entities: [String: Substring.UnicodeScalarView] = [:]
        var rest = subset
        while let declaration = Substring(rest).range(ofLiteral: "<!ENTITY") {
            var cursor = rest[declaration.upperBound...].drop(while: isXMLSpace)
            if cursor.first == "%" { cursor = cursor.dropFirst().drop(while: isXMLSpace) }
            let name = cursor.prefix { !isXMLSpace($0) }
            cursor = cursor.dropFirst(name.count).drop(while: isXMLSpace)
            if let quote = cursor.first, quote == "\"" || quote == "'",
               let end = cursor.dropFirst().firstIndex(of: quote) {
                entities[String(String.UnicodeScalarView(name))] = cursor[cursor.index(after: cursor.startIndex)..<end]
                rest = cursor[end...]
            } else {
                rest = cursor
            }
        }
        guard !entities.isEmpty else { return }
        var sizes: [String: Int] = [:]
        var visiting: Set<String> = []
        func expanded(_ name: String) throws(AlcedoError) -> Int {
            if let known = sizes[name] { return known }
            guard let value = entities[name] else { return 0 }
            guard visiting.insert(name).inserted else { throw tooLarge(Int.max) }
            var total = Substring(value).utf8.count
            for reference in references(in: value) {
                total = total &+ (try expanded(reference))
                if total > limit { throw tooLarge(total) }
            }
            visiting.remove(name)
            sizes[name] = total
            return total
        }
        var total = 0
        for reference in references(in: scalars[close...]) where entities[reference] != nil {
            total += try expanded(reference)
            if total > limit { throw tooLarge(total) }
        }
    }

    /// XML's white space: space, tab, line feed and carriage return.
    private static func isXMLSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r"
    }

    /// The names of the `&name;` references in `text` (character references left out).
    private static func references(in text: Substring.UnicodeScalarView) -> [String] {
        var names: [String] = []
        var rest = text
        while let amp = rest.firstIndex(of: "&") {
            let after = rest[rest.index(after: amp)...]
            let name = after.prefix { $0 != ";" && !isXMLSpace($0) && $0 != "&" && $0 != "<" }
            if !name.isEmpty, name.first != "#", after.dropFirst(name.count).first == ";" {
                names.append(String(String.UnicodeScalarView(name)))
            }
            rest = after
        }
        return names
    }

    private static func tooLarge(_ bytes: Int) -> AlcedoError {
        .decodingError(reason: .workingMemoryTooLarge(format: .svg, what: "the text its XML entities expand to", bytes: bytes, limit: limit))
    }
}

/// An ordered list of HTTP header fields whose names compare without regard to case.
///
/// Several fields may share a name (`Set-Cookie`, or `Cache-Control` sent twice); the
/// subscript reads the first and replaces all of them, ``values(for:)`` reads each.
public struct HTTPHeaderFields: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One header field: a name and its value, both as sent.
    public struct Field: Sendable, Hashable {
        /// The field name as sent (compare with ``HTTPHeaderFields/namesMatch(_:_:)``).
        public var name: String
        /// The field value, without surrounding whitespace.
        public var value: String

        /// Creates a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    private var fields: [Field]

    /// Creates a list from name-value pairs, in order (default: empty).
    public init(_ pairs: [(String, String)] = []) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    /// Creates a list from a literal such as `["Accept": "image/*"]`, in order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The number of fields (a name sent twice counts twice).
    public var count: Int { fields.count }

    /// `true` when there is no field.
    public var isEmpty: Bool { fields.isEmpty }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// The value of the first field named `name`; setting replaces every field of that name
    /// (at the place of the first one) or, with `nil`, removes them all.
    public subscript(name: String) -> String? {
        get { fields.first { Self.namesMatch($0.name, name) }?.value }
        set {
            guard let newValue else {
                remove(name)
                return
            }
            if let index = fields.firstIndex(where: { Self.namesMatch($0.name, name) }) {
                fields[index].value = newValue
                var seen = false
                fields.removeAll { field in
                    guard Self.namesMatch(field.name, name) else { return false }
                    defer { seen = true }
                    return seen
                }
            } else {
                fields.append(Field(name: name, value: newValue))
            }
        }
    }

    /// The values of every field named `name`, in order.
    public func values(for name: String) -> [String] {
        fields.compactMap { Self.namesMatch($0.name, name) ? $0.value : nil }
    }

    /// The elements of every field named `name`, split at commas outside quoted strings, trimmed
    /// and without empty elements (`Cache-Control: max-age=60, no-cache` gives two elements).
    public func listElements(for name: String) -> [String] {
        values(for: name).flatMap(Self.splitList)
    }

    /// `true` when a field named `name` is present.
    public func contains(_ name: String) -> Bool {
        fields.contains { Self.namesMatch($0.name, name) }
    }

    /// Appends a field, keeping any earlier field of the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Removes every field named `name`.
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.namesMatch($0.name, name) }
    }

    /// The fields as `Name: value` lines.
    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    /// Compares two field names as HTTP does: ASCII letters without regard to case.
    public static func namesMatch(_ lhs: String, _ rhs: String) -> Bool {
        let a = lhs.utf8, b = rhs.utf8
        guard a.count == b.count else { return false }
        for (x, y) in zip(a, b) where x != y {
            guard x | 0x20 == y | 0x20, (0x61...0x7A).contains(x | 0x20) else { return false }
        }
        return true
    }

    /// Splits a list-valued field at commas that are not inside a quoted string.
    static func splitList(_ value: String) -> [String] {
        var elements: [String] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        for character in value {
            if escaped {
                escaped = false
            } else if inQuotes && character == "\\" {
                escaped = true
            } else if character == "\"" {
                inQuotes.toggle()
            } else if character == "," && !inQuotes {
                elements.append(current)
                current = ""
                continue
            }
            current.append(character)
        }
        elements.append(current)
        return elements.map { $0.trimmingHTTPWhitespace() }.filter { !$0.isEmpty }
    }

    // Two lists are equal when they hold the same fields in the same order, names compared without case.
    public static func == (lhs: HTTPHeaderFields, rhs: HTTPHeaderFields) -> Bool {
        lhs.fields.count == rhs.fields.count && zip(lhs.fields, rhs.fields).allSatisfy {
            namesMatch($0.name, $1.name) && $0.value == $1.value
        }
    }

    public func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.name.lowercased())
            hasher.combine(field.value)
        }
    }
}

extension String {
    /// The string without leading and trailing spaces and horizontal tabs (HTTP's OWS).
    func trimmingHTTPWhitespace() -> String {
        let isWhitespace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isWhitespace($0) }),
              let last = lastIndex(where: { !isWhitespace($0) }) else { return "" }
        return String(self[first...last])
    }
}

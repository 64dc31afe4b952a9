/// `URLRequest`'s header methods, as Kingfisher's request modifiers call them:
///
/// ```swift
/// let modifier = AnyModifier { request in
///     var request = request
///     request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
///     return request
/// }
/// ```
extension DownloadRequest {
    /// Sets the header field `field` to `value`, replacing every field of that name (names
    /// compare case-insensitively); `nil` removes them.
    public mutating func setValue(_ value: String?, forHTTPHeaderField field: String) {
        if let value {
            headers[field] = value
        } else {
            headers.remove(field)
        }
    }

    /// Adds a field `field: value`, keeping any fields of that name already there.
    public mutating func addValue(_ value: String, forHTTPHeaderField field: String) {
        headers.add(name: field, value: value)
    }

    /// The value of the first header field named `field`, or `nil`.
    public func value(forHTTPHeaderField field: String) -> String? {
        headers[field]
    }

    /// The header fields as a dictionary (the last value of a repeated name), as `URLRequest`
    /// has them. Setting it replaces every field.
    public var allHTTPHeaderFields: [String: String]? {
        get {
            var fields: [String: String] = [:]
            for field in headers { fields[field.name] = field.value }
            return fields
        }
        set {
            headers = [:]
            for (name, value) in newValue ?? [:] { headers.add(name: name, value: value) }
        }
    }
}

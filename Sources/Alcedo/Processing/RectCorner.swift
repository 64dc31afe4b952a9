/// A set of corners of a rectangle, for ``RoundCornerImageProcessor`` and
/// ``BorderImageProcessor``: `[.topLeft, .bottomRight]`, or `.all` (the default there).
public struct RectCorner: OptionSet, Sendable, Hashable {
    /// The bits of the set (see ``init(rawValue:)``).
    public let rawValue: Int

    /// Creates a set from its raw bits (1 top-left, 2 top-right, 4 bottom-left, 8 bottom-right).
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The top-left corner.
    public static let topLeft = RectCorner(rawValue: 1 << 0)
    /// The top-right corner.
    public static let topRight = RectCorner(rawValue: 1 << 1)
    /// The bottom-left corner.
    public static let bottomLeft = RectCorner(rawValue: 1 << 2)
    /// The bottom-right corner.
    public static let bottomRight = RectCorner(rawValue: 1 << 3)
    /// All four corners.
    public static let all: RectCorner = [.topLeft, .topRight, .bottomLeft, .bottomRight]

    /// `all`, `none`, or the corners joined by `|` (`topLeft|bottomRight`), as identifiers use it.
    var identifierDescription: String {
        if isSuperset(of: .all) { return "all" }
        let names: [(RectCorner, String)] = [(.topLeft, "topLeft"), (.topRight, "topRight"),
                                             (.bottomLeft, "bottomLeft"), (.bottomRight, "bottomRight")]
        let present = names.filter { contains($0.0) }.map(\.1)
        return present.isEmpty ? "none" : present.joined(separator: "|")
    }
}

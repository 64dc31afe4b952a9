/// A plain-text table: a header row, a rule, and rows with columns padded to their widest cell.
///
/// ```
/// image        source     result    cache   ms
/// ------------ ---------- --------- ------ -----
/// valley.jpg   1600x1200  400x300   none    14.2
/// ```
struct TextTable {
    enum Alignment {
        case left
        case right
    }

    struct Column {
        let title: String
        let alignment: Alignment

        init(_ title: String, _ alignment: Alignment = .left) {
            self.title = title
            self.alignment = alignment
        }
    }

    let columns: [Column]
    private(set) var rows: [[String]] = []

    init(_ columns: [Column]) {
        self.columns = columns
    }

    /// Appends a row; missing cells are blank and extra cells are dropped.
    mutating func append(_ cells: [String]) {
        rows.append((0..<columns.count).map { $0 < cells.count ? cells[$0] : "" })
    }

    /// The table as lines without trailing spaces.
    func lines() -> [String] {
        let widths = columns.indices.map { index in
            rows.reduce(columns[index].title.count) { max($0, $1[index].count) }
        }
        func render(_ cells: [String]) -> String {
            let padded = columns.indices.map { index -> String in
                let gap = String(repeating: " ", count: widths[index] - cells[index].count)
                return columns[index].alignment == .left ? cells[index] + gap : gap + cells[index]
            }
            return String(padded.joined(separator: "  ").reversed().drop { $0 == " " }.reversed())
        }
        return [render(columns.map(\.title)), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")]
            + rows.map(render)
    }
}

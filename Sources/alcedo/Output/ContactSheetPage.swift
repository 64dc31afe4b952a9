import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The HTML page written next to a contact sheet: every result image at its own size with
/// its figures in a table, and the sheet itself at the top. Self-contained (inline style, no
/// script, nothing loaded from elsewhere); images are linked by paths relative to the page.
struct ContactSheetPage {
    /// One result: the image file (relative to the page), its title and its figures in order.
    struct Item {
        let file: String
        let title: String
        let figures: [(label: String, value: String)]
    }

    var title = "Alcedo contact sheet"
    /// The contact sheet PNG, relative to the page (nil for none).
    var sheetFile: String?
    /// Lines of text under the title.
    var notes: [String] = []

    func html(_ items: [Item]) -> String {
        var page = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <title>\(Self.escape(title))</title>
            <style>
            body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; background: #fafafa; }
            .grid { display: flex; flex-wrap: wrap; gap: 1.5em; }
            figure { margin: 0; padding: 0.8em; background: #fff; border: 1px solid #ddd; border-radius: 6px; }
            figure img { display: block; max-width: 420px; max-height: 320px;
              background: repeating-conic-gradient(#ddd 0% 25%, #fff 0% 50%) 0 0 / 16px 16px; }
            figcaption { margin-top: 0.5em; }
            table { border-collapse: collapse; }
            td { padding: 0 0.8em 0 0; } td:first-child { color: #666; }
            .sheet { max-width: 100%; margin: 1em 0 2em; border: 1px solid #ddd; }
            </style>
            </head>
            <body>
            <h1>\(Self.escape(title))</h1>

            """
        for note in notes { page += "<p>\(Self.escape(note))</p>\n" }
        if let sheetFile {
            page += "<p><img class=\"sheet\" src=\"\(Self.escape(Self.pathForLink(sheetFile)))\" alt=\"contact sheet\"></p>\n"
        }
        page += "<div class=\"grid\">\n"
        for item in items {
            page += "<figure>\n<img src=\"\(Self.escape(Self.pathForLink(item.file)))\" alt=\"\(Self.escape(item.title))\">\n"
            page += "<figcaption><strong>\(Self.escape(item.title))</strong>\n<table>\n"
            for figure in item.figures {
                page += "<tr><td>\(Self.escape(figure.label))</td><td>\(Self.escape(figure.value))</td></tr>\n"
            }
            page += "</table></figcaption>\n</figure>\n"
        }
        page += "</div>\n</body>\n</html>\n"
        return page
    }

    /// `text` with the five HTML special characters escaped.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// A relative file path as a URL path: each component percent-encoded.
    static func pathForLink(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map {
            $0.percentEncoded(allowing: \.isURLPathSegmentAllowed)
        }.joined(separator: "/")
    }
}

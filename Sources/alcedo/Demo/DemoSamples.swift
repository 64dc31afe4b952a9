import Foundation

/// One bundled sample image, ready to be served: its bytes and the validators the demo server
/// sends with it.
struct DemoSample: Sendable {
    /// The file name, also the path the server serves it at (`/valley.jpg`).
    let name: String
    let data: Data
    let contentType: String
    /// A strong entity tag from the content (`"` + 16 hex digits of FNV-1a + `"`).
    let etag: String
    /// The file's modification time as an HTTP-date.
    let lastModified: String
}

/// Finds and loads the sample images bundled with the `alcedo` executable.
///
/// The samples are resources of the executable target: SwiftPM copies them into
/// `Alcedo_alcedo.resources/Samples` next to the built binary (`.bundle` on macOS). They are
/// looked up, in order, in `$ALCEDO_SAMPLES`, in that folder next to the executable (symbolic
/// links resolved), then in `Sources/alcedo/Demo/Samples` of a package checkout above the
/// executable. SwiftPM's own `Bundle.module` is not used: it stops the process when the
/// bundle is missing, and a missing bundle must be a one-line error.
enum DemoSamples {
    /// The file extensions served, with their content types.
    static let contentTypes = ["jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png",
                               "gif": "image/gif", "webp": "image/webp"]

    /// The folder holding the samples, or a failure that says where it looked.
    static func locate() throws(CLIFailure) -> URL {
        let candidates = candidateFolders()
        let fileManager = FileManager.default
        for folder in candidates where fileManager.fileExists(atPath: folder.appendingPathComponent("PROVENANCE.md").path) {
            return folder
        }
        throw CLIFailure(path: "samples", reason: "cannot find the bundled sample images (looked in "
                         + candidates.map(\.path).joined(separator: ", ") + "); set ALCEDO_SAMPLES to their folder")
    }

    /// Loads every image of `folder`, sorted by name.
    static func load(from folder: URL) throws(CLIFailure) -> [DemoSample] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        } catch {
            throw CLIFailure(path: folder.path, reason: "cannot list: \(error.localizedDescription)")
        }
        var samples: [DemoSample] = []
        for name in names {
            let ext = (name as NSString).pathExtension.lowercased()
            guard let contentType = contentTypes[ext], !name.hasPrefix(".") else { continue }
            let path = folder.appendingPathComponent(name).path
            let data = try readFile(path)
            let modified = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? Date()
            samples.append(DemoSample(
                name: name, data: data, contentType: contentType,
                etag: "\"\(ShortHash.hex(of: data, digits: 16))\"",
                lastModified: HTTPDateFormat.string(from: modified)))
        }
        guard !samples.isEmpty else { throw CLIFailure(path: folder.path, reason: "holds no sample images") }
        return samples
    }

    private static func candidateFolders() -> [URL] {
        var folders: [URL] = []
        if let override = ProcessInfo.processInfo.environment["ALCEDO_SAMPLES"], !override.isEmpty {
            folders.append(URL(fileURLWithPath: override, isDirectory: true))
        }
        guard let executable = executableURL() else { return folders }
        let binFolder = executable.deletingLastPathComponent()
        for bundle in ["Alcedo_alcedo.resources", "Alcedo_alcedo.bundle", "Alcedo_alcedo.bundle/Contents/Resources"] {
            folders.append(binFolder.appendingPathComponent(bundle).appendingPathComponent("Samples"))
        }
        // A package checkout: the binary sits in .build/<triple>/<configuration>/ below it.
        var folder = binFolder
        for _ in 0..<5 where folder.path != "/" {
            folder = folder.deletingLastPathComponent()
            folders.append(folder.appendingPathComponent("Sources/alcedo/Demo/Samples"))
        }
        return folders
    }

    /// The running executable with symbolic links resolved.
    private static func executableURL() -> URL? {
        #if os(Linux)
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: path).resolvingSymlinksInPath()
        }
        #endif
        return Bundle.main.executableURL?.resolvingSymlinksInPath()
    }
}

/// HTTP-dates (RFC 9110 IMF-fixdate): `Sun, 06 Nov 1994 08:49:37 GMT`.
enum HTTPDateFormat {
    static func string(from date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let day = days[Int(parts.tm_wday) % 7], month = months[Int(parts.tm_mon) % 12]
        let dayOfMonth = String(format: "%02d", Int(parts.tm_mday))
        let time = String(format: "%04d %02d:%02d:%02d", Int(parts.tm_year) + 1900,
                          Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
        return "\(day), \(dayOfMonth) \(month) \(time) GMT"
    }
}

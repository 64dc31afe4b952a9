import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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

/// The sample images of `alcedo demo` and `alcedo serve --samples`.
///
/// They are compiled into the executable (`EmbeddedSamples.swift`, made from
/// `Sources/alcedo/Demo/Samples` by `scripts/embed-samples.py`), so a copied or installed
/// binary needs no file beside it. `$ALCEDO_SAMPLES` names a folder of images to serve instead.
enum DemoSamples {
    /// The file extensions served, with their content types.
    static let contentTypes = ["jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png",
                               "gif": "image/gif", "webp": "image/webp"]

    /// The Last-Modified of the embedded samples: 2026-01-01T00:00:00Z (fixed, so that a
    /// revalidation by date behaves the same in every build).
    static let embeddedModificationDate = Date(timeIntervalSince1970: 1_767_225_600)

    /// The samples to serve: the folder `$ALCEDO_SAMPLES` when it is set, else the embedded ones.
    static func load() throws(CLIFailure) -> [DemoSample] {
        if let folder = ProcessInfo.processInfo.environment["ALCEDO_SAMPLES"], !folder.isEmpty {
            return try load(from: URL(fileURLWithPath: folder, isDirectory: true))
        }
        return try embedded()
    }

    /// The samples compiled into the executable, sorted by name.
    static func embedded() throws(CLIFailure) -> [DemoSample] {
        var samples: [DemoSample] = []
        for (name, base64) in embeddedBase64 {
            let ext = name.filePathExtension.lowercased()
            guard let contentType = contentTypes[ext], let data = Data(base64Encoded: base64) else {
                throw CLIFailure(path: "samples", reason: "the embedded sample \(name) is damaged")
            }
            samples.append(sample(name: name, data: data, contentType: contentType, modified: embeddedModificationDate))
        }
        return samples
    }

    /// Loads every image of `folder`, sorted by name.
    static func load(from folder: URL) throws(CLIFailure) -> [DemoSample] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        } catch {
            throw CLIFailure(path: folder.path, reason: "cannot list: \(errorReason(error))")
        }
        var samples: [DemoSample] = []
        for name in names {
            let ext = name.filePathExtension.lowercased()
            guard let contentType = contentTypes[ext], !name.hasPrefix(".") else { continue }
            let path = folder.appendingPathComponent(name).path
            let data = try readFile(path)
            let modified = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? Date()
            samples.append(sample(name: name, data: data, contentType: contentType, modified: modified))
        }
        guard !samples.isEmpty else { throw CLIFailure(path: folder.path, reason: "holds no sample images") }
        return samples
    }

    private static func sample(name: String, data: Data, contentType: String, modified: Date) -> DemoSample {
        DemoSample(name: name, data: data, contentType: contentType,
                   etag: "\"\(ShortHash.hex(of: data, digits: 16))\"",
                   lastModified: HTTPDateFormat.string(from: modified))
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
        let dayOfMonth = String(cFormat: "%02ld", Int(parts.tm_mday))
        let time = String(cFormat: "%04ld %02ld:%02ld:%02ld", Int(parts.tm_year) + 1900,
                          Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
        return "\(day), \(dayOfMonth) \(month) \(time) GMT"
    }
}

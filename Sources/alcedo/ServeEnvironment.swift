import Alcedo
import AlcedoServer
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The environment of `alcedo serve`: each setting `NAME` is read from `ALCEDO_<NAME>`, else
/// from imgproxy's variable for it (`IMGPROXY_<NAME>`, or the imgproxy name in
/// ``imgproxyNames`` where imgproxy spells it differently), so an imgproxy deployment's
/// environment starts Alcedo unchanged. An empty value counts as unset, as imgproxy reads it.
///
/// Every variable consulted is recorded: ``unsupportedImgproxyVariables()`` names the
/// `IMGPROXY_*` variables that are set but that nothing read, and ``origin(of:)`` says which
/// variable gave a setting its value (for `--print-config`).
final class ServeEnvironment {
    /// The process environment (or a test's).
    let values: [String: String]
    /// Variables consulted, set or not.
    private var consulted: Set<String> = []
    /// Setting names in the order they were first looked up.
    private(set) var names: [String] = []
    /// The variable that supplied each setting found in the environment.
    private var origins: [String: String] = [:]
    /// Where each effective value came from, as ``record(_:flag:)`` and ``pick(_:flag:_:)`` record it.
    private(set) var sources: [String: String] = [:]

    /// imgproxy's names for Alcedo settings that imgproxy spells differently with the same unit
    /// and meaning. A setting not listed here is read from `IMGPROXY_<NAME>` as it is.
    static let imgproxyNames: [String: String] = [
        "CONCURRENCY": "WORKERS",
        "PRESET": "PRESETS",
    ]

    /// Alcedo settings that have no imgproxy counterpart of the same name and meaning: their
    /// `IMGPROXY_*` spelling is not read (imgproxy's own variable is converted explicitly
    /// where one exists: `BIND`, `REQUESTS_QUEUE_SIZE`, `MAX_SRC_FILE_SIZE`, `MAX_RESULT_DIMENSION`).
    static let alcedoOnly: Set<String> = [
        "HOST", "PORT", "CACHE_DIR", "ALLOW_PRIVATE_NETWORKS", "TRUSTED_SOURCE_HOST", "MAX_SRC_BYTES", "MAX_RESULT_SIDE",
        "QUEUE", "RESULT_CACHE_BYTES", "MEMORY_CACHE_BYTES", "PROCESSES", "CONNECT_TIMEOUT",
        "IMGPROXY_METRICS",
    ]

    /// Values from a `thumbor.conf` (``loadThumborConfig(_:path:)``), by Alcedo setting name, each
    /// converted to the text Alcedo reads and named by its key: read after every variable.
    private var fileValues: [String: (text: String, origin: String)] = [:]
    /// The `thumbor.conf` keys set that Alcedo does not read, sorted.
    private(set) var unsupportedThumborKeys: [String] = []
    /// The `thumbor.conf` keys set, read and valid, that change nothing a GET answers, in thumbor
    /// as in Alcedo (``thumborKeysWithoutEffect``), sorted.
    private(set) var thumborKeysReadWithoutEffect: [String] = []

    /// `thumbor.conf` keys that thumbor 7.8 reads only for requests Alcedo does not serve: read
    /// (a non-negative whole number, else named as unsupported) and without effect, by key, with why.
    static let thumborKeysWithoutEffect: [String: String] = [
        "MIN_WIDTH": "thumbor 7.8 checks it only on images uploaded to its /image endpoint (412 when smaller)",
        "MIN_HEIGHT": "thumbor 7.8 checks it only on images uploaded to its /image endpoint (412 when smaller)",
    ]

    /// A `thumbor.conf` key Alcedo reads: the Alcedo setting it gives a value to, and how its
    /// value becomes that setting's text (`nil`: a value Alcedo cannot use, named in the warning).
    struct ThumborKey: Sendable {
        let key: String
        let setting: String
        let convert: @Sendable (ThumborConfigFile.Value) -> String?
    }

    /// The `thumbor.conf` keys Alcedo supports: this table is the one declaration that reading,
    /// `--print-config` (which names `thumbor.conf:KEY` as the source) and the migration guide follow.
    static let thumborKeys: [ThumborKey] = {
        let same: @Sendable (ThumborConfigFile.Value) -> String? = { $0 == .none ? nil : $0.description }
        let number: @Sendable (ThumborConfigFile.Value) -> Double? = { if case .number(let n) = $0 { return n } else { return nil } }
        return [
            ThumborKey(key: "SECURITY_KEY", setting: "THUMBOR_SECURITY_KEY", convert: same),
            ThumborKey(key: "ALLOW_UNSAFE_URL", setting: "THUMBOR_ALLOW_UNSAFE_URL", convert: same),
            ThumborKey(key: "MAX_WIDTH", setting: "THUMBOR_MAX_WIDTH", convert: same),
            ThumborKey(key: "MAX_HEIGHT", setting: "THUMBOR_MAX_HEIGHT", convert: same),
            ThumborKey(key: "FILTERS", setting: "THUMBOR_FILTERS") { value in
                guard case .list(let items) = value else { return nil }
                return items.map { $0.description.split(separator: ".").last.map(String.init) ?? "" }.joined(separator: ",")
            },
            ThumborKey(key: "QUALITY", setting: "QUALITY", convert: same),
            ThumborKey(key: "WEBP_QUALITY", setting: "FORMAT_QUALITY") { value in number(value).map { "webp=\(Int($0))" } },
            ThumborKey(key: "AVIF_QUALITY", setting: "FORMAT_QUALITY") { value in number(value).map { "avif=\(Int($0))" } },
            ThumborKey(key: "AUTO_PNG_TO_JPG", setting: "THUMBOR_AUTO_PNG_TO_JPG", convert: same),
            ThumborKey(key: "AUTO_WEBP", setting: "AUTO_WEBP", convert: same),
            ThumborKey(key: "RESPECT_ORIENTATION", setting: "AUTO_ROTATE", convert: same),
            ThumborKey(key: "PRESERVE_EXIF_INFO", setting: "STRIP_METADATA") { value in
                if case .bool(let keep) = value { return keep ? "false" : "true" } else { return nil }
            },
            ThumborKey(key: "MAX_AGE", setting: "TTL", convert: same),
            ThumborKey(key: "MAX_PIXELS", setting: "MAX_SRC_RESOLUTION") { value in number(value).map { String($0 / 1_000_000) } },
            ThumborKey(key: "PROGRESSIVE_JPEG", setting: "JPEG_PROGRESSIVE", convert: same),
            ThumborKey(key: "HTTP_LOADER_REQUEST_TIMEOUT", setting: "DOWNLOAD_TIMEOUT", convert: same),
            ThumborKey(key: "HTTP_LOADER_CONNECT_TIMEOUT", setting: "CONNECT_TIMEOUT", convert: same),
            // thumbor's temporary images (a smart detection that failed) get this max-age; Alcedo
            // has no detectors, and its fallback answers are the images served in place of another.
            ThumborKey(key: "MAX_AGE_TEMP_IMAGE", setting: "FALLBACK_IMAGE_TTL", convert: same),
            ThumborKey(key: "HTTP_LOADER_MAX_BODY_SIZE", setting: "MAX_SRC_BYTES", convert: same),
            ThumborKey(key: "HTTP_LOADER_MAX_REDIRECTS", setting: "MAX_REDIRECTS", convert: same),
            ThumborKey(key: "HTTP_LOADER_DEFAULT_USER_AGENT", setting: "USER_AGENT", convert: same),
            ThumborKey(key: "ALLOWED_SOURCES", setting: "ALLOWED_SOURCES") { value in
                // Plain host names become URL prefixes; thumbor's regular expressions are not read.
                guard case .list(let items) = value else { return nil }
                let hosts = items.map(\.description)
                guard hosts.allSatisfy({ $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" } && !$0.isEmpty }) else { return nil }
                return hosts.flatMap { ["http://\($0)/", "https://\($0)/"] }.joined(separator: ",")
            },
        ]
    }()

    /// Environment variables of thumbor and imagor read for an Alcedo setting (after `ALCEDO_*`).
    static let thumborVariables: [String: [String]] = ["THUMBOR_SECURITY_KEY": ["THUMBOR_SECURITY_KEY", "IMAGOR_SECRET"]]

    init(_ values: [String: String]) { self.values = values }

    /// Reads `config` (a `thumbor.conf` found at `path`): each supported key gives its setting a
    /// value below every variable and flag; the others are kept for ``unsupportedThumborKeys``.
    func loadThumborConfig(_ config: ThumborConfigFile, path: String) {
        var unsupported: [String] = [], withoutEffect: [String] = []
        for (key, value) in config.values {
            if Self.thumborKeysWithoutEffect[key] != nil {
                if case .number(let number) = value, number >= 0, number == number.rounded() {
                    withoutEffect.append(key)
                } else {
                    unsupported.append(key)
                }
                continue
            }
            guard let entry = Self.thumborKeys.first(where: { $0.key == key }), let text = entry.convert(value) else {
                unsupported.append(key)
                continue
            }
            // Two keys for one setting (WEBP_QUALITY and AVIF_QUALITY): both, in key order.
            if let earlier = fileValues[entry.setting] {
                let both = [(earlier.origin, earlier.text), ("thumbor.conf:" + key, text)].sorted { $0.0 < $1.0 }
                fileValues[entry.setting] = (both.map(\.1).joined(separator: ","), both.map(\.0).joined(separator: ","))
            } else {
                fileValues[entry.setting] = (text, "thumbor.conf:" + key)
            }
        }
        unsupportedThumborKeys = unsupported.sorted()
        thumborKeysReadWithoutEffect = withoutEffect.sorted()
    }

    // MARK: Reading

    /// The value of setting `name`: `ALCEDO_<NAME>`, else its imgproxy variable; `nil` when
    /// neither is set to something non-empty.
    func string(_ name: String) -> String? {
        note(name)
        let candidates = variables(for: name)
        consulted.formUnion(candidates)
        for variable in candidates {
            if let value = values[variable], !value.isEmpty {
                origins[name] = variable
                return value
            }
        }
        if let (text, origin) = fileValues[name] {
            origins[name] = origin
            return text
        }
        return nil
    }

    /// The value of imgproxy's own variable `IMGPROXY_<NAME>` (for settings whose imgproxy
    /// form differs in unit or shape, converted by the caller); recorded like ``string(_:)``
    /// under the Alcedo setting `setting`.
    func imgproxyString(_ name: String, for setting: String) -> String? {
        let variable = "IMGPROXY_" + name
        consulted.insert(variable)
        guard let value = values[variable], !value.isEmpty else { return nil }
        if origins[setting] == nil { origins[setting] = variable }
        return value
    }

    /// Setting `name` as an integer.
    /// - Throws: ``ServerConfigurationError/invalidValue(_:message:)`` naming the variable.
    func int(_ name: String) throws(ServerConfigurationError) -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text.trimmingSpaces()) else {
            throw .invalidValue(origin(of: name) ?? name, message: "\"\(text)\" is not an integer")
        }
        return value
    }

    /// Setting `name` as a number.
    /// - Throws: ``ServerConfigurationError/invalidValue(_:message:)`` naming the variable.
    func double(_ name: String) throws(ServerConfigurationError) -> Double? {
        guard let text = string(name) else { return nil }
        guard let value = Double(text.trimmingSpaces()) else {
            throw .invalidValue(origin(of: name) ?? name, message: "\"\(text)\" is not a number")
        }
        return value
    }

    /// Setting `name` as a boolean: `1`, `true`, `t`, `yes`, `on` or `0`, `false`, `f`, `no`,
    /// `off`, in any case (Go's `strconv.ParseBool` forms, which imgproxy reads, and more).
    /// - Throws: ``ServerConfigurationError/invalidValue(_:message:)`` naming the variable.
    func bool(_ name: String) throws(ServerConfigurationError) -> Bool? {
        guard let text = string(name) else { return nil }
        guard let value = Self.parseBool(text) else {
            throw .invalidValue(origin(of: name) ?? name, message: "\"\(text)\" is not a boolean")
        }
        return value
    }

    /// Setting `name` as a comma-separated list, each item trimmed, empty items left out.
    func list(_ name: String, separator: String = ",") -> [String] {
        guard let text = string(name) else { return [] }
        return Self.split(text, separator: separator)
    }

    static func parseBool(_ text: String) -> Bool? {
        switch text.trimmingSpaces().lowercased() {
        case "1", "true", "t", "yes", "on": return true
        case "0", "false", "f", "no", "off": return false
        default: return nil
        }
    }

    static func split(_ text: String, separator: String) -> [String] {
        text.components(separatedBy: separator.isEmpty ? "," : separator)
            .map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
    }

    // MARK: Provenance

    /// The variable that gave setting `name` its value, if one did.
    func origin(of name: String) -> String? { origins[name] }

    /// Records where setting `name`'s effective value came from: `--flag` when `flag` is
    /// true, else the variable that supplied it, else `default`.
    func record(_ name: String, flag: Bool) {
        note(name)
        sources[name] = flag ? "--" + name.lowercased().replacing(literal: "_", with: "-") : (origins[name] ?? "default")
    }

    /// The flag's value when given, else `environment` (read whether or not the flag was
    /// given, so the variables are known as read); records the source of the value.
    func pick<T>(_ name: String, flag: T?, _ environment: T?) -> T? {
        record(name, flag: flag != nil)
        return flag ?? environment
    }

    /// The `IMGPROXY_*` variables set (non-empty) that no setting read, sorted.
    func unsupportedImgproxyVariables() -> [String] {
        values.keys.filter { $0.hasPrefix("IMGPROXY_") && !consulted.contains($0) && !(values[$0] ?? "").isEmpty }.sorted()
    }

    private func note(_ name: String) {
        if !names.contains(name) { names.append(name) }
    }

    private func variables(for name: String) -> [String] {
        if let foreign = Self.thumborVariables[name] { return ["ALCEDO_" + name] + foreign }
        if Self.alcedoOnly.contains(name) || name.hasPrefix("THUMBOR_") || name == "DIALECT" { return ["ALCEDO_" + name] }
        return ["ALCEDO_" + name, "IMGPROXY_" + (Self.imgproxyNames[name] ?? name)]
    }
}

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

/// An access key for S3 or an S3-compatible store: the key ID, the secret and, for temporary
/// credentials, a session token.
///
/// Credentials never print: ``description`` shows the key ID and whether a token is set,
/// never the secret or the token, so they are safe in logs and error messages.
///
/// ```swift
/// let credentials = try S3Credentials.resolve()   // environment, then ~/.aws/credentials
/// ```
public struct S3Credentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The access key ID, such as `AKIAIOSFODNN7EXAMPLE`.
    public var accessKeyID: String
    /// The secret access key.
    public var secretAccessKey: String
    /// The session token of temporary credentials (default `nil`), sent as `x-amz-security-token`.
    public var sessionToken: String?

    /// Creates credentials from their parts (`sessionToken` default `nil`).
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    public var description: String {
        "S3Credentials(accessKeyID: \(accessKeyID), secret: <redacted>\(sessionToken == nil ? "" : ", session token: <redacted>"))"
    }

    public var debugDescription: String { description }

    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` from `environment`
    /// (default: this process's), or `nil` when the key ID or the secret is missing or empty.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> S3Credentials? {
        guard let id = environment["AWS_ACCESS_KEY_ID"], !id.isEmpty,
              let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty else { return nil }
        let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        return S3Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: token)
    }

    /// The credentials of `profile` in a shared credentials file (the INI file the AWS tools
    /// write: `[profile]` sections with `aws_access_key_id`, `aws_secret_access_key` and
    /// `aws_session_token`).
    /// - Returns: `nil` when the file does not exist.
    /// - Throws: ``S3ConfigurationError`` when the file cannot be read or the profile is missing
    ///   or incomplete.
    public static func fromSharedFile(at url: URL, profile: String = "default") throws(S3ConfigurationError) -> S3Credentials? {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            if !FileManager.default.fileExists(atPath: url.path) { return nil }
            throw .unreadableCredentialsFile(url.path, message: errorReason(error))
        }
        let sections = parseINI(text)
        guard let section = sections[profile] ?? sections["profile " + profile] else {
            throw .missingProfile(profile, file: url.path)
        }
        guard let id = section["aws_access_key_id"], !id.isEmpty,
              let secret = section["aws_secret_access_key"], !secret.isEmpty else {
            throw .incompleteProfile(profile, file: url.path)
        }
        return S3Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: section["aws_session_token"].flatMap { $0.isEmpty ? nil : $0 })
    }

    /// Finds credentials as the AWS tools do: the environment (`AWS_ACCESS_KEY_ID`…), then
    /// the shared credentials file (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`)
    /// with the profile `AWS_PROFILE` (else `default`).
    /// - Returns: `nil` when none are found (requests then go unsigned, as for a public bucket).
    /// - Throws: ``S3ConfigurationError`` for a credentials file that exists but does not
    ///   hold the profile asked for.
    public static func resolve(environment: [String: String] = ProcessInfo.processInfo.environment) throws(S3ConfigurationError) -> S3Credentials? {
        if let found = fromEnvironment(environment) { return found }
        let file: URL
        if let path = environment["AWS_SHARED_CREDENTIALS_FILE"], !path.isEmpty {
            file = URL(fileURLWithPath: path)
        } else {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.accountHomeDirectory()
            file = URL(fileURLWithPath: home).appendingPathComponent(".aws/credentials")
        }
        let profile = environment["AWS_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        do {
            return try fromSharedFile(at: file, profile: profile)
        } catch {
            // Without AWS_PROFILE, a file lacking a default profile just means "no credentials here".
            if case .missingProfile = error, environment["AWS_PROFILE"]?.isEmpty ?? true { return nil }
            throw error
        }
    }

    /// `[section]` → key → value; `#` and `;` start comments; keys are lower-cased.
    static func parseINI(_ text: String) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingSpaces()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                let name = line.dropFirst().dropLast().trimmingSpaces()
                current = name
                if sections[name] == nil { sections[name] = [:] }
                continue
            }
            guard let section = current, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingSpaces().lowercased()
            let value = line[line.index(after: equals)...].trimmingSpaces()
            sections[section]?[key] = value
        }
        return sections
    }
}

extension S3Credentials {
    /// The home directory of the account the process runs as (from the password database),
    /// or `/` when it has none.
    fileprivate static func accountHomeDirectory() -> String {
        guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return "/" }
        return String(cString: directory)
    }
}

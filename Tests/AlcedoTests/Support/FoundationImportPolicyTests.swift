import Foundation
import Testing

/// The release `alcedo` stays free of CoreFoundation and ICU only while Alcedo's modules use
/// FoundationEssentials: a file that imports full Foundation can reach its `String` extensions,
/// which link both (about 43 MB). Only the files that name Kingfisher's geometry types, which
/// live in full Foundation on Linux, may import it.
@Suite("Full Foundation imports")
struct FoundationImportPolicyTests {
    static let modules = ["Alcedo", "AlcedoServer", "AlcedoRedis", "alcedo"]

    @Test("only files naming CGFloat, CGSize, CGPoint or CGRect import full Foundation")
    func onlyGeometryFilesImportFoundation() throws {
        let sources = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        var checked = 0
        for module in Self.modules {
            let folder = sources.appendingPathComponent(module)
            let files = try #require(FileManager.default.enumerator(atPath: folder.path)).compactMap { $0 as? String }
            for file in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                checked += 1
                // `import Foundation` as the `#else` of `#if canImport(FoundationEssentials)` is the
                // fallback for platforms without FoundationEssentials; any other is full Foundation.
                let full = lines.indices.contains { index in
                    lines[index].hasPrefix("import Foundation") && lines[index] != "import FoundationEssentials"
                        && (index == 0 || lines[index - 1] != "#else")
                }
                guard full else { continue }
                let code = lines.filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
                let namesGeometry = ["CGFloat", "CGSize", "CGPoint", "CGRect"].contains { code.contains($0) }
                #expect(namesGeometry, "\(module)/\(file) imports full Foundation; import FoundationEssentials instead (see README, Install and deploy)")
            }
        }
        #expect(checked > 200)
    }
}

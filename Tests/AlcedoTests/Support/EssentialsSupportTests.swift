import Alcedo
import Foundation
import Testing

/// The helpers that stand in for full Foundation's string, JSON and thread APIs, checked
/// against full Foundation itself on the same inputs.
@Suite("FoundationEssentials stand-ins")
struct EssentialsSupportTests {
    static let texts = [
        "", " ", "  a b  ", "\t\nline\r\n", "\u{00A0}nbsp\u{2003}", "\u{2028}x\u{2029}", "x\u{0085}",
        "no-space", " é ", "\n", "a\n b\n",
    ]

    @Test("trimming matches Foundation's whitespace sets", arguments: texts)
    func trimmingMatchesFoundation(_ text: String) {
        #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(text.trimmingSpaces() == text.trimmingCharacters(in: .whitespaces))
        #expect(text[...].trimmingSpaces() == text.trimmingCharacters(in: .whitespaces))
    }

    @Test("percent-decoding matches removingPercentEncoding", arguments: [
        "plain", "a%20b", "%E2%82%AC", "%e2%82%ac", "100%", "%2", "%zz", "%FF", "%C3%A9t%C3%A9", "+%2B", "%00x", "",
    ])
    func percentDecodingMatchesFoundation(_ text: String) {
        #expect(text.percentDecoded == text.removingPercentEncoding, "\(text)")
    }

    @Test("percent-encoding matches addingPercentEncoding for the URL path segment set")
    func percentEncodingMatchesFoundation() {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/")
        for text in ["a b", "é/ü", "x?y#z", "~!$&'()*+,;=:@", "%41", "\u{1F600}", "tab\tquote\"<>"] {
            #expect(text.percentEncoded(allowing: \.isURLPathSegmentAllowed) == text.addingPercentEncoding(withAllowedCharacters: allowed))
        }
        #expect("a b/c".percentEncoded(allowing: { $0 == UInt8(ascii: "/") || $0.isASCIIAlphanumeric }) == "a%20b/c")
    }

    @Test("case-blind search finds ASCII text whatever its case")
    func caseBlindSearch() {
        let text = "<?xml?><!doctype svg [<!ENTITY a \"b\">]><svg/>"
        let range = text.firstRangeIgnoringCase(of: "<!DOCTYPE")
        #expect(range.map { String(text[$0]) } == "<!doctype")
        #expect(text.firstRangeIgnoringCase(of: "<!DOCTYPEX") == nil)
        #expect("é<!DocType".firstRangeIgnoringCase(of: "<!doctype").map { "é<!DocType"[$0] } == "<!DocType")
        #expect("".firstRangeIgnoringCase(of: "a") == nil)
        #expect("abc".firstRangeIgnoringCase(of: "") == nil)
    }

    @Test("literal search sees what Foundation's literal search sees, combining marks and all", arguments: [
        ("../\u{301}x", "/"), ("a\r\nb", "\n"), ("a\r\nb", "\r"), ("é", "e"), ("e\u{301}", "e"), ("x]>\u{301}", "]>"),
        ("plain", "z"), ("", "a"), ("aaa", "aa"), ("<b>\u{301}</b>", "</b>"), ("\u{1F600}x", "x"),
    ])
    func literalSearchMatchesFoundation(_ text: String, _ needle: String) {
        let literal = text.range(of: needle, options: .literal)
        #expect(text.contains(literal: needle) == (literal != nil), "\(Array(text.unicodeScalars)) \(Array(needle.unicodeScalars))")
        #expect(text.range(ofLiteral: needle).map { Array(text.utf8[$0]) } == literal.map { Array(text.utf8[$0]) })
        #expect(text.range(ofLiteral: needle)?.lowerBound == literal?.lowerBound)
        #expect(text.replacing(literal: needle, with: "<>") == text.replacingOccurrences(of: needle, with: "<>", options: .literal))
        #expect(text[...].contains(literal: needle) == (literal != nil))
    }

    @Test("C formatting gives what String(format:) gives")
    func cFormatMatchesFoundation() {
        #expect(String(cFormat: "%.2f ms", 12.345) == String(format: "%.2f ms", 12.345))
        #expect(String(cFormat: "%.2g s", 0.0123) == String(format: "%.2g s", 0.0123))
        #expect(String(cFormat: "#%02X%02X%02X%02X", UInt8(1), UInt8(171), UInt8(255), UInt8(0)) == "#01ABFF00")
        #expect(String(cFormat: "%ldm%02lds", 3, 5) == "3m05s")
        #expect(String(cFormat: "%.5f", 0.45455) == String(format: "%.5f", 0.45455))
        let long = String(cFormat: "%0300ld", 7)
        #expect(long.count == 300 && long.hasSuffix("07"))
    }

    /// What `NSString.pathExtension` and `deletingLastPathComponent` give for each path (read
    /// from Foundation once; Foundation's own `deletingLastPathComponent` traps on some of
    /// these in this toolchain, so the values are written out).
    @Test("path helpers read paths as NSString does", arguments: [
        ("/a/b.jpg", "jpg", "/a"), ("/a/b", "", "/a"), ("/a/", "", "/"), ("/", "", "/"), ("a", "", ""),
        ("a/b/", "", "a"), ("", "", ""), ("/a/.hidden", "", "/a"), ("/a/b.tar.gz", "gz", "/a"),
        ("//a//b//", "", "/a"), ("x.y/z", "", "x.y"), ("a.b c", "b c", ""),
    ])
    func pathHelpersMatchNSString(_ path: String, _ pathExtension: String, _ parent: String) {
        #expect(path.filePathExtension == pathExtension, "\(path)")
        #expect(path.deletingLastFilePathComponent == parent, "\(path)")
    }

    @Test("padding adds spaces up to the width and never cuts")
    func padding() {
        #expect("ab".padded(to: 4) == "ab  ")
        #expect("abcdef".padded(to: 4) == "abcdef")
        #expect("é".padded(to: 2) == "é ")
    }

    @Test("JSON text reads back as the object it was made from, with JSONSerialization's choices")
    func jsonTextRoundTrips() throws {
        let object: [String: Any] = [
            "name": "a \"quoted\"\\ /path\n\u{01}é", "count": 3, "big": UInt64(1) << 40, "ratio": 0.25, "whole": 2.0,
            "flag": true, "off": false, "none": JSONNull(), "missing": Optional<Int>.none as Any,
            "list": [1, 2, 3], "doubles": [0.5, 1.5], "nested": ["b": 1, "a": [String: Any]()] as [String: Any],
            "empty": [Any](), "nan": Double.nan,
        ]
        let text = JSONText.string(object)
        #expect(text.hasPrefix("{\"big\":1099511627776,\"count\":3,\"doubles\":[0.5,1.5]"))
        #expect(text.contains("\"whole\":2") && !text.contains("2.0"))
        #expect(text.contains("\"nested\":{\"a\":{},\"b\":1}"))
        #expect(text.contains("/path") && JSONText.string(["p": "/"], escapingSlashes: true) == "{\"p\":\"\\/\"}")
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(parsed["name"] as? String == object["name"] as? String)
        #expect(parsed["none"] is NSNull && parsed["missing"] is NSNull && parsed["nan"] is NSNull)
        #expect((parsed["ratio"] as? NSNumber)?.doubleValue == 0.25)
        #expect((parsed["list"] as? [Int]) == [1, 2, 3])
        #expect(parsed["flag"] as? Bool == true && parsed["off"] as? Bool == false)
    }

    @Test("file kinds: regular file, folder, something else, missing")
    func fileKinds() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-kind-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("f")
        try Data([1]).write(to: file)
        #expect(FileKind(path: file.path) == .regular)
        #expect(FileKind(path: folder.path) == .directory)
        #expect(FileKind(path: "/dev/null") == .other)
        #expect(FileKind(path: folder.appendingPathComponent("missing").path) == .unreadable(errno: ENOENT))
        let fd = open(file.path, O_RDONLY)
        defer { close(fd) }
        #expect(FileKind(descriptor: fd) == .regular)
    }

    @Test("a detached thread runs its body on a thread of its own")
    func detachedThreadRuns() async {
        let caller = UInt(pthread_self())
        let ran = await withCheckedContinuation { (done: CheckedContinuation<UInt, Never>) in
            let started = startDetachedThread(stackSize: 8 << 20) {
                done.resume(returning: UInt(pthread_self()))
            }
            if !started { done.resume(returning: 0) }
        }
        #expect(ran != 0 && ran != caller)
    }

    @Test("error reasons: LocalizedError, POSIX and file errors read as one line")
    func errorReasons() {
        #expect(errorReason(AlcedoError.requestError(reason: .emptyRequest)) == AlcedoError.requestError(reason: .emptyRequest).description)
        #expect(errorReason(POSIXError(.ENOENT)) == "No such file or directory")
        do {
            _ = try FileManager.default.contentsOfDirectory(atPath: "/nonexistent-\(UUID().uuidString)")
            Issue.record("listing a missing folder succeeded")
        } catch {
            #expect(!errorReason(error).isEmpty)
        }
    }

    @Test("AlcedoError bridges to NSError with Kingfisher-style domain, code and description")
    func nsErrorBridging() {
        let error = AlcedoError.requestError(reason: .emptyRequest)
        let bridged = error as NSError
        #expect(bridged.domain == AlcedoError.errorDomain && AlcedoError.domain == "Alcedo.Error")
        #expect(bridged.code == error.errorCode)
        #expect(bridged.localizedDescription == error.description)
        #expect(error.localizedDescription == error.description)
    }
}

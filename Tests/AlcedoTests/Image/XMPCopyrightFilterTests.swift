import Foundation
import Testing
@testable import Alcedo

@Suite("XMP copyright filter")
struct XMPCopyrightFilterTests {
    static let packet = """
        <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">\
        <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
        <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmpRights:Marked="True" xmp:CreatorTool="Editor">\
        <dc:rights><rdf:Alt><rdf:li xml:lang="x-default">(c) Ada</rdf:li></rdf:Alt></dc:rights>\
        <photoshop:City>Lyon</photoshop:City>\
        <dc:creator><rdf:Seq><rdf:li>Ada</rdf:li></rdf:Seq></dc:creator><cc:license rdf:resource="https://example.com/l"/>\
        </rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>
        """

    @Test("keeps the rights, creator and licence properties and nothing else")
    func keepsCopyright() throws {
        let kept = String(decoding: try #require(XMPCopyrightFilter.filter(Data(Self.packet.utf8))), as: UTF8.self)
        #expect(kept.contains("<dc:rights><rdf:Alt><rdf:li xml:lang=\"x-default\">(c) Ada</rdf:li></rdf:Alt></dc:rights>"))
        #expect(kept.contains("<dc:creator><rdf:Seq><rdf:li>Ada</rdf:li></rdf:Seq></dc:creator>"))
        #expect(kept.contains("<cc:license rdf:resource=\"https://example.com/l\"/>"))
        #expect(kept.contains("xmpRights:Marked=\"True\""))
        #expect(!kept.contains("Lyon") && !kept.contains("CreatorTool"))
    }

    @Test("a packet with no copyright property gives nil")
    func nothingKept() {
        #expect(XMPCopyrightFilter.filter(Data("<x:xmpmeta><rdf:Description><a>b</a></rdf:Description></x:xmpmeta>".utf8)) == nil)
    }

    /// Packets made so that a search from each tag to the packet's end would be quadratic: tens
    /// of billions of comparisons for 1 MB. One pass reads each a few times.
    @Test("hostile packets are read in one pass", .timeLimit(.minutes(1)), arguments: [
        String(repeating: "<dc:rights>", count: 100_000),
        String(repeating: "<a", count: 500_000),
        String(repeating: "<rdf:Description ", count: 60_000) + ">",
        "<dc:rights>x</dc:rights>" + String(repeating: "<cc:x>", count: 150_000),
    ])
    func hostilePacketsAreLinear(_ text: String) {
        let kept = XMPCopyrightFilter.filter(Data(text.utf8))
        if text.hasPrefix("<dc:rights>x</dc:rights>") {
            #expect(kept.map { String(decoding: $0, as: UTF8.self).contains("<dc:rights>x</dc:rights>") } == true)
        }
    }
}

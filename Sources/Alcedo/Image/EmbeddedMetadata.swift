#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The EXIF, XMP and IPTC metadata an image file carried, as raw blocks.
///
/// Read when ``DecodingOptions/readsMetadata`` is set from JPEG (`APP1` EXIF and XMP
/// segments, the IPTC block of an `APP13` Photoshop segment), PNG (`eXIf`, an uncompressed
/// `iTXt` `XML:com.adobe.xmp`), WebP (`EXIF`, `XMP `), HEIC, HEIF and AVIF (the `Exif` item and
/// the `application/rdf+xml` `mime` item), JPEG XL (`Exif` and `xml ` boxes, Brotli-compressed
/// `brob` ones too) and TIFF (XMP tag 700, IPTC tag 33723; not EXIF) files. Written back when
/// ``EncodingOptions/writesMetadata`` is set, as libvips writes them: into JPEG (all three),
/// PNG, WebP, AVIF, HEIC and JPEG XL (EXIF and XMP) and TIFF (XMP and IPTC) results; the
/// HEIC, AVIF, JPEG XL and TIFF encoders write them themselves. A block is read only when
/// it is at most ``maxBlockBytes`` long.
public struct EmbeddedMetadata: Sendable, Hashable {
    /// The EXIF block: a TIFF structure starting with `II` or `MM` (no `Exif\0\0` prefix), or `nil`.
    public var exif: Data?
    /// The XMP packet (UTF-8 XML), or `nil`.
    public var xmp: Data?
    /// The IPTC-IIM datasets (each `0x1C`, record, dataset, length, value), or `nil`.
    public var iptc: Data?

    /// Metadata from its blocks (each `nil` by default: none).
    public init(exif: Data? = nil, xmp: Data? = nil, iptc: Data? = nil) {
        self.exif = exif
        self.xmp = xmp
        self.iptc = iptc
    }

    /// `true` when no block is present.
    public var isEmpty: Bool { exif == nil && xmp == nil && iptc == nil }

    /// The longest block read from a HEIF, AVIF, JPEG XL or TIFF file (16 MiB, as an ICC profile).
    public static let maxBlockBytes = EmbeddedProfileReader.maxProfileBytes

    /// The metadata of an encoded JPEG, PNG, WebP, HEIC, HEIF, AVIF, JPEG XL or TIFF file
    /// (empty for other formats and for malformed containers: what reads before the damage
    /// is kept). Only the containers' headers are read, never the pixels.
    public static func read(from data: Data) -> EmbeddedMetadata {
        // The headers are walked in place: no copy of the source's bytes.
        let read: (UnsafeRawBufferPointer) -> EmbeddedMetadata
        switch ImageFormat.sniff(data) {
        case .jpeg: read = MetadataContainers.readJPEG
        case .png, .apng: read = MetadataContainers.readPNG
        case .webp: read = MetadataContainers.readWebP
        case .heic: return HEIFSession.metadata(data, format: .heic)
        case .heif: return HEIFSession.metadata(data, format: .heif)
        case .avif: return AVIFSession.metadata(data)
        case .jxl: return JXLMetadata.read(data)
        case .tiff: return TIFFReadSession.metadata(data)
        default: return EmbeddedMetadata()
        }
        return data.withUnsafeBytes(read)
    }

    /// An EXIF block as HEIF and JPEG XL store it: a big-endian 32-bit offset, then the TIFF
    /// header that many bytes further (`nil` when the offset points past the block or not at
    /// a TIFF header).
    static func exif(afterHeaderOffset bytes: UnsafeRawBufferPointer) -> Data? {
        guard bytes.count >= 4 else { return nil }
        let offset = bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        guard offset <= bytes.count - 4 else { return nil }
        return exif(startingAt: UnsafeRawBufferPointer(rebasing: bytes[(4 + offset)...]))
    }

    /// `bytes` as a stored EXIF block: from its TIFF header, an `Exif\0\0` prefix dropped
    /// (`nil` without a TIFF header).
    static func exif(startingAt bytes: UnsafeRawBufferPointer) -> Data? {
        let tiff = bytes.starts(with: MetadataContainers.exifIdentifier) ? bytes.dropFirst(MetadataContainers.exifIdentifier.count) : bytes[...]
        guard tiff.starts(with: [0x49, 0x49, 42, 0]) || tiff.starts(with: [0x4D, 0x4D, 0, 42]) else { return nil }
        return Data(tiff)
    }

    /// The whole IPTC-IIM datasets at the start of `bytes` (a TIFF's block is padded to a
    /// 32-bit word), or `nil` when there are none.
    static func iptcDatasets(_ bytes: UnsafeRawBufferPointer) -> Data? {
        let end = walkIPTC(bytes) { _, _, _ in }
        return end > 0 ? Data(bytes[..<end]) : nil
    }

    /// Calls `body` with the record, dataset number and byte range (header included) of each
    /// whole dataset at the start of `bytes`; returns where the last one ends.
    @discardableResult
    static func walkIPTC<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, _ body: (UInt8, UInt8, Range<Int>) -> Void) -> Int
        where Bytes.Index == Int {
        var offset = 0
        while offset + 5 <= bytes.count, bytes[offset] == 0x1C {
            let length = Int(bytes[offset + 3]) << 8 | Int(bytes[offset + 4])
            // An extended length (high bit set) is not written by the tools this reads: stop.
            guard length & 0x8000 == 0, offset + 5 + length <= bytes.count else { break }
            body(bytes[offset + 1], bytes[offset + 2], offset..<(offset + 5 + length))
            offset += 5 + length
        }
        return offset
    }

    /// `data`, an encoded `format` file, with these blocks written in (JPEG: EXIF, XMP and
    /// IPTC; PNG and WebP: EXIF and XMP, as libvips; other formats unchanged: their encoders
    /// write the blocks themselves).
    /// - Parameter hasAlpha: whether the image has alpha (a simple WebP made extended needs the flag).
    public func embedded(in data: Data, format: ImageFormat, width: Int, height: Int, hasAlpha: Bool) -> Data {
        guard !isEmpty else { return data }
        let bytes = [UInt8](data)
        let written: [UInt8]?
        switch format {
        case .jpeg: written = MetadataContainers.writeJPEG(bytes, self)
        case .png, .apng: written = MetadataContainers.writePNG(bytes, self)
        case .webp: written = MetadataContainers.writeWebP(bytes, self, width: width, height: height, hasAlpha: hasAlpha)
        default: written = nil
        }
        return written.map { Data($0) } ?? data
    }

    /// A copy whose EXIF orientation tag says 1 (upright), for pixels already turned upright.
    public func orientationReset() -> EmbeddedMetadata {
        var copy = self
        if let exif, var tiff = ExifBlock(exif) {
            tiff.setIFD0Short(tag: ExifBlock.orientationTag, to: 1)
            copy.exif = Data(tiff.bytes)
        }
        return copy
    }

    /// A copy whose EXIF `PixelXDimension` and `PixelYDimension` (in the EXIF sub-IFD, where
    /// present) state `width` and `height`, as libvips updates them when it writes a result.
    public func dimensionsSet(width: Int, height: Int) -> EmbeddedMetadata {
        var copy = self
        if let exif, var tiff = ExifBlock(exif) {
            tiff.setExifDimensions(width: width, height: height)
            copy.exif = Data(tiff.bytes)
        }
        return copy
    }

    /// Only the copyright and authorship notices, as imgproxy's `keep_copyright` keeps them:
    /// the EXIF `Artist` and `Copyright` tags; the XMP `dc:rights`, `dc:creator`,
    /// `dc:contributor`, `dc:publisher` and the `xmpRights` and `cc` namespaces' properties;
    /// the IPTC records other than the application record, and its By-line (2:80), Credit
    /// (2:110) and Copyright Notice (2:116). A block left with nothing is dropped.
    public func copyrightOnly() -> EmbeddedMetadata {
        EmbeddedMetadata(exif: exif.flatMap { ExifBlock($0)?.copyrightOnly() },
                         xmp: xmp.flatMap(XMPCopyrightFilter.filter),
                         iptc: iptc.flatMap(Self.copyrightIPTC))
    }

    /// The IPTC datasets imgproxy keeps for copyright.
    static func copyrightIPTC(_ iptc: Data) -> Data? {
        let bytes = [UInt8](iptc)
        var kept: [UInt8] = []
        walkIPTC(bytes) { record, dataset, range in
            if record != 2 || [80, 110, 116].contains(dataset) { kept += bytes[range] }
        }
        return kept.isEmpty ? nil : Data(kept)
    }
}

/// An EXIF block as bytes, with the few edits libvips makes when it writes one.
struct ExifBlock {
    static let orientationTag: UInt16 = 0x0112
    static let artistTag: UInt16 = 0x013B
    static let copyrightTag: UInt16 = 0x8298

    private(set) var bytes: [UInt8]
    private let bigEndian: Bool

    /// `nil` unless `data` (after an optional `Exif\0\0`) starts with a TIFF header.
    init?(_ data: Data) {
        var bytes = [UInt8](data)
        if bytes.starts(with: [0x45, 0x78, 0x69, 0x66, 0, 0]) { bytes.removeFirst(6) }
        guard bytes.count >= 8 else { return nil }
        switch (bytes[0], bytes[1]) {
        case (0x49, 0x49): bigEndian = false
        case (0x4D, 0x4D): bigEndian = true
        default: return nil
        }
        self.bytes = bytes
        guard uint16(at: 2) == 42 else { return nil }
    }

    func uint16(at offset: Int) -> UInt16? {
        guard offset >= 0, offset + 2 <= bytes.count else { return nil }
        let a = UInt16(bytes[offset]), b = UInt16(bytes[offset + 1])
        return bigEndian ? a << 8 | b : b << 8 | a
    }

    func uint32(at offset: Int) -> UInt32? {
        guard let high = uint16(at: offset + (bigEndian ? 0 : 2)), let low = uint16(at: offset + (bigEndian ? 2 : 0)) else { return nil }
        return UInt32(high) << 16 | UInt32(low)
    }

    /// The offsets of IFD0's 12-byte entries.
    var ifd0Entries: [Int] {
        guard let ifd = uint32(at: 4).map(Int.init) else { return [] }
        return entries(ofIFDAt: ifd)
    }

    /// The offsets of the 12-byte entries of the IFD at `ifd`.
    func entries(ofIFDAt ifd: Int) -> [Int] {
        guard let count = uint16(at: ifd) else { return [] }
        return (0..<Int(count)).map { ifd + 2 + $0 * 12 }.filter { $0 + 12 <= bytes.count }
    }

    /// Writes `value` into an entry's value field in place: as a SHORT or a LONG, as the entry is typed.
    mutating func setNumber(entry: Int, to value: UInt32) {
        switch uint16(at: entry + 2) {
        case 3:
            let short = UInt16(clamping: value)
            bytes[entry + 8] = UInt8(bigEndian ? short >> 8 : short & 0xFF)
            bytes[entry + 9] = UInt8(bigEndian ? short & 0xFF : short >> 8)
        case 4:
            for index in 0..<4 {
                let shift = UInt32(bigEndian ? 24 - 8 * index : 8 * index)
                bytes[entry + 8 + index] = UInt8(value >> shift & 0xFF)
            }
        default:
            break
        }
    }

    /// Sets a SHORT tag of IFD0 in place (nothing when the tag is absent or of another type).
    mutating func setIFD0Short(tag: UInt16, to value: UInt16) {
        for entry in ifd0Entries where uint16(at: entry) == tag && uint16(at: entry + 2) == 3 {
            setNumber(entry: entry, to: UInt32(value))
        }
    }

    /// Sets `PixelXDimension` (0xA002) and `PixelYDimension` (0xA003) of the EXIF sub-IFD in place.
    mutating func setExifDimensions(width: Int, height: Int) {
        guard let pointer = ifd0Entries.first(where: { uint16(at: $0) == 0x8769 }), let ifd = uint32(at: pointer + 8).map(Int.init) else { return }
        for entry in entries(ofIFDAt: ifd) {
            switch uint16(at: entry) {
            case 0xA002: setNumber(entry: entry, to: UInt32(clamping: width))
            case 0xA003: setNumber(entry: entry, to: UInt32(clamping: height))
            default: break
            }
        }
    }

    /// The ASCII value of an IFD0 tag, without its terminating zero.
    func ifd0ASCII(tag: UInt16) -> [UInt8]? {
        for entry in ifd0Entries where uint16(at: entry) == tag && uint16(at: entry + 2) == 2 {
            guard let count = uint32(at: entry + 4).map(Int.init), count > 0 else { return nil }
            let start = count <= 4 ? entry + 8 : uint32(at: entry + 8).map(Int.init) ?? -1
            guard start >= 0, start + count <= bytes.count else { return nil }
            var value = Array(bytes[start..<(start + count)])
            while value.last == 0 { value.removeLast() }
            return value
        }
        return nil
    }

    /// A new little-endian EXIF block holding only IFD0's `Artist` and `Copyright`, or `nil`
    /// when the block has neither.
    func copyrightOnly() -> Data? {
        let fields = [Self.artistTag, Self.copyrightTag].compactMap { tag in ifd0ASCII(tag: tag).map { (tag, $0 + [0]) } }
        guard !fields.isEmpty else { return nil }
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16) }
        var out: [UInt8] = [0x49, 0x49] + le16(42) + le32(8) + le16(fields.count)
        var data: [UInt8] = []
        let dataStart = 8 + 2 + fields.count * 12 + 4
        for (tag, value) in fields {
            out += le16(Int(tag)) + le16(2) + le32(value.count)
            if value.count <= 4 {
                out += value + [UInt8](repeating: 0, count: 4 - value.count)
            } else {
                out += le32(dataStart + data.count)
                data += value
                if data.count % 2 == 1 { data.append(0) }
            }
        }
        return Data(out + le32(0) + data)
    }
}

/// Keeps the copyright properties of an XMP packet (see ``EmbeddedMetadata/copyrightOnly()``),
/// written into a new packet. The properties are found by their usual prefixes (`dc:`,
/// `xmpRights:`, `cc:`), as element or attribute of an `rdf:Description`.
enum XMPCopyrightFilter {
    static let keptElements = ["dc:rights", "dc:creator", "dc:contributor", "dc:publisher"]
    static let keptPrefixes = ["xmpRights:", "cc:"]

    /// The kept properties of `xmp` in a new packet, or `nil` when it has none.
    ///
    /// One pass over the packet's bytes: every scan starts where the last one ended, so a
    /// packet of n bytes costs O(n) whatever it holds (no quadratic search for closing tags
    /// that never come: an element left open ends the pass).
    static func filter(_ xmp: Data) -> Data? {
        let text = String(decoding: xmp, as: UTF8.self)
        let bytes = text.utf8
        var elements: [String] = []
        var attributes: [String] = []
        var searchFrom = bytes.startIndex
        while let open = bytes[searchFrom...].firstIndex(of: UInt8(ascii: "<")) {
            let nameStart = bytes.index(after: open)
            // A name ends at white space, `>`, `/` or the next `<` (which starts another tag).
            let nameEnd = bytes[nameStart...].firstIndex(where: isNameEnd) ?? bytes.endIndex
            searchFrom = nameEnd
            let name = String(text[nameStart..<nameEnd])
            let kept = keptElements.contains(name) || keptPrefixes.contains(where: name.hasPrefix)
            guard name == "rdf:Description" || kept else { continue }
            guard let tagEnd = bytes[nameEnd...].firstIndex(of: UInt8(ascii: ">")) else { break }
            searchFrom = bytes.index(after: tagEnd)
            if name == "rdf:Description" {
                attributes += keptAttributes(String(text[nameEnd..<tagEnd]))
            } else if bytes[bytes.index(before: tagEnd)] == UInt8(ascii: "/") {
                elements.append(String(text[open...tagEnd]))
            } else if let close = text[tagEnd...].range(ofLiteral: "</" + name + ">") {
                elements.append(String(text[open..<close.upperBound]))
                searchFrom = close.upperBound
            } else {
                break
            }
        }
        guard !elements.isEmpty || !attributes.isEmpty else { return nil }
        let packet = "<?xpacket begin=\"\u{FEFF}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n"
            + "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">"
            + "<rdf:Description rdf:about=\"\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\""
            + " xmlns:xmpRights=\"http://ns.adobe.com/xap/1.0/rights/\" xmlns:cc=\"http://creativecommons.org/ns#\""
            + attributes.map { " " + $0 }.joined() + ">"
            + elements.joined() + "</rdf:Description></rdf:RDF></x:xmpmeta>\n<?xpacket end=\"w\"?>"
        return Data(packet.utf8)
    }

    private static func isNameEnd(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: ">"), UInt8(ascii: "/"), UInt8(ascii: "<"),
             UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r"): true
        default: false
        }
    }

    /// The kept `name="value"` attributes of an `rdf:Description` start tag's attribute text.
    private static func keptAttributes(_ text: String) -> [String] {
        var kept: [String] = []
        var rest = Substring(text)
        while let equals = rest.firstIndex(of: "=") {
            let name = rest[..<equals].trimmingWhitespace()
            let afterEquals = rest[rest.index(after: equals)...].drop(while: { $0 == " " })
            guard let quote = afterEquals.first, quote == "\"" || quote == "'",
                  let closing = afterEquals.dropFirst().firstIndex(of: quote) else { break }
            let value = afterEquals[afterEquals.index(after: afterEquals.startIndex)..<closing]
            if keptElements.contains(name) || keptPrefixes.contains(where: name.hasPrefix) {
                kept.append("\(name)=\"\(value)\"")
            }
            rest = afterEquals[afterEquals.index(after: closing)...]
        }
        return kept
    }
}

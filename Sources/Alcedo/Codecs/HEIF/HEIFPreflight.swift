#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The sizes a HEIF file declares for its primary image, read from its ISO-BMFF boxes
/// (ISO/IEC 23008-12) before libheif sees the file, so that ``DecodingLimits`` are checked
/// against every size that decides how much libheif allocates.
///
/// libheif sizes the output of a `grid` item (how phones store HEIC) from the `ImageGrid`
/// descriptor in the item's data, not from its `ispe` property, and allocates that whole
/// canvas before it decodes the first tile; the two can disagree in a hostile file. It also
/// refuses an `ispe` over 32768 per side with an allocation error of its own, which would hide
/// the limit Alcedo's caller set. Reading both sizes here makes the answer `.tooManyPixels` in
/// both cases, with nothing allocated.
///
/// Only what the check needs is read: `meta` → `pitm`, `iinf`/`infe` (the primary item's
/// type), `iprp` (`ipco` + `ipma`: its `ispe`), and for a grid `iloc` + `idat` or the file
/// (the first 8 or 12 bytes of its `ImageGrid`). Anything malformed yields `nil` for that
/// size: libheif then reports the error.
struct HEIFDeclaredSizes: Equatable, Sendable {
    /// The primary item's `ispe` size, if it has one.
    var spatialExtent: Size?
    /// The output size of the primary item's `ImageGrid`, if the primary item is a `grid`.
    var gridOutput: Size?

    struct Size: Equatable, Sendable {
        var width: Int
        var height: Int
    }

    /// Every declared size, for checking against the limits.
    var all: [Size] { [spatialExtent, gridOutput].compactMap { $0 } }

    /// Why the two sizes of a grid disagree, or `nil`. libheif reports a grid item's `ispe`
    /// size as the image's size but assembles a canvas of its `ImageGrid` size, so with the
    /// two apart, reading the size and decoding would give different answers; ISO/IEC 23008-12
    /// has the `ispe` of an image item describe its reconstructed image, so such a file is malformed.
    var gridMismatch: String? {
        guard let extent = spatialExtent, let grid = gridOutput, extent != grid else { return nil }
        return "the grid's ispe size \(extent.width)x\(extent.height) disagrees with its ImageGrid output "
            + "\(grid.width)x\(grid.height)"
    }

    /// Reads the declared sizes of `data`'s primary item; `nil` when the file has no
    /// readable `meta` box or primary item.
    init?(_ data: Data) {
        guard let sizes = data.withUnsafeBytes({ HEIFBoxReader(bytes: $0).declaredSizes() }) else { return nil }
        self = sizes
    }

    init(spatialExtent: Size?, gridOutput: Size?) {
        self.spatialExtent = spatialExtent
        self.gridOutput = gridOutput
    }
}

/// Checks made on a HEIF file's boxes before libheif reads it, for what libheif 1.15 does not
/// guard against itself.
///
/// - **Sizes**: a grid whose `ispe` and `ImageGrid` sizes disagree is refused (so that
///   ``HEIFDecoder/info(for:options:)`` and ``HEIFDecoder/decode(_:options:)`` agree on it);
///   every size in ``HEIFDeclaredSizes`` is checked against the limits.
/// - **Grid coverage**: a grid whose tiles would not cover its output is refused: libheif 1.15
///   would hand back the uncovered part of its canvas uninitialised (earlier heap contents).
/// - **Item count**: more than ``maxItemCount`` items are refused before libheif parses them.
/// - **Derived images**: libheif decodes a `grid` (or `iden`, `iovl`) item by decoding the
///   items its `dimg` references name, recursively and without a depth bound, so references
///   that loop back (a grid whose tile is the grid, or two grids naming each other) overflow
///   its stack and end the process. Such files are refused, as are chains of derived images
///   deeper than ``maxDerivationDepth``.
enum HEIFPreflight {
    /// The longest chain of `dimg` references accepted (8; real files use 1, a grid of tiles,
    /// or 2, an `iden` over a grid).
    static let maxDerivationDepth = 8

    /// The most items (`infe` entries: tiles, thumbnails, metadata) a file may have: 4096. A
    /// phone's grid has about 50 and a 100 MP image in 256x256 tiles 1600; libheif 1.15 reads
    /// the item boxes in time growing with the square of their count (0.8 s for 4096 items,
    /// 17 s for 19600 on this project's machines), before any limit could stop it.
    static let maxItemCount = 4096

    /// Throws `.unsupportedFeature` for more than `maxItemCount` items (default
    /// ``maxItemCount``), `.invalidHeader` for `dimg` references that form a cycle,
    /// `.unsupportedFeature` for derived images nested deeper than ``maxDerivationDepth``,
    /// `.invalidHeader` for a grid whose `ispe` and `ImageGrid` sizes disagree,
    /// `.tooManyPixels` for a declared size over `limits` (when given), then `.invalidHeader`
    /// for grid tiles that do not cover the grid's output. A file whose boxes cannot be read
    /// passes: libheif reports what is wrong with it.
    static func check(_ data: Data, limits: DecodingLimits?, format: ImageFormat,
                      maxItemCount: Int = HEIFPreflight.maxItemCount) throws(AlcedoError) {
        let (itemCount, references) = data.withUnsafeBytes { raw -> (Int, [Int: [Int]]) in
            let reader = HEIFBoxReader(bytes: raw)
            guard let boxes = reader.metaBoxes() else { return (0, [:]) }
            return (reader.itemTypes(in: boxes).count, reader.derivedImageReferences(in: boxes))
        }
        if itemCount > maxItemCount {
            throw .decodingError(reason: .unsupportedFeature(format: format, message:
                "the file has \(itemCount) items, more than the \(maxItemCount) accepted"))
        }
        switch derivationProblem(references) {
        case .cycle(let item)?:
            throw .decodingError(reason: .invalidHeader(format: format, message:
                "derived image item \(item) depends on itself through its dimg references"))
        case .tooDeep?:
            throw .decodingError(reason: .unsupportedFeature(format: format, message:
                "derived images are nested more than \(maxDerivationDepth) deep"))
        case nil:
            break
        }
        let sizes = HEIFDeclaredSizes(data)
        if let problem = sizes?.gridMismatch {
            throw .decodingError(reason: .invalidHeader(format: format, message: problem))
        }
        if let limits {
            for size in sizes?.all ?? [] {
                try limits.check(width: size.width, height: size.height, format: format)
            }
        }
        if let problem = data.withUnsafeBytes({ HEIFBoxReader(bytes: $0).gridCoverageProblem() }) {
            throw .decodingError(reason: .invalidHeader(format: format, message: problem))
        }
    }

    enum DerivationProblem: Equatable {
        case cycle(item: Int)
        case tooDeep
    }

    /// Walks the `dimg` graph (item → the items it is derived from) from every item; the walk
    /// never goes deeper than ``maxDerivationDepth`` + 1, so hostile graphs cost no stack.
    static func derivationProblem(_ references: [Int: [Int]]) -> DerivationProblem? {
        var finished = Set<Int>(), path = Set<Int>()
        func visit(_ item: Int, level: Int) -> DerivationProblem? {
            if finished.contains(item) { return nil }
            if path.contains(item) { return .cycle(item: item) }
            guard let sources = references[item], !sources.isEmpty else {
                finished.insert(item)
                return nil
            }
            if level >= maxDerivationDepth { return .tooDeep }
            path.insert(item)
            for source in sources {
                if let problem = visit(source, level: level + 1) { return problem }
            }
            path.remove(item)
            finished.insert(item)
            return nil
        }
        for item in references.keys.sorted() {
            if let problem = visit(item, level: 0) { return problem }
        }
        return nil
    }
}

/// A bounds-checked reader of ISO-BMFF boxes over a file's bytes.
private struct HEIFBoxReader {
    let bytes: UnsafeRawBufferPointer

    struct Box {
        var type: String
        /// The payload (after the size and type, and the 64-bit size when there is one).
        var payload: Range<Int>
    }

    func u8(_ at: Int) -> Int? {
        at >= 0 && at < bytes.count ? Int(bytes[at]) : nil
    }

    /// A big-endian unsigned number of `count` bytes (0...8) at `at`.
    func number(_ at: Int, count: Int) -> Int? {
        guard count >= 0, count <= 8, at >= 0, at <= bytes.count - count else { return nil }
        var value: UInt64 = 0
        for index in 0..<count { value = value << 8 | UInt64(bytes[at + index]) }
        return value <= UInt64(Int.max) ? Int(value) : nil
    }

    func fourCC(_ at: Int) -> String? {
        guard at >= 0, at <= bytes.count - 4 else { return nil }
        return String(decoding: bytes[at..<at + 4], as: UTF8.self)
    }

    /// The boxes in `range`, stopping at the first one that does not fit.
    func children(of range: Range<Int>) -> [Box] {
        var result = [Box]()
        var position = range.lowerBound
        while position + 8 <= range.upperBound {
            guard var size = number(position, count: 4), let type = fourCC(position + 4) else { break }
            var header = 8
            if size == 1 {
                guard let large = number(position + 8, count: 8) else { break }
                size = large
                header = 16
            } else if size == 0 {
                size = range.upperBound - position
            }
            guard size >= header, size <= range.upperBound - position else { break }
            result.append(Box(type: type, payload: position + header..<position + size))
            position += size
        }
        return result
    }

    /// The boxes in the top-level `meta` box.
    func metaBoxes() -> [Box]? {
        guard let meta = children(of: 0..<bytes.count).first(where: { $0.type == "meta" }),
              meta.payload.count >= 4 else { return nil }
        return children(of: meta.payload.lowerBound + 4..<meta.payload.upperBound)  // FullBox header
    }

    /// The `dimg` references of `iref`: each derived item and the items it is made from.
    func derivedImageReferences(in boxes: [Box]) -> [Int: [Int]] {
        guard let iref = boxes.first(where: { $0.type == "iref" }), let version = u8(iref.payload.lowerBound),
              iref.payload.count >= 4 else { return [:] }
        let idCount = version == 0 ? 2 : 4
        var references = [Int: [Int]]()
        for reference in children(of: iref.payload.lowerBound + 4..<iref.payload.upperBound) where reference.type == "dimg" {
            var position = reference.payload.lowerBound
            guard let from = number(position, count: idCount), let count = number(position + idCount, count: 2) else { continue }
            position += idCount + 2
            for _ in 0..<count {
                guard position + idCount <= reference.payload.upperBound, let to = number(position, count: idCount) else { break }
                references[from, default: []].append(to)
                position += idCount
            }
        }
        return references
    }

    /// The `pitm` item.
    func primaryItem(in boxes: [Box]) -> Int? {
        guard let pitm = boxes.first(where: { $0.type == "pitm" }), let version = u8(pitm.payload.lowerBound) else { return nil }
        return number(pitm.payload.lowerBound + 4, count: version == 0 ? 2 : 4)
    }

    func declaredSizes() -> HEIFDeclaredSizes? {
        guard let boxes = metaBoxes(), let primary = primaryItem(in: boxes) else { return nil }
        var sizes = HEIFDeclaredSizes(spatialExtent: spatialExtent(propertyAssociations(in: boxes)[primary] ?? []), gridOutput: nil)
        if itemTypes(in: boxes)[primary] == "grid", let grid = itemPrefix(of: primary, count: 12, in: boxes) {
            sizes.gridOutput = Self.imageGridOutput(grid)
        }
        return sizes
    }

    /// The `item_type` of every item, from the `infe` boxes (versions 2 and 3) in `iinf`.
    func itemTypes(in boxes: [Box]) -> [Int: String] {
        guard let iinf = boxes.first(where: { $0.type == "iinf" }), let version = u8(iinf.payload.lowerBound) else { return [:] }
        let entries = iinf.payload.lowerBound + 4 + (version == 0 ? 2 : 4)
        guard entries <= iinf.payload.upperBound else { return [:] }
        var types = [Int: String]()
        for infe in children(of: entries..<iinf.payload.upperBound) where infe.type == "infe" {
            let start = infe.payload.lowerBound
            guard let infeVersion = u8(start), infeVersion >= 2 else { continue }
            let idCount = infeVersion == 2 ? 2 : 4
            guard start + 4 + idCount + 6 <= infe.payload.upperBound, let item = number(start + 4, count: idCount),
                  types[item] == nil, let type = fourCC(start + 4 + idCount + 2) else { continue }
            types[item] = type
        }
        return types
    }

    /// The properties associated with each item through `ipma`, in order (one pass over the
    /// boxes, so that a file with many items costs time in proportion to its size).
    func propertyAssociations(in boxes: [Box]) -> [Int: [Box]] {
        guard let iprp = boxes.first(where: { $0.type == "iprp" }) else { return [:] }
        let iprpBoxes = children(of: iprp.payload)
        guard let ipco = iprpBoxes.first(where: { $0.type == "ipco" }) else { return [:] }
        let properties = children(of: ipco.payload)
        var result = [Int: [Box]]()
        for ipma in iprpBoxes where ipma.type == "ipma" {
            let start = ipma.payload.lowerBound
            guard let version = u8(start), let flags = number(start + 1, count: 3),
                  let entryCount = number(start + 4, count: 4) else { continue }
            let idCount = version < 1 ? 2 : 4, indexCount = flags & 1 != 0 ? 2 : 1
            var position = start + 8
            entries: for _ in 0..<min(entryCount, ipma.payload.count) {
                guard let id = number(position, count: idCount), let associations = u8(position + idCount) else { break }
                position += idCount + 1
                for _ in 0..<associations {
                    guard position + indexCount <= ipma.payload.upperBound,
                          let raw = number(position, count: indexCount) else { break entries }
                    position += indexCount
                    let index = raw & (indexCount == 2 ? 0x7FFF : 0x7F)
                    if index >= 1, index <= properties.count { result[id, default: []].append(properties[index - 1]) }
                }
            }
        }
        return result
    }

    /// The first `ispe` among `properties`.
    func spatialExtent(_ properties: [Box]) -> HEIFDeclaredSizes.Size? {
        for property in properties where property.type == "ispe" && property.payload.count >= 12 {
            if let width = number(property.payload.lowerBound + 4, count: 4), let height = number(property.payload.lowerBound + 8, count: 4) {
                return HEIFDeclaredSizes.Size(width: width, height: height)
            }
        }
        return nil
    }

    /// Why the tiles of the primary `grid` item would leave part of its output unwritten
    /// (libheif 1.15 then returns whatever its freshly allocated canvas held there), or `nil`.
    /// libheif places each tile by its `ispe` size and pastes what the decoder made of it, so
    /// the tiles must share one `ispe` size, cover the output, and decode (HEVC tiles: the size
    /// in their `hvcC`'s sequence parameter set, less its conformance window) to at least that size.
    func gridCoverageProblem() -> String? {
        guard let boxes = metaBoxes(), let primary = primaryItem(in: boxes) else { return nil }
        let types = itemTypes(in: boxes)
        guard types[primary] == "grid", let descriptor = itemPrefix(of: primary, count: 12, in: boxes),
              let output = Self.imageGridOutput(descriptor) else { return nil }
        let rows = Int(descriptor[2]) + 1, columns = Int(descriptor[3]) + 1
        let tiles = derivedImageReferences(in: boxes)[primary] ?? []
        guard tiles.count == rows * columns else { return nil }  // libheif refuses this itself
        let associations = propertyAssociations(in: boxes)
        var tileSize: HEIFDeclaredSizes.Size?
        var codedSizes = [Int: (width: Int, height: Int)?]()  // by hvcC box, usually one for all tiles
        for tile in Set(tiles).sorted() {
            let properties = associations[tile] ?? []
            guard let extent = spatialExtent(properties) else { return "grid tile \(tile) has no ispe size" }
            if let size = tileSize, size != extent {
                return "grid tiles differ in size (\(size.width)x\(size.height) and \(extent.width)x\(extent.height))"
            }
            tileSize = extent
            guard types[tile] == "hvc1", let hvcC = properties.first(where: { $0.type == "hvcC" }) else { continue }
            if codedSizes[hvcC.payload.lowerBound] == nil {
                codedSizes[hvcC.payload.lowerBound] = .some(HEVCSequenceParameters.outputSize(hvcC: Array(bytes[hvcC.payload])))
            }
            if let coded = codedSizes[hvcC.payload.lowerBound] ?? nil, coded.width < extent.width || coded.height < extent.height {
                return "grid tile \(tile) decodes to \(coded.width)x\(coded.height), less than its ispe \(extent.width)x\(extent.height)"
            }
        }
        guard let tile = tileSize else { return nil }
        if columns * tile.width < output.width || rows * tile.height < output.height {
            return "\(columns)x\(rows) tiles of \(tile.width)x\(tile.height) do not cover the grid's \(output.width)x\(output.height) output"
        }
        return nil
    }

    /// Up to `count` first bytes of `item`'s data, located by `iloc` (versions 0-2; in the
    /// file or, with construction method 1, in `idat`).
    func itemPrefix(of item: Int, count: Int, in boxes: [Box]) -> [UInt8]? {
        guard let iloc = boxes.first(where: { $0.type == "iloc" }) else { return nil }
        let start = iloc.payload.lowerBound
        guard let version = u8(start), version <= 2, let sizes = number(start + 4, count: 2) else { return nil }
        let offsetSize = sizes >> 12, lengthSize = sizes >> 8 & 15, baseSize = sizes >> 4 & 15
        let indexSize = version >= 1 ? sizes & 15 : 0
        let idCount = version < 2 ? 2 : 4
        guard [offsetSize, lengthSize, baseSize, indexSize].allSatisfy({ [0, 4, 8].contains($0) }),
              let itemCount = number(start + 6, count: idCount) else { return nil }
        var position = start + 6 + idCount
        for _ in 0..<min(itemCount, iloc.payload.count) {
            guard let id = number(position, count: idCount) else { return nil }
            position += idCount
            var method = 0
            if version >= 1 {
                guard let value = number(position, count: 2) else { return nil }
                method = value & 15
                position += 2
            }
            position += 2  // data_reference_index
            guard let base = number(position, count: baseSize), let extentCount = number(position + baseSize, count: 2) else { return nil }
            position += baseSize + 2
            // libheif 1.15 accepts at most 32 extents an item; with zero-sized fields a larger
            // count would make this loop spin without reading anything.
            guard extentCount <= 32 else { return nil }
            var extents = [(offset: Int, length: Int)]()
            for _ in 0..<extentCount {
                position += indexSize
                guard let offset = number(position, count: offsetSize),
                      let length = number(position + offsetSize, count: lengthSize) else { return nil }
                position += offsetSize + lengthSize
                extents.append((offset, length))
            }
            guard id == item else { continue }
            let origin: Int
            let available: Range<Int>
            switch method {
            case 0:
                origin = 0
                available = 0..<bytes.count
            case 1:
                guard let idat = boxes.first(where: { $0.type == "idat" }) else { return nil }
                origin = idat.payload.lowerBound
                available = idat.payload
            default:
                return nil
            }
            var prefix = [UInt8]()
            for extent in extents where prefix.count < count {
                let (from, overflow) = origin.addingReportingOverflow(base)
                let (at, overflow2) = from.addingReportingOverflow(extent.offset)
                // A length of 0 means "to the end of the source".
                let length = extent.length == 0 ? available.upperBound - at : extent.length
                guard !overflow, !overflow2, at >= available.lowerBound, length >= 0, at <= available.upperBound - length else { return nil }
                prefix += bytes[at..<at + min(length, count - prefix.count)]
            }
            return prefix
        }
        return nil
    }

    /// The output size of an `ImageGrid` (version, flags, rows - 1, columns - 1, then 16 or,
    /// with flags bit 0, 32-bit width and height).
    static func imageGridOutput(_ grid: [UInt8]) -> HEIFDeclaredSizes.Size? {
        guard grid.count >= 8 else { return nil }
        if grid[1] & 1 != 0 {
            guard grid.count >= 12 else { return nil }
            let value = { (at: Int) in grid[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
            return HEIFDeclaredSizes.Size(width: value(4), height: value(8))
        }
        return HEIFDeclaredSizes.Size(width: Int(grid[4]) << 8 | Int(grid[5]), height: Int(grid[6]) << 8 | Int(grid[7]))
    }
}

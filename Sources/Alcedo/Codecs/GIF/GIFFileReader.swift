import CGIF

/// Reads a GIF held in memory record by record with giflib's low-level calls (`DGifGetRecordType`,
/// `DGifGetImageDesc`, `DGifGetExtension`), so that the caller can check limits before it
/// allocates anything for a frame. Image data is decoded by ``GIFLZWDecoder`` (giflib refuses
/// LZW minimum code sizes that browsers accept), straight from the same bytes.
///
/// giflib pulls its bytes through a read callback; the callback never reads past the buffer and
/// remembers when giflib asked for more than there was, which is how a truncated file is told
/// from a corrupt one.
final class GIFFileReader {
    /// One record of the file.
    enum Record {
        /// An image descriptor, read: the frame's place, size, interlacing and colour table.
        case image(GIFImageDescriptor)
        /// An extension: its label and its first data sub-block (without the length byte).
        case `extension`(label: Int, firstBlock: [UInt8]?)
        /// The trailer, or the end of the data exactly where a record would start (many
        /// files lack the trailer byte).
        case end
        /// A byte that starts no record (neither image, extension nor trailer).
        case unknown
    }

    private let bytes: UnsafeRawBufferPointer
    private var offset = 0
    /// `true` once giflib asked for bytes past the end of the data.
    private(set) var reachedEnd = false
    /// `true` when the last record read was the trailer (not the bare end of the data).
    private(set) var sawTrailer = false
    private var file: UnsafeMutablePointer<GifFileType>?

    /// The logical screen (canvas) size.
    private(set) var screenWidth = 0
    private(set) var screenHeight = 0
    /// The global colour table as RGB triples, or `nil` when the file has none.
    private(set) var globalColors: [UInt8]?

    /// Opens the GIF in `bytes`, which must stay valid for the reader's life, and reads the
    /// header and the global colour table.
    init(_ bytes: UnsafeRawBufferPointer) throws(AlcedoError) {
        self.bytes = bytes
        var error: Int32 = 0
        let opened = DGifOpen(Unmanaged.passUnretained(self).toOpaque(), gifReadFromMemory, &error)
        guard let opened else { throw failure(code: error) }
        file = opened
        screenWidth = Int(opened.pointee.SWidth)
        screenHeight = Int(opened.pointee.SHeight)
        globalColors = GIFFileReader.colors(of: opened.pointee.SColorMap)
    }

    deinit {
        if let file { DGifCloseFile(file, nil) }
    }

    /// Copies up to `count` bytes to `destination`; called by giflib through the read callback.
    fileprivate func read(into destination: UnsafeMutablePointer<GifByteType>, count: Int) -> Int {
        let available = min(count, bytes.count - offset)
        if available > 0, let base = bytes.baseAddress {
            UnsafeMutableRawPointer(destination).copyMemory(from: base + offset, byteCount: available)
            offset += available
        }
        if available < count { reachedEnd = true }
        return max(0, available)
    }

    /// Reads the next record; for an image, its descriptor too.
    func nextRecord() throws(AlcedoError) -> Record {
        guard let file else { return .end }
        // A zero byte where a record starts is a block terminator with no block (some writers
        // put one after the colour table or after a record's own terminator): skipped, as
        // Pillow and ImageMagick skip it, where giflib would call it a wrong record.
        while offset < bytes.count, bytes[offset] == 0 { offset += 1 }
        if offset == bytes.count { return .end }
        var type = GifRecordType(0)
        guard DGifGetRecordType(file, &type) == ALCEDO_GIF_OK else {
            if file.pointee.Error == ALCEDO_D_GIF_ERR_WRONG_RECORD && !reachedEnd { return .unknown }
            throw failure()
        }
        if alcedo_gif_record_is_terminator(type) != 0 {
            sawTrailer = true
            return .end
        }
        if alcedo_gif_record_is_extension(type) != 0 {
            var label: Int32 = 0
            var block: UnsafeMutablePointer<GifByteType>?
            guard DGifGetExtension(file, &label, &block) == ALCEDO_GIF_OK else { throw failure() }
            return .extension(label: Int(label), firstBlock: GIFFileReader.subBlock(block))
        }
        if DGifGetImageDesc(file) != ALCEDO_GIF_OK {
            // giflib reads the descriptor, then the LZW minimum code size, and fails on a size
            // over 8 after reading it; the image data is ours to decode (GIFLZWDecoder).
            let refusedCodeSize = file.pointee.Error == ALCEDO_D_GIF_ERR_READ_FAILED && !reachedEnd
                && offset >= 1 && bytes[offset - 1] > 8
            guard refusedCodeSize else { throw failure() }
        }
        let image = file.pointee.Image
        return .image(GIFImageDescriptor(left: Int(image.Left), top: Int(image.Top), width: Int(image.Width),
                                         height: Int(image.Height), interlaced: image.Interlace,
                                         localColors: GIFFileReader.colors(of: image.ColorMap)))
    }

    /// The next data sub-block of the current extension, or `nil` after the last one (its
    /// terminator). Call only while the extension has blocks left.
    func nextExtensionBlock() throws(AlcedoError) -> [UInt8]? {
        guard let file else { return nil }
        var block: UnsafeMutablePointer<GifByteType>?
        guard DGifGetExtensionNext(file, &block) == ALCEDO_GIF_OK else { throw failure() }
        return GIFFileReader.subBlock(block)
    }

    /// The LZW decoder of the current image's data. giflib has read the image descriptor and
    /// the minimum code size byte after it (without acting on it); the decoder reads the data
    /// sub-blocks from here, and ``endImageData(_:)`` hands the position back to giflib.
    func imageDataDecoder() throws(AlcedoError) -> GIFLZWDecoder {
        guard !reachedEnd, offset >= 1 else {
            throw .decodingError(reason: .truncated(format: .gif, message: "the data ends before a frame's image data"))
        }
        return try GIFLZWDecoder(bytes: bytes, offset: offset, minimumCodeSize: Int(bytes[offset - 1]))
    }

    /// Skips what is left of the image data `decoder` was reading, up to its terminator, and
    /// resumes reading records after it.
    func endImageData(_ decoder: inout GIFLZWDecoder) throws(AlcedoError) {
        do throws(AlcedoError) {
            try decoder.skipToEnd()
        } catch {
            offset = bytes.count
            reachedEnd = true
            throw error
        }
        offset = decoder.offset
    }

    /// Skips the compressed data of the current image without decompressing it.
    func skipImageData() throws(AlcedoError) {
        guard !reachedEnd else {
            throw .decodingError(reason: .truncated(format: .gif, message: "the data ends before a frame's image data"))
        }
        var skipper = try GIFLZWDecoder(bytes: bytes, offset: offset, minimumCodeSize: 0)
        try endImageData(&skipper)
    }

    /// The error for the last failed giflib call.
    func failure(code: Int32? = nil) -> AlcedoError {
        if reachedEnd {
            return .decodingError(reason: .truncated(format: .gif, message: "the data ends inside a GIF record"))
        }
        let code = code ?? file?.pointee.Error ?? 0
        let message = GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
        switch code {
        case ALCEDO_D_GIF_ERR_NOT_GIF_FILE:
            return .decodingError(reason: .invalidHeader(format: .gif, message: "no GIF signature"))
        case ALCEDO_D_GIF_ERR_NO_SCRN_DSCR:
            return .decodingError(reason: .invalidHeader(format: .gif, message: message))
        default:
            return .decodingError(reason: .corrupt(format: .gif, message: message))
        }
    }

    private static func subBlock(_ block: UnsafeMutablePointer<GifByteType>?) -> [UInt8]? {
        guard let block else { return nil }
        let count = Int(block[0])
        return Array(UnsafeBufferPointer(start: block + 1, count: count))
    }

    private static func colors(of map: UnsafeMutablePointer<ColorMapObject>?) -> [UInt8]? {
        guard let map, let colors = map.pointee.Colors, map.pointee.ColorCount > 0 else { return nil }
        let count = min(Int(map.pointee.ColorCount), 256)
        return [UInt8](unsafeUninitializedCapacity: count * 3) { rgb, initialized in
            for index in 0..<count {
                rgb[index * 3] = colors[index].Red
                rgb[index * 3 + 1] = colors[index].Green
                rgb[index * 3 + 2] = colors[index].Blue
            }
            initialized = count * 3
        }
    }
}

/// What an image descriptor says about one frame.
struct GIFImageDescriptor {
    var left: Int
    var top: Int
    var width: Int
    var height: Int
    var interlaced: Bool
    /// The local colour table as RGB triples, or `nil` when the frame uses the global one.
    var localColors: [UInt8]?

    /// The order in which the rows of the image are stored: top to bottom, or the four passes
    /// of an interlaced image (every 8th row from 0, every 8th from 4, every 4th from 2,
    /// every 2nd from 1).
    var rowOrder: [Int] {
        guard interlaced else { return Array(0..<height) }
        return [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { start, step in Array(stride(from: start, to: height, by: step)) }
    }
}

/// giflib's read callback: the user data is the ``GIFFileReader``.
private func gifReadFromMemory(_ file: UnsafeMutablePointer<GifFileType>?, _ destination: UnsafeMutablePointer<GifByteType>?,
                               _ count: Int32) -> Int32 {
    guard let file, let destination, count > 0, let user = file.pointee.UserData else { return 0 }
    let reader = Unmanaged<GIFFileReader>.fromOpaque(user).takeUnretainedValue()
    return Int32(reader.read(into: destination, count: Int(count)))
}

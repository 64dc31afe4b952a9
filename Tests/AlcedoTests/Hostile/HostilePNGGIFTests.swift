import Foundation
import Testing
@testable import Alcedo

/// Generators of hostile PNG, APNG and GIF files, built in memory at test time (nothing large
/// is committed). Each decode must end with an image or a typed error, within a generous
/// bound on the CPU time of the decoding thread; the files that cost minutes or gigabytes
/// before are checked by the error reason or by what the decoder did (bytes inflated), not by
/// a wall clock.
enum HostileFiles {
    /// LSB-first bit packing, as deflate and GIF's LZW store codes.
    struct BitWriter {
        var bytes: [UInt8] = []
        private var buffer = 0
        private var count = 0

        mutating func bits(_ value: Int, _ width: Int) {
            buffer |= value << count
            count += width
            while count >= 8 {
                bytes.append(UInt8(buffer & 0xFF))
                buffer >>= 8
                count -= 8
            }
        }

        /// A deflate Huffman code: stored from its most significant bit.
        mutating func huffman(_ code: Int, _ width: Int) {
            var reversed = 0
            for bit in 0..<width { reversed |= ((code >> bit) & 1) << (width - 1 - bit) }
            bits(reversed, width)
        }

        mutating func flush() {
            if count > 0 { bytes.append(UInt8(buffer & 0xFF)) }
            buffer = 0
            count = 0
        }
    }

    /// A zlib stream of `1 + 258 * (1 + 8 * groups)` zero bytes in one fixed-Huffman block:
    /// a literal 0, then "copy 258 bytes from distance 1" codes (13 bits each, so 13 bytes of
    /// stream inflate to 2,064 bytes: a ratio of about 160).
    static func zeroStream(groups: Int) -> (stream: [UInt8], inflated: Int) {
        func copy258(_ writer: inout BitWriter) {
            writer.huffman(0b1100_0101, 8)  // length code 285: 258 bytes
            writer.huffman(0, 5)            // distance code 0: distance 1
        }
        var head = BitWriter()
        head.bits(1, 1)   // final block
        head.bits(1, 2)   // fixed Huffman codes
        head.huffman(0b0011_0000, 8)  // literal 0
        copy258(&head)    // 24 bits so far: byte-aligned
        var group = BitWriter()
        for _ in 0..<8 { copy258(&group) }  // 104 bits: 13 bytes
        var tail = BitWriter()
        tail.huffman(0, 7)  // end of block
        tail.flush()
        let inflated = 1 + 258 * (1 + 8 * groups)
        var stream = [UInt8](unsafeUninitializedCapacity: 2 + head.bytes.count + 13 * groups + tail.bytes.count + 4) { buffer, count in
            var at = 0
            for byte in [0x78, 0x01] + head.bytes { buffer[at] = byte; at += 1 }
            group.bytes.withUnsafeBufferPointer { pattern in
                for _ in 0..<groups {
                    UnsafeMutableRawPointer(buffer.baseAddress! + at).copyMemory(from: pattern.baseAddress!, byteCount: 13)
                    at += 13
                }
            }
            for byte in tail.bytes { buffer[at] = byte; at += 1 }
            count = at
        }
        // Adler-32 of n zero bytes: a = 1, b = n.
        stream += PNGChunk.bigEndian(UInt32(inflated % 65_521) << 16 | 1)
        return (stream, inflated)
    }

    /// A zlib stream of `count` zero bytes in stored blocks.
    static func storedZeros(_ count: Int) -> [UInt8] {
        let blocks = max(1, (count + 65_534) / 65_535)
        var out = [UInt8](repeating: 0, count: 2 + blocks * 5 + count + 4)
        out[0] = 0x78
        out[1] = 0x01
        var at = 2, left = count
        for block in 0..<blocks {
            let length = min(65_535, left)
            out[at] = block == blocks - 1 ? 1 : 0
            out[at + 1] = UInt8(length & 0xFF)
            out[at + 2] = UInt8(length >> 8)
            out[at + 3] = UInt8(~length & 0xFF)
            out[at + 4] = UInt8((~length >> 8) & 0xFF)
            at += 5 + length
            left -= length
        }
        let adler = PNGChunk.bigEndian(UInt32(count % 65_521) << 16 | 1)
        out.replaceSubrange(at..<(at + 4), with: adler)
        return out
    }

    /// PNG bytes: signature, `IHDR`, `chunks` (type and data), `IEND`; CRCs by zlib.
    static func png(width: Int, height: Int, depth: Int = 8, colorType: Int = 0, interlaced: Bool = false,
                    chunks: [(String, [UInt8])]) -> [UInt8] {
        var png = PNGChunkValidator.signature
        let header = PNGChunk.bigEndian(UInt32(width)) + PNGChunk.bigEndian(UInt32(height))
            + [UInt8(depth), UInt8(colorType), 0, 0, interlaced ? 1 : 0]
        PNGChunk.append(type: code("IHDR"), data: header, to: &png)
        for (type, data) in chunks { PNGChunk.append(type: code(type), data: data, to: &png) }
        PNGChunk.append(type: code("IEND"), data: [UInt8](), to: &png)
        return png
    }

    static func code(_ name: String) -> UInt32 { name.utf8.reduce(0) { $0 << 8 | UInt32($1) } }

    /// `stream` cut into `IDAT` chunks of at most `size` bytes.
    static func idat(_ stream: [UInt8], size: Int = 1 << 20) -> [(String, [UInt8])] {
        stride(from: 0, to: stream.count, by: size).map { ("IDAT", Array(stream[$0..<min(stream.count, $0 + size)])) }
    }

    /// An APNG of `frames` frames of `width` x `height` RGBA (the default image is frame 0),
    /// each frame's data given by `frameData`, with an `iCCP` chunk of `iccBytes` compressed bytes.
    static func apng(width: Int, height: Int, frames: Int, iccBytes: Int = 0, x: Int = 0, y: Int = 0,
                     frameWidth: Int? = nil, frameHeight: Int? = nil, dispose: UInt8 = 0, blend: UInt8 = 0,
                     canvasWidth: Int? = nil, canvasHeight: Int? = nil, defaultImageData: [UInt8]? = nil) -> [UInt8] {
        let fw = frameWidth ?? width, fh = frameHeight ?? height
        let cw = canvasWidth ?? width, ch = canvasHeight ?? height
        var chunks: [(String, [UInt8])] = [("acTL", PNGChunk.bigEndian(UInt32(frames)) + PNGChunk.bigEndian(0))]
        if iccBytes > 0 { chunks.append(("iCCP", Array("icc".utf8) + [0, 0] + storedZeros(iccBytes))) }
        var sequence: UInt32 = 0
        func control(_ w: Int, _ h: Int, _ x: Int, _ y: Int) -> (String, [UInt8]) {
            defer { sequence += 1 }
            return ("fcTL", PNGChunk.bigEndian(sequence) + PNGChunk.bigEndian(UInt32(w)) + PNGChunk.bigEndian(UInt32(h))
                    + PNGChunk.bigEndian(UInt32(x)) + PNGChunk.bigEndian(UInt32(y)) + [0, 1, 0, 100, dispose, blend])
        }
        func rows(_ w: Int, _ h: Int, value: UInt8) -> [UInt8] {
            var raw: [UInt8] = []
            for _ in 0..<h { raw += [0] + [UInt8](repeating: value, count: w * 4) }
            return storedZerosOrData(raw)
        }
        chunks.append(control(cw, ch, 0, 0))
        chunks.append(("IDAT", defaultImageData ?? rows(cw, ch, value: 0)))
        for index in 1..<max(frames, 1) {
            chunks.append(control(fw, fh, x, y))
            chunks.append(("fdAT", PNGChunk.bigEndian(sequence) + rows(fw, fh, value: UInt8(index % 256))))
            sequence += 1
        }
        return png(width: cw, height: ch, depth: 8, colorType: 6, chunks: chunks)
    }

    /// `raw` as a zlib stream of stored blocks (Adler-32 computed).
    static func storedZerosOrData(_ raw: [UInt8]) -> [UInt8] {
        PNGTestFile.zlibStored(raw)
    }
}

/// Decodes `data`, returning the outcome and the CPU time the decoding thread spent.
private func hostileDecode(_ data: [UInt8], options: DecodingOptions = .default, decoder: any ImageDecoding = PNGDecoder())
    -> (image: AlcedoImage?, failure: DecodingErrorReason?, cpu: Duration) {
    let clock = DecodingDeadline(limit: .seconds(3600), format: .unknown)
    let bytes = Data(data)
    do {
        let image = try decoder.decode(bytes, options: options)
        return (image, nil, clock.elapsed)
    } catch {
        if case .decodingFailed(let reason)? = error.processorCause { return (nil, reason, clock.elapsed) }
        return (nil, .unsupportedFeature(format: .unknown, message: "\(error)"), clock.elapsed)
    }
}

/// The generous CPU bound every hostile decode must stay under (the costly files took 17 s
/// to minutes before their fixes; each takes milliseconds now).
private let cpuBound: Duration = .seconds(3)

@Suite("Hostile PNG, APNG and GIF files")
struct HostilePNGGIFTests {
    // MARK: PNG

    /// A 1x1 PNG followed by 8 MB of image data that would inflate to 1.3 GB of zeros: the
    /// decoder stops after the one row (inflating one byte past it to see that more follows)
    /// and ignores the rest.
    @Test func dataAfterTheLastRowIsNeverInflated() throws {
        let bomb = HostileFiles.zeroStream(groups: 620_000)
        #expect(bomb.inflated > 1_200_000_000)
        let png = HostileFiles.png(width: 1, height: 1, chunks: HostileFiles.idat(bomb.stream))
        let outcome = hostileDecode(png)
        #expect(outcome.failure == nil)
        #expect(outcome.image?.pixels == [0, 0, 0, 255])
        #expect(outcome.cpu < cpuBound, "took \(outcome.cpu)")

        // What was inflated: the row (filter byte + 1 sample) and one byte to learn that more follows.
        let inflated = try png.withUnsafeBytes { raw in
            let structure = try PNGChunkValidator.validate(raw)
            let raster = PNGRasterDecoder(width: 1, height: 1, interlaced: false,
                                          conversion: PNGSampleConversion(structure: structure, bytes: raw), format: .png)
            var pixel = [UInt8](repeating: 0, count: 4)
            return try pixel.withUnsafeMutableBufferPointer { out in
                try raster.decode(raw, data: structure.chunks.filter { $0.type == PNGChunk.IDAT }.map(\.data),
                                  into: out.baseAddress!, limits: .default,
                                  deadline: DecodingLimits.default.startDeadline(format: .png))
            }
        }
        #expect(inflated <= 3)
    }

    /// A chunk before the image data that declares more bytes than the file holds is refused
    /// before libpng reads the header: libpng allocates and clears what the chunk declares first,
    /// so `info` of libpng's own 57-byte `huge_sCAL_chunk.png` (sCAL: 1 GiB) took 1 GB of memory
    /// (found by scripts/fuzz-serve.sh: each request for it raised `alcedo serve` by 1 GB).
    @Test func chunkLengthsBeforeTheImageDataAreCheckedBeforeLibpng() throws {
        for type in ["sCAL", "iCCP", "tEXt", "zTXt", "iTXt", "eXIf", "sPLT", "pCAL", "quUX"] {
            var png = HostileFiles.png(width: 1, height: 1, chunks: [])
            // Before IEND: a chunk header declaring 0x3FFFFFFF bytes, then a few bytes.
            let at = png.count - 12
            png.insert(contentsOf: PNGChunk.bigEndian(0x3FFF_FFFF) + PNGChunk.bigEndian(HostileFiles.code(type)) + [1, 2, 3, 4],
                       at: at)
            let failure = pngGIFDecodingFailure { _ = try PNGDecoder().info(for: Data(png)) }
            guard case .truncated(_, let message) = failure else {
                Issue.record("\(type): \(String(describing: failure))")
                continue
            }
            #expect(message.contains("\(type) chunk at offset 33 declares 1073741823 bytes"), "\(message)")
        }
        let crasher = try Fixtures.data("libpng/testpngs/crashers/huge_sCAL_chunk.png")
        #expect(pngGIFDecodingFailure { _ = try PNGDecoder().info(for: crasher) }?.pngGIFKind == "truncated")
        // Chunks that fit are left to libpng as before.
        let fine = HostileFiles.png(width: 3, height: 2, chunks: [("tEXt", Array("a\u{0}b".utf8))] + HostileFiles.idat(PNGTestFile.zlibStored([0, 1, 2, 3, 0, 4, 5, 6])))
        #expect(try PNGDecoder().info(for: Data(fine)).width == 3)
    }

    /// Image data that ends before the last row is truncated; a stream that ends exactly after
    /// it (checksum included) is read to its end, and a wrong checksum there is corrupt.
    @Test func streamEndsAreChecked() {
        let rows: [UInt8] = [0, 7, 0, 9]
        var stream = PNGTestFile.zlibStored(rows)
        let good = HostileFiles.png(width: 1, height: 2, chunks: [("IDAT", stream)])
        #expect(hostileDecode(good).image?.pixels == [7, 7, 7, 255, 9, 9, 9, 255])
        stream[stream.count - 1] ^= 1
        #expect(hostileDecode(HostileFiles.png(width: 1, height: 2, chunks: [("IDAT", stream)])).failure?.pngGIFKind == "corrupt")
        let short = HostileFiles.png(width: 1, height: 3, chunks: [("IDAT", PNGTestFile.zlibStored(rows))])
        #expect(hostileDecode(short).failure?.pngGIFKind == "truncated")
        let badFilter = HostileFiles.png(width: 1, height: 2, chunks: [("IDAT", PNGTestFile.zlibStored([0, 7, 5, 9]))])
        #expect(hostileDecode(badFilter).failure?.pngGIFKind == "corrupt")
    }

    /// 16-bit rows count as working memory before anything is allocated: a 100,000-pixel-wide
    /// 16-bit RGBA row pair is 1.6 MB, over a 1 MiB limit (the default limit refuses rows of
    /// more than 16 million such pixels the same way).
    @Test func wideSixteenBitRowsAreWorkingMemory() {
        let png = HostileFiles.png(width: 100_000, height: 1, depth: 16, colorType: 6,
                                   chunks: [("IDAT", PNGTestFile.zlibStored([0]))])
        let options = DecodingOptions(limits: DecodingLimits(maxWorkingMemory: 1 << 20))
        let outcome = hostileDecode(png, options: options)
        guard case .workingMemoryTooLarge(.png, _, let bytes, 1 << 20)? = outcome.failure else {
            Issue.record("expected workingMemoryTooLarge, got \(String(describing: outcome.failure))")
            return
        }
        #expect(bytes == 2 * (100_000 * 8 + 1))
        let interlaced = HostileFiles.png(width: 100_000, height: 1, depth: 16, colorType: 6, interlaced: true,
                                          chunks: [("IDAT", PNGTestFile.zlibStored([0]))])
        #expect(hostileDecode(interlaced, options: options).failure?.pngGIFKind == "working memory")
    }

    /// A 2000x2000 image whose rows all inflate (4 MB of zeros from 25 KB): a CPU budget of
    /// one millisecond stops it between rows with `.timedOut`; the default budget decodes it.
    @Test func rowsCheckTheDeadline() {
        let stream = HostileFiles.zeroStream(groups: 2_000).stream
        let png = HostileFiles.png(width: 2_000, height: 2_000, chunks: HostileFiles.idat(stream))
        let hurried = DecodingOptions(limits: DecodingLimits(decodingTimeout: .milliseconds(1)))
        let outcome = hostileDecode(png, options: hurried)
        #expect(outcome.failure == .timedOut(format: .png, limit: .milliseconds(1)))
        #expect(outcome.cpu < cpuBound)
        let full = hostileDecode(png)
        #expect(full.image?.width == 2_000)
        #expect(full.cpu < cpuBound)
    }

    // MARK: APNG

    /// An APNG with an 8 MB `iCCP` chunk and 400 frames: the chunk is read once, never copied
    /// or checked again per frame (before, each frame was rebuilt into a PNG with the chunk:
    /// 400 x 8 MB copied and checksummed).
    @Test func largeSharedChunkIsNotCopiedPerFrame() {
        let apng = HostileFiles.apng(width: 4, height: 4, frames: 400, iccBytes: 8 << 20)
        #expect(apng.count > 8 << 20)
        let outcome = hostileDecode(apng)
        #expect(outcome.failure == nil)
        #expect(outcome.image?.frames.count == 400)
        #expect(outcome.image?.pixel(x: 3, y: 3, frame: 399) == RGBA(red: 143, green: 143, blue: 143, alpha: 143))
        #expect(outcome.cpu < cpuBound, "took \(outcome.cpu)")
    }

    /// A huge canvas with tiny frames: the frame table is checked against the byte limit before
    /// the canvas is allocated.
    @Test func hugeCanvasWithTinyFramesIsRefusedFirst() {
        let apng = HostileFiles.apng(width: 1, height: 1, frames: 3, frameWidth: 1, frameHeight: 1,
                                     canvasWidth: 10_000, canvasHeight: 10_000,
                                     defaultImageData: PNGTestFile.zlibStored([0]))
        let outcome = hostileDecode(apng)
        #expect(outcome.failure == .animationTooLarge(format: .apng, bytes: 10_000 * 10_000 * 4 * 3, limit: 512 << 20))
        #expect(outcome.cpu < cpuBound)
    }

    /// A frame disposed to "previous" needs a copy of the area it covers: working memory,
    /// checked before the copy (not waived by falling back to the default image).
    @Test func restoredAreaIsWorkingMemory() {
        // The second of three: the first restores to a clear canvas, the last is never disposed.
        let apng = HostileFiles.apng(width: 64, height: 64, frames: 3, dispose: 2)
        let options = DecodingOptions(limits: DecodingLimits(maxWorkingMemory: 8 << 10))
        #expect(hostileDecode(apng, options: options).failure?.pngGIFKind == "working memory")
        #expect(hostileDecode(apng).image?.frames.count == 3)
        let two = HostileFiles.apng(width: 64, height: 64, frames: 2, dispose: 2)
        #expect(hostileDecode(two, options: options).image?.frames.count == 2)
        // Blending over the canvas decodes the frame apart: its pixels are working memory too.
        let over = HostileFiles.apng(width: 64, height: 64, frames: 2, blend: 1)
        #expect(hostileDecode(over, options: options).failure?.pngGIFKind == "working memory")
    }

    /// Many frames with a one-millisecond budget: `.timedOut` between frames, not a fallback
    /// to the default image.
    @Test func framesCheckTheDeadline() {
        let apng = HostileFiles.apng(width: 64, height: 64, frames: 300)
        let hurried = DecodingOptions(limits: DecodingLimits(decodingTimeout: .milliseconds(1)))
        let outcome = hostileDecode(apng, options: hurried)
        #expect(outcome.failure == .timedOut(format: .apng, limit: .milliseconds(1)))
        #expect(outcome.cpu < cpuBound)
    }

    // MARK: GIF

    /// A GIF whose one frame uses LZW minimum code size `size`, literal codes only (a clear code
    /// whenever the dictionary would need a wider code than `size + 1` bits... the code width
    /// grows exactly as the decoder grows it). Literal codes above 255 carry `high` in their
    /// upper bits.
    static func gif(codeSize size: Int, width: Int, height: Int, indices: [UInt8], high: Int = 0) -> [UInt8] {
        var bytes: [UInt8] = Array("GIF89a".utf8)
        bytes += GIFTestFile.word(width) + GIFTestFile.word(height)
        bytes += [0xF7, 0, 0]
        for entry in 0..<256 { bytes += [UInt8(entry), UInt8(255 - entry), UInt8((entry * 7) & 0xFF)] }
        bytes.append(0x2C)
        bytes += GIFTestFile.word(0) + GIFTestFile.word(0)
        bytes += GIFTestFile.word(width) + GIFTestFile.word(height)
        bytes.append(0)
        bytes.append(UInt8(size))
        let clear = 1 << size
        var writer = HostileFiles.BitWriter()
        var codeWidth = size + 1, next = clear + 2, first = true
        writer.bits(clear, codeWidth)
        for index in indices {
            writer.bits(clear > 256 ? Int(index) | high << 8 : Int(index), codeWidth)
            if !first && next < 4096 {
                next += 1
                if next >= 1 << codeWidth && codeWidth < 12 { codeWidth += 1 }
            }
            first = false
        }
        writer.bits(clear + 1, codeWidth)
        writer.flush()
        return bytes + GIFTestFile.subBlocks(writer.bytes) + [0x3B]
    }

    /// Minimum code sizes 2-11 decode as stated (Chromium's range; Pillow agrees, and keeps the
    /// low 8 bits of literal codes above 255); 12 and over are corrupt; 0 and 1 end with an
    /// image or a typed error. giflib refused everything over 8.
    @Test func lzwMinimumCodeSizes() {
        for size in 0...15 {
            let colours = size == 0 ? 1 : min(256, 1 << size)
            let indices = (0..<35).map { UInt8(($0 * 5 + $0 / 7) % colours) }
            for high in size >= 9 ? [0, 1, (1 << (size - 8)) - 1] : [0] {
                let gif = HostilePNGGIFTests.gif(codeSize: size, width: 7, height: 5, indices: indices, high: high)
                let outcome = hostileDecode(gif, decoder: GIFDecoder())
                #expect(outcome.cpu < cpuBound)
                switch size {
                case 2...11:
                    let expected = indices.flatMap { index -> [UInt8] in [index, 255 - index, UInt8((Int(index) * 7) & 0xFF), 255] }
                    #expect(outcome.image?.pixels == expected, "code size \(size), high \(high): \(String(describing: outcome.failure))")
                case 12...:
                    #expect(outcome.failure?.pngGIFKind == "corrupt", "code size \(size)")
                default:
                    #expect(outcome.image != nil || outcome.failure != nil)
                }
            }
        }
    }

    /// An invalid code is corrupt; data cut inside the sub-blocks is truncated; sub-blocks after
    /// the last row are skipped undecoded.
    @Test func damagedLZWData() throws {
        var gif = HostilePNGGIFTests.gif(codeSize: 2, width: 2, height: 1, indices: [1, 2])
        let data = gif.count - 4  // the one sub-block: 0x3B trailer, 0 terminator, then data
        #expect(hostileDecode(gif, decoder: GIFDecoder()).image != nil)
        var badCode = gif
        badCode[data] = 0b1111_1100 | 0b100  // clear (4), then code 7 (undefined) in 3-bit codes
        #expect(hostileDecode(badCode, decoder: GIFDecoder()).failure?.pngGIFKind == "corrupt")
        let cut = Array(gif[..<(data - 1)]) + [200]
        #expect(hostileDecode(cut, decoder: GIFDecoder()).failure?.pngGIFKind == "truncated")
        gif.removeLast(2)
        gif += [3, 0xFF, 0xFF, 0xFF, 0, 0x3B]
        #expect(hostileDecode(gif, decoder: GIFDecoder()).image?.pixels.count == 8)
    }

    /// A frame disposed to "restore previous" right after another one needs a copy of its area,
    /// counted before the copy; a first one (the canvas was clear) or one after a kept frame
    /// (restored from that output frame) needs none.
    @Test func gifRestoredAreaIsWorkingMemory() {
        let full = [UInt8](repeating: 1, count: 128 * 128)
        var gif = GIFTestFile(width: 128, height: 128, palette: [[0, 0, 0], [255, 255, 255]])
        gif.control(disposal: 3)
        gif.image(width: 128, height: 128, indices: full)
        gif.control(disposal: 1)
        gif.image(width: 128, height: 128, indices: full)
        gif.control(disposal: 3)
        gif.image(width: 128, height: 128, indices: full)
        var twice = gif
        gif.trailer()
        let options = DecodingOptions(limits: DecodingLimits(maxWorkingMemory: 32 << 10))
        #expect(hostileDecode(gif.bytes, options: options, decoder: GIFDecoder()).image?.frames.count == 3)
        twice.control(disposal: 3)
        twice.image(width: 128, height: 128, indices: full)
        var last = twice
        last.trailer()
        // A second "previous" in a row that is the last frame is never disposed: nothing to copy.
        #expect(hostileDecode(last.bytes, options: options, decoder: GIFDecoder()).image?.frames.count == 4)
        twice.image(width: 128, height: 128, indices: full)
        twice.trailer()
        #expect(hostileDecode(twice.bytes, options: options, decoder: GIFDecoder()).failure?.pngGIFKind == "working memory")
        #expect(hostileDecode(twice.bytes, decoder: GIFDecoder()).image?.frames.count == 5)
    }

    /// A big screen with many small frames: each kept frame is a whole canvas, so the byte limit
    /// answers before the frames that pass it are allocated.
    @Test func gifManyFramesOnABigScreen() {
        var gif = GIFTestFile(width: 1_000, height: 1_000, palette: [[0, 0, 0], [255, 255, 255]])
        for _ in 0..<50 { gif.image(width: 1, height: 1, indices: [1]) }
        gif.trailer()
        let options = DecodingOptions(limits: DecodingLimits(maxTotalBytes: 8 << 20))
        #expect(hostileDecode(gif.bytes, options: options, decoder: GIFDecoder()).failure
            == .animationTooLarge(format: .gif, bytes: 3 * 4_000_000, limit: 8 << 20))
    }

    /// Frames and bands of rows check the deadline.
    @Test func gifChecksTheDeadline() {
        var gif = GIFTestFile(width: 64, height: 64, palette: [[0, 0, 0], [255, 255, 255]])
        for frame in 0..<100 { gif.image(width: 64, height: 64, indices: [UInt8](repeating: UInt8(frame & 1), count: 64 * 64)) }
        gif.trailer()
        let hurried = DecodingOptions(limits: DecodingLimits(decodingTimeout: .milliseconds(1)))
        let outcome = hostileDecode(gif.bytes, options: hurried, decoder: GIFDecoder())
        #expect(outcome.failure == .timedOut(format: .gif, limit: .milliseconds(1)))
        #expect(hostileDecode(gif.bytes, decoder: GIFDecoder()).image?.frames.count == 100)
    }
}

/// Decodes the LZW-compressed pixel indices of one GIF frame, reading its data sub-blocks
/// straight from the file's bytes, row by row.
///
/// ## Minimum code size
/// The GIF specification allows an LZW minimum code size of 2 to 8, but files with other
/// sizes exist and browsers show them: Chromium (Skia's GIF reader) accepts any size below 12,
/// decoding the stream as it states (clear code `1 << size`, first codes `size + 1` bits wide);
/// Firefox accepts sizes up to 12; Pillow opens them too. giflib refuses sizes above 8. Alcedo
/// follows Chromium: sizes 0 to 11 decode as stated, a literal code above 255 (sizes 9 to 11)
/// stands for its low 8 bits (Chromium keeps the same byte), and a size of 12 or more leaves no
/// room for a single dictionary entry: the frame is `.corrupt`. The code width grows whenever
/// the next free code no longer fits, up to 12 bits, so sizes 0 and 1 decode consistently too.
///
/// ## Damaged data
/// An end-of-information code or the end of the sub-blocks before the last pixel stops the
/// frame: the rows decoded so far are kept, as browsers keep them. A code that is neither in
/// the dictionary nor the next one to be added is `.corrupt`; data that runs past the end of
/// the file is `.truncated`. Sub-blocks after the last pixel are skipped undecoded.
struct GIFLZWDecoder {
    /// The largest minimum code size decoded (Chromium's bound).
    static let largestMinimumCodeSize = 11
    private static let maxCodes = 4096

    private let bytes: UnsafeRawBufferPointer
    /// Where the next data byte (or sub-block length) is read.
    private(set) var offset: Int
    private var blockRemaining = 0
    /// `true` once the zero-length sub-block (the data terminator) was read.
    private(set) var sawTerminator = false
    /// `true` once the end-of-information code or the terminator stopped decoding.
    private(set) var finished = false

    private let minimumCodeSize: Int
    private let clearCode: Int
    private var codeSize: Int
    private var nextCode: Int
    private var previous = -1
    private var firstByte: UInt8 = 0
    private var bitBuffer = 0
    private var bitCount = 0
    /// The dictionary and the string stack, in one allocation read without bounds checks
    /// (every index is below ``maxCodes``, or ``maxCodes`` + 1 on the stack, by construction).
    private let tables: Tables
    /// Decoded bytes not yet handed out: `tables.stack[0..<stackCount]`, in reverse order.
    private var stackCount = 0

    /// The dictionary (prefix code, last byte and first byte of each code's string) and the
    /// stack a string is unwound onto, freed with the decoder.
    private final class Tables {
        let prefix = UnsafeMutablePointer<UInt16>.allocate(capacity: GIFLZWDecoder.maxCodes)
        /// The length of each code's string (1 for a literal).
        let length = UnsafeMutablePointer<UInt16>.allocate(capacity: GIFLZWDecoder.maxCodes)
        let suffix = UnsafeMutablePointer<UInt8>.allocate(capacity: GIFLZWDecoder.maxCodes)
        let firstOf = UnsafeMutablePointer<UInt8>.allocate(capacity: GIFLZWDecoder.maxCodes)
        /// A string is at most ``maxCodes`` bytes, plus the first byte of a code being defined.
        let stack = UnsafeMutablePointer<UInt8>.allocate(capacity: GIFLZWDecoder.maxCodes + 1)

        init() {
            prefix.initialize(repeating: 0, count: GIFLZWDecoder.maxCodes)
            length.initialize(repeating: 1, count: GIFLZWDecoder.maxCodes)
            suffix.initialize(repeating: 0, count: GIFLZWDecoder.maxCodes)
            firstOf.initialize(repeating: 0, count: GIFLZWDecoder.maxCodes)
            stack.initialize(repeating: 0, count: GIFLZWDecoder.maxCodes + 1)
        }

        deinit {
            prefix.deallocate()
            length.deallocate()
            suffix.deallocate()
            firstOf.deallocate()
            stack.deallocate()
        }
    }

    /// The working memory of one decoder (dictionary and string stack), in bytes.
    static let workingMemory = maxCodes * (2 + 2 + 1 + 1 + 1)

    /// Starts decoding the sub-blocks at `offset` (just after the minimum code size byte).
    /// - Throws: `.corrupt` for a minimum code size over ``largestMinimumCodeSize``.
    init(bytes: UnsafeRawBufferPointer, offset: Int, minimumCodeSize: Int) throws(AlcedoError) {
        guard (0...GIFLZWDecoder.largestMinimumCodeSize).contains(minimumCodeSize) else {
            throw .decodingError(reason: .corrupt(format: .gif,
                message: "LZW minimum code size \(minimumCodeSize) is over \(GIFLZWDecoder.largestMinimumCodeSize)"))
        }
        self.bytes = bytes
        self.offset = offset
        self.minimumCodeSize = minimumCodeSize
        clearCode = 1 << minimumCodeSize
        codeSize = minimumCodeSize + 1
        nextCode = clearCode + 2
        tables = Tables()
        for code in 0..<min(clearCode, GIFLZWDecoder.maxCodes) {
            tables.suffix[code] = UInt8(truncatingIfNeeded: code)
            tables.firstOf[code] = UInt8(truncatingIfNeeded: code)
        }
    }

    /// Fills `row` with `count` indices.
    /// - Returns: `false` when the data stopped first (an end code or the terminator); the
    ///   rest of the row is then left as it was.
    mutating func readRow(into row: UnsafeMutablePointer<UInt8>, count: Int) throws(AlcedoError) -> Bool {
        var filled = 0
        let stack = tables.stack
        while filled < count {
            if stackCount > 0 {
                let n = min(stackCount, count - filled)
                for i in 0..<n { row[filled + i] = stack[stackCount - 1 - i] }
                stackCount -= n
                filled += n
                continue
            }
            if finished { return false }
            filled += try decodeNextCode(into: row + filled, room: count - filled)
        }
        return true
    }

    /// Skips whatever is left of the frame's data, up to and including its terminator.
    mutating func skipToEnd() throws(AlcedoError) {
        offset += blockRemaining
        blockRemaining = 0
        while !sawTerminator {
            guard offset < bytes.count else { throw truncated() }
            let length = Int(bytes[offset])
            offset += 1
            if length == 0 { sawTerminator = true } else { offset += length }
        }
        if offset > bytes.count { throw truncated() }
    }

    private func truncated() -> AlcedoError {
        .decodingError(reason: .truncated(format: .gif, message: "the data ends inside a frame's image data"))
    }

    /// The next data byte, or `nil` at the terminator.
    private mutating func nextByte() throws(AlcedoError) -> UInt8? {
        while blockRemaining == 0 {
            if sawTerminator { return nil }
            guard offset < bytes.count else { throw truncated() }
            blockRemaining = Int(bytes[offset])
            offset += 1
            if blockRemaining == 0 { sawTerminator = true; return nil }
        }
        guard offset < bytes.count else { throw truncated() }
        let byte = bytes[offset]
        offset += 1
        blockRemaining -= 1
        return byte
    }

    /// Reads one code and writes the bytes it stands for at `output` when they fit in `room`
    /// bytes (most strings do), else pushes them onto the stack.
    /// - Returns: the number of bytes written at `output` (0 when they went onto the stack).
    private mutating func decodeNextCode(into output: UnsafeMutablePointer<UInt8>, room: Int) throws(AlcedoError) -> Int {
        while bitCount < codeSize {
            if blockRemaining > 0 && offset < bytes.count {
                // Inside a sub-block: no length byte to read.
                bitBuffer |= Int(bytes[offset]) << bitCount
                offset += 1
                blockRemaining -= 1
            } else {
                guard let byte = try nextByte() else { finished = true; return 0 }
                bitBuffer |= Int(byte) << bitCount
            }
            bitCount += 8
        }
        let code = bitBuffer & ((1 << codeSize) - 1)
        bitBuffer >>= codeSize
        bitCount -= codeSize

        if code == clearCode {
            codeSize = minimumCodeSize + 1
            nextCode = clearCode + 2
            previous = -1
            return 0
        }
        if code == clearCode + 1 {
            finished = true
            return 0
        }
        let prefix = tables.prefix, length = tables.length, suffix = tables.suffix, firstOf = tables.firstOf
        var string: Int
        // The string's length, and whether it ends with the first byte of the previous string
        // (the code being defined: the previous string plus its own first byte).
        let count: Int
        let definesItself: Bool
        if previous == -1 {
            guard code < clearCode else { throw invalid(code) }
            firstByte = suffix[code]
            previous = code
            if room > 0 {
                output[0] = suffix[code]
                return 1
            }
            tables.stack[stackCount] = suffix[code]
            stackCount += 1
            return 0
        } else if code < nextCode {
            string = code
            count = Int(length[code])
            definesItself = false
        } else if code == nextCode && nextCode < GIFLZWDecoder.maxCodes {
            string = previous
            count = Int(length[previous]) + 1
            definesItself = true
        } else {
            throw invalid(code)
        }
        let first = firstOf[string]
        let written: Int
        if count <= room {
            // Written back to front, straight into the row.
            var position = count - 1
            if definesItself {
                output[position] = firstOf[previous]
                position -= 1
            }
            while string >= clearCode {
                output[position] = suffix[string]
                position -= 1
                string = Int(prefix[string])
            }
            output[position] = suffix[string]
            written = count
        } else {
            let stack = tables.stack
            if definesItself {
                stack[stackCount] = firstOf[previous]
                stackCount += 1
            }
            while string >= clearCode {
                stack[stackCount] = suffix[string]
                stackCount += 1
                string = Int(prefix[string])
            }
            stack[stackCount] = suffix[string]
            stackCount += 1
            written = 0
        }
        firstByte = first
        if nextCode < GIFLZWDecoder.maxCodes {
            prefix[nextCode] = UInt16(previous)
            length[nextCode] = length[previous] &+ 1
            suffix[nextCode] = first
            firstOf[nextCode] = firstOf[previous]
            nextCode += 1
            if nextCode >= 1 << codeSize && codeSize < 12 { codeSize += 1 }
        }
        previous = code
        return written
    }

    private func invalid(_ code: Int) -> AlcedoError {
        .decodingError(reason: .corrupt(format: .gif, message: "invalid LZW code \(code) (next free code \(nextCode))"))
    }
}

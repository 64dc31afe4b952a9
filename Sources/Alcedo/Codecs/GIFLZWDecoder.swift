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
    private var prefix: [UInt16]
    private var suffix: [UInt8]
    private var firstOf: [UInt8]
    /// Decoded bytes not yet handed out, in reverse order (popped from the end).
    private var stack: [UInt8]

    /// The working memory of one decoder (dictionary and string stack), in bytes.
    static let workingMemory = maxCodes * (2 + 1 + 1 + 1)

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
        prefix = [UInt16](repeating: 0, count: GIFLZWDecoder.maxCodes)
        suffix = [UInt8](repeating: 0, count: GIFLZWDecoder.maxCodes)
        firstOf = [UInt8](repeating: 0, count: GIFLZWDecoder.maxCodes)
        for code in 0..<min(clearCode, GIFLZWDecoder.maxCodes) {
            suffix[code] = UInt8(truncatingIfNeeded: code)
            firstOf[code] = UInt8(truncatingIfNeeded: code)
        }
        stack = []
        stack.reserveCapacity(GIFLZWDecoder.maxCodes)
    }

    /// Fills `row` with `count` indices.
    /// - Returns: `false` when the data stopped first (an end code or the terminator); the
    ///   rest of the row is then left as it was.
    mutating func readRow(into row: UnsafeMutablePointer<UInt8>, count: Int) throws(AlcedoError) -> Bool {
        var filled = 0
        while filled < count {
            if let byte = stack.popLast() {
                row[filled] = byte
                filled += 1
                continue
            }
            if finished { return false }
            try decodeNextCode()
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

    /// Reads one code and pushes the bytes it stands for onto the stack.
    private mutating func decodeNextCode() throws(AlcedoError) {
        while bitCount < codeSize {
            guard let byte = try nextByte() else { finished = true; return }
            bitBuffer |= Int(byte) << bitCount
            bitCount += 8
        }
        let code = bitBuffer & ((1 << codeSize) - 1)
        bitBuffer >>= codeSize
        bitCount -= codeSize

        if code == clearCode {
            codeSize = minimumCodeSize + 1
            nextCode = clearCode + 2
            previous = -1
            return
        }
        if code == clearCode + 1 {
            finished = true
            return
        }
        var string: Int
        if previous == -1 {
            guard code < clearCode else { throw invalid(code) }
            stack.append(suffix[code])
            firstByte = suffix[code]
            previous = code
            return
        } else if code < nextCode {
            string = code
        } else if code == nextCode && nextCode < GIFLZWDecoder.maxCodes {
            // The code being defined: the previous string plus its own first byte.
            stack.append(firstOf[previous])
            string = previous
        } else {
            throw invalid(code)
        }
        let first = firstOf[string]
        while string >= clearCode {
            stack.append(suffix[string])
            string = Int(prefix[string])
        }
        stack.append(suffix[string])
        firstByte = first
        if nextCode < GIFLZWDecoder.maxCodes {
            prefix[nextCode] = UInt16(previous)
            suffix[nextCode] = first
            firstOf[nextCode] = firstOf[previous]
            nextCode += 1
            if nextCode >= 1 << codeSize && codeSize < 12 { codeSize += 1 }
        }
        previous = code
    }

    private func invalid(_ code: Int) -> AlcedoError {
        .decodingError(reason: .corrupt(format: .gif, message: "invalid LZW code \(code) (next free code \(nextCode))"))
    }
}

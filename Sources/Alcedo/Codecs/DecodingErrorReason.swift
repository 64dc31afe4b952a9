/// Why bytes could not be decoded. Every case names the format and what was wrong.
public enum DecodingErrorReason: Sendable, Equatable, CustomStringConvertible {
    /// The data was empty.
    case emptyData
    /// No registered decoder reads this format (`.unknown`: the bytes match no image signature).
    case unsupportedFormat(ImageFormat)
    /// The header is malformed or states an impossible size.
    case invalidHeader(format: ImageFormat, message: String)
    /// The data is corrupt (bad checksum, bad compressed stream, bad marker…).
    case corrupt(format: ImageFormat, message: String)
    /// The data ends before the image does.
    case truncated(format: ImageFormat, message: String)
    /// The file uses a feature this decoder does not support (for example 12-bit JPEG).
    case unsupportedFeature(format: ImageFormat, message: String)
    /// One frame is larger than ``DecodingLimits/maxPixelCount``.
    case tooManyPixels(format: ImageFormat, width: Int, height: Int, limit: Int)
    /// The animation has more frames than ``DecodingLimits/maxFrameCount``.
    case tooManyFrames(format: ImageFormat, count: Int, limit: Int)
    /// All frames together would decode to more than ``DecodingLimits/maxTotalBytes``.
    case animationTooLarge(format: ImageFormat, bytes: Int, limit: Int)
    /// The decoder would need more working memory (coefficient buffers, wide rows, animation
    /// canvases) than ``DecodingLimits/maxWorkingMemory``; `what` names the buffer.
    case workingMemoryTooLarge(format: ImageFormat, what: String, bytes: Int, limit: Int)
    /// Decoding used more CPU time than ``DecodingLimits/decodingTimeout``.
    case timedOut(format: ImageFormat, limit: Duration)
    /// Decoding would take more CPU time than ``DecodingLimits/decodingTimeout`` by an estimate
    /// made before it starts (SVG: elements, filter regions and output pixels); `what` says
    /// what was counted. Nothing was decoded.
    case tooComplex(format: ImageFormat, estimate: Duration, limit: Duration, what: String)
    /// ``DecodingOptions/page`` names a page the file does not have (`count` pages, from 0).
    case pageOutOfRange(format: ImageFormat, page: Int, count: Int)

    public var description: String {
        switch self {
        case .emptyData:
            return "no data to decode"
        case .unsupportedFormat(let format):
            return format == .unknown ? "not an image: the data matches no known image format"
                : "no decoder for \(format) images"
        case .invalidHeader(let format, let message):
            return "\(format): invalid header: \(message)"
        case .corrupt(let format, let message):
            return "\(format): corrupt data: \(message)"
        case .truncated(let format, let message):
            return "\(format): truncated data: \(message)"
        case .unsupportedFeature(let format, let message):
            return "\(format): unsupported: \(message)"
        case .tooManyPixels(let format, let width, let height, let limit):
            return "\(format): \(width)x\(height) is over the limit of \(limit) pixels"
        case .tooManyFrames(let format, let count, let limit):
            return "\(format): \(count) frames is over the limit of \(limit)"
        case .animationTooLarge(let format, let bytes, let limit):
            return "\(format): all frames would take \(bytes) bytes, over the limit of \(limit)"
        case .workingMemoryTooLarge(let format, let what, let bytes, let limit):
            return "\(format): \(what) would take \(bytes) bytes of working memory, over the limit of \(limit)"
        case .timedOut(let format, let limit):
            return "\(format): decoding took more than \(limit) of CPU time"
        case .tooComplex(let format, let estimate, let limit, let what):
            let seconds = Double(estimate.components.seconds) + Double(estimate.components.attoseconds) / 1e18
            let rounded = seconds >= 1e6 ? "over a million seconds" : "about \((seconds * 10).rounded() / 10) seconds"
            return "\(format): drawing \(what) would take \(rounded) of CPU time, over the limit of \(limit)"
        case .pageOutOfRange(let format, let page, let count):
            return "\(format): page \(page) does not exist (the file has \(count) page\(count == 1 ? "" : "s"), from 0)"
        }
    }
}

/// Why an image could not be encoded.
public enum EncodingErrorReason: Sendable, Equatable, CustomStringConvertible {
    /// No registered encoder writes this format.
    case unsupportedFormat(ImageFormat)
    /// The quality is outside 1...100.
    case invalidQuality(Int)
    /// The image cannot be written in this format (for example larger than the format allows).
    case imageNotEncodable(format: ImageFormat, message: String)
    /// The encoding library reported a failure.
    case libraryFailure(format: ImageFormat, message: String)

    public var description: String {
        switch self {
        case .unsupportedFormat(let format): return "no encoder for \(format)"
        case .invalidQuality(let quality): return "quality \(quality) is outside 1...100"
        case .imageNotEncodable(let format, let message): return "\(format): cannot encode: \(message)"
        case .libraryFailure(let format, let message): return "\(format): encoder failed: \(message)"
        }
    }
}

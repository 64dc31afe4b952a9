import CWebP

/// Turns libwebp's `VP8StatusCode` into the typed decoding error Alcedo throws.
enum WebPStatus {
    /// What libwebp was doing when it failed; it decides how a bitstream error is reported.
    enum Stage {
        /// Reading the RIFF container and the bitstream header (`WebPGetFeatures`, the demuxer).
        case header
        /// Decoding pixels (`WebPDecode`, one frame of an animation).
        case pixels

        var phrase: String {
            switch self {
            case .header: return "reading the header"
            case .pixels: return "decoding the pixels"
            }
        }
    }

    /// The error for a failed `status` at `stage`; `subject` names what was being decoded
    /// (for example `"frame 3 of 7"`). Call it only with a status other than `VP8_STATUS_OK`.
    static func error(_ status: VP8StatusCode, at stage: Stage, subject: String? = nil) -> AlcedoError {
        let place = subject.map { "\($0): " } ?? ""
        let reason: DecodingErrorReason
        switch status {
        case VP8_STATUS_NOT_ENOUGH_DATA:
            reason = .truncated(format: .webp, message: "\(place)the data ends while \(stage.phrase) (VP8_STATUS_NOT_ENOUGH_DATA)")
        case VP8_STATUS_UNSUPPORTED_FEATURE:
            reason = .unsupportedFeature(format: .webp, message: "\(place)libwebp does not support a feature of this file (VP8_STATUS_UNSUPPORTED_FEATURE)")
        case VP8_STATUS_BITSTREAM_ERROR where stage == .header:
            reason = .invalidHeader(format: .webp, message: "\(place)malformed RIFF container or bitstream header (VP8_STATUS_BITSTREAM_ERROR)")
        case VP8_STATUS_BITSTREAM_ERROR:
            reason = .corrupt(format: .webp, message: "\(place)invalid compressed data (VP8_STATUS_BITSTREAM_ERROR)")
        case VP8_STATUS_INVALID_PARAM:
            // Our parameters come from the header, so a rejection means the header and the
            // bitstream disagree (for example a VP8X canvas that differs from the VP8 frame).
            reason = .invalidHeader(format: .webp, message: "\(place)the sizes in the header and in the bitstream disagree (VP8_STATUS_INVALID_PARAM)")
        case VP8_STATUS_OUT_OF_MEMORY:
            reason = .corrupt(format: .webp, message: "\(place)libwebp could not allocate the memory the bitstream asks for (VP8_STATUS_OUT_OF_MEMORY)")
        default:
            reason = .corrupt(format: .webp, message: "\(place)libwebp failed while \(stage.phrase) (VP8 status \(status.rawValue))")
        }
        return .decodingError(reason: reason)
    }

    /// A `.corrupt` error for a failure libwebp reports without a status code.
    static func corrupt(_ message: String) -> AlcedoError {
        .decodingError(reason: .corrupt(format: .webp, message: message))
    }
}

import CPNG

/// Helpers around libpng's simplified API (`png_image_*`): its failures are a 0 return and a
/// message in the `png_image`, which these turn into typed errors.
enum PNGLibrary {
    /// A fresh `png_image` for the simplified API.
    static func makeImage() -> png_image {
        var image = png_image()
        image.version = UInt32(ALCEDO_PNG_IMAGE_VERSION)
        return image
    }

    /// The message libpng left in `image` (empty when it left none).
    static func message(of image: png_image) -> String {
        withUnsafeBytes(of: image.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// The decoding error for a failed libpng call: checksum and data errors are `.corrupt`,
    /// image data that stops early is `.truncated`, and any other failure while reading the
    /// header (`headerStage`) is `.invalidHeader`.
    static func decodingError(_ image: png_image, format: ImageFormat, headerStage: Bool) -> AlcedoError {
        let text = message(of: image)
        let message = text.isEmpty ? "libpng failed without a message" : text
        let lower = message.lowercased()
        if lower.contains(literal: "not enough image data") || lower.contains(literal: "beyond end of data") || lower.contains(literal: "truncated") {
            return .decodingError(reason: .truncated(format: format, message: message))
        }
        if headerStage && !lower.contains(literal: "crc") {
            return .decodingError(reason: .invalidHeader(format: format, message: message))
        }
        return .decodingError(reason: .corrupt(format: format, message: message))
    }
}

import CLCMS2
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An ICC colour profile as an image carried it, with what Alcedo read from it.
public struct ImageColorProfile: Sendable, Hashable {
    /// The colour space of the device side of a profile.
    public enum ColorSpace: String, Sendable, Hashable {
        case rgb = "RGB"
        case gray = "GRAY"
        case cmyk = "CMYK"
        /// Any other space (Lab, YCbCr, n-colour…): such profiles are reported but not applied.
        case other = "other"
    }

    /// Where the profile came from.
    public enum Origin: String, Sendable, Hashable {
        /// Embedded in the file as ICC bytes (JPEG `APP2`, PNG `iCCP`, WebP `ICCP`, GIF
        /// application extension, AVIF/HEIC `colr`).
        case embedded
        /// Built by Alcedo from a PNG's `gAMA` and `cHRM` chunks.
        case pngChromaticities
        /// Alcedo's built-in generic CMYK profile, used for CMYK JPEGs without a profile.
        case genericCMYK
    }

    /// The ICC bytes.
    public let data: Data
    /// The profile's description tag (`desc`), or `""` when it has none.
    public let description: String
    /// The device colour space.
    public let colorSpace: ColorSpace
    /// Where the profile came from.
    public let origin: Origin

    /// The size of the ICC bytes.
    public var byteCount: Int { data.count }

    /// Reads `data` as an ICC profile. Returns `nil` when lcms cannot open it or when it is
    /// shorter than the size its header states (a truncated profile).
    public init?(iccData data: Data, origin: Origin = .embedded) {
        guard data.count >= 132 else { return nil }
        let declared = data.prefix(4).reduce(0) { ($0 << 8) | Int($1) }
        guard declared <= data.count, declared >= 132 else { return nil }
        let bytes = Data(data.prefix(declared))
        guard let handle = LCMSProfile(iccData: bytes) else { return nil }
        self.data = bytes
        self.description = handle.description
        self.colorSpace = handle.colorSpace
        self.origin = origin
    }

    init(data: Data, description: String, colorSpace: ColorSpace, origin: Origin) {
        self.data = data
        self.description = description
        self.colorSpace = colorSpace
        self.origin = origin
    }
}

/// What an image says about colour: the profile the file carried and the space its pixels are in.
public struct ImageColorMetadata: Sendable, Hashable {
    /// The profile the source carried (`nil`: none, or the source was read with
    /// ``ColorManagement/ignore``).
    public var sourceProfile: ImageColorProfile?
    /// The profile of the pixels: `nil` when they are sRGB (the default, also after a
    /// conversion). Set under ``ColorManagement/preserve``; encoders embed it.
    public var pixelProfile: ImageColorProfile?
    /// Why a profile the file carried was not applied (a truncated or unreadable profile, a
    /// colour space that does not match the pixels), or `nil`.
    public var warning: String?

    /// Creates colour metadata; every field defaults to `nil` (untagged sRGB pixels).
    public init(sourceProfile: ImageColorProfile? = nil, pixelProfile: ImageColorProfile? = nil, warning: String? = nil) {
        self.sourceProfile = sourceProfile
        self.pixelProfile = pixelProfile
        self.warning = warning
    }
}

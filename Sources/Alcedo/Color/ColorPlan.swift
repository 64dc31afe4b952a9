#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a decoder does about colour for one image: the metadata to record and the
/// transform (if any) to run on the decoded pixels. Decoders build one from the profile
/// they found and apply it once, to the pixels at their final decoded size (after any
/// decoder-side scaling), before orientation.
struct ColorPlan {
    /// What the image will record.
    let metadata: ImageColorMetadata
    /// The transform to run, `nil` when the pixels stay as decoded.
    let transform: ColorTransform?

    /// Leaves pixels and metadata alone (``ColorManagement/ignore``, or no profile).
    static let none = ColorPlan(metadata: ImageColorMetadata(), transform: nil)

    /// The plan for RGBA pixels decoded from a file whose embedded ICC bytes are `iccData`
    /// (`nil` when it has none).
    static func forRGBA(iccData: Data?, mode: ColorManagement, format: ImageFormat) -> ColorPlan {
        guard mode != .ignore, let iccData, !iccData.isEmpty else { return .none }
        guard let profile = ImageColorProfile(iccData: iccData) else {
            return ColorPlan(metadata: ImageColorMetadata(
                warning: "\(format): the embedded ICC profile (\(iccData.count) bytes) is truncated or unreadable and was ignored"),
                transform: nil)
        }
        return forRGBA(profile: profile, mode: mode)
    }

    /// The plan for RGBA pixels whose source space is `profile`.
    static func forRGBA(profile: ImageColorProfile, mode: ColorManagement) -> ColorPlan {
        switch (mode, profile.colorSpace) {
        case (.ignore, _):
            return .none
        case (_, .cmyk), (_, .other):
            return ColorPlan(metadata: ImageColorMetadata(
                sourceProfile: profile,
                warning: "the \(profile.colorSpace.rawValue) profile does not describe RGB pixels and was ignored"),
                transform: nil)
        case (.preserve, .rgb):
            // Pixels stay in the source space; encoders embed the profile.
            return ColorPlan(metadata: ImageColorMetadata(sourceProfile: profile, pixelProfile: profile), transform: nil)
        case (.convertToSRGB, .rgb), (.convertToSRGB, .gray), (.preserve, .gray):
            // Gray pixels are stored as RGB, where a gray profile cannot be embedded: always converted.
            let transform = ColorTransformCache.shared.transform(for: .init(profile: profile.data, input: .rgbOrGray)) {
                LCMSProfile(iccData: profile.data).flatMap { ColorTransform.make(rgbOrGray: $0) }
            }
            guard let transform else {
                return ColorPlan(metadata: ImageColorMetadata(
                    sourceProfile: profile, warning: "lcms could not build a transform from the profile; it was ignored"),
                    transform: nil)
            }
            if case .identity = transform.kind {
                return ColorPlan(metadata: ImageColorMetadata(sourceProfile: profile), transform: nil)
            }
            return ColorPlan(metadata: ImageColorMetadata(sourceProfile: profile), transform: transform)
        }
    }

    /// The plan for CMYK pixels (4 bytes a pixel, as libjpeg writes them) from a JPEG whose
    /// embedded ICC bytes are `iccData`: through that profile when it is a readable CMYK
    /// profile, else through ``GenericCMYKProfile``. `inverted` is Adobe's convention (0
    /// means full ink), signalled by an `APP14` marker. Returns `nil` under
    /// ``ColorManagement/ignore``: the caller then uses the naive formula.
    static func forCMYK(iccData: Data?, inverted: Bool, mode: ColorManagement) -> ColorPlan? {
        guard mode != .ignore else { return nil }
        var warning: String?
        var chosen: ImageColorProfile?
        if let iccData, !iccData.isEmpty {
            if let profile = ImageColorProfile(iccData: iccData), profile.colorSpace == .cmyk {
                chosen = profile
            } else {
                warning = "jpeg: the embedded ICC profile (\(iccData.count) bytes) is not a readable CMYK profile; "
                    + "the generic CMYK profile was used"
            }
        }
        let input: ColorTransformCache.Key.Input = inverted ? .cmykInverted : .cmyk
        if let profile = chosen,
           let transform = ColorTransformCache.shared.transform(for: .init(profile: profile.data, input: input), build: {
               LCMSProfile(iccData: profile.data).flatMap { ColorTransform.make(cmyk: $0, inverted: inverted) }
           }) {
            return ColorPlan(metadata: ImageColorMetadata(sourceProfile: profile), transform: transform)
        }
        if chosen != nil { warning = "lcms could not build a transform from the CMYK profile; the generic CMYK profile was used" }
        let generic = GenericCMYKProfile.profile
        let transform = ColorTransformCache.shared.transform(for: .init(profile: generic.data, input: input)) {
            LCMSProfile(iccData: generic.data).flatMap { ColorTransform.make(cmyk: $0, inverted: inverted) }
        }
        return ColorPlan(metadata: ImageColorMetadata(sourceProfile: chosen ?? generic, warning: warning), transform: transform)
    }

    /// Runs the transform on `pixels` in place.
    func apply(to pixels: inout [UInt8]) {
        transform?.apply(to: &pixels)
    }

    /// Runs the transform on the pixels at `bytes` in place.
    func apply(to bytes: UnsafeMutableBufferPointer<UInt8>) {
        transform?.apply(to: bytes)
    }

    /// Runs the transform on every frame of `image` and records the metadata.
    func apply(to image: AlcedoImage) -> AlcedoImage {
        var frames = image.frames
        if let transform {
            for index in frames.indices { transform.apply(to: &frames[index].pixels) }
        }
        return AlcedoImage(width: image.width, height: image.height, frames: frames, loopCount: image.loopCount,
                           sourceFormat: image.sourceFormat, orientation: image.orientation, colorMetadata: metadata)
    }
}

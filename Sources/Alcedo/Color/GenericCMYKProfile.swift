import CLCMS2
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Alcedo's built-in generic CMYK profile, for CMYK JPEGs that carry no profile.
///
/// It is built at first use with lcms's own functions (no third-party profile, so no
/// licence question): an ICC v4 input profile whose `A2B0` table maps device CMYK to Lab
/// through **naive device CMYK**: R = (1 − C)(1 − K), G = (1 − M)(1 − K), B = (1 − Y)(1 − K)
/// taken as sRGB. That is how Chrome, Firefox, Safari without a profile, Pillow and djpeg
/// show an untagged CMYK JPEG, so a thumbnail matches what a browser shows. A press
/// profile (SWOP, FOGRA) would be a guess about a file that says nothing about its press.
/// The table has 17 points per axis (490 KB, built once); the transform lcms builds from it stays within
/// 2 per channel of the formula (tested against Pillow's naive conversion).
enum GenericCMYKProfile {
    /// The profile's description tag.
    static let description = "Alcedo generic CMYK (naive device CMYK as sRGB)"

    /// The profile as ICC bytes, built once.
    static let iccData: Data = build() ?? Data()

    /// The profile as Alcedo reports it.
    static var profile: ImageColorProfile {
        ImageColorProfile(data: iccData, description: description, colorSpace: .cmyk, origin: .genericCMYK)
    }

    private static func build() -> Data? {
        _ = LCMSProfile.installSilentHandler
        let sRGB = LCMSProfile.sRGB()
        guard let labHandle = cmsCreateLab4Profile(nil) else { return nil }
        let lab = LCMSProfile(handle: labHandle)
        guard let toLab = cmsCreateTransform(sRGB.handle, ALCEDO_TYPE_RGB_16, lab.handle, ALCEDO_TYPE_Lab_16,
                                             ALCEDO_INTENT_RELATIVE_COLORIMETRIC, ALCEDO_FLAGS_NOCACHE) else { return nil }
        defer { cmsDeleteTransform(toLab) }
        guard let placeholder = cmsCreateProfilePlaceholder(nil) else { return nil }
        let profile = LCMSProfile(handle: placeholder)
        cmsSetProfileVersion(profile.handle, 4.3)
        cmsSetDeviceClass(profile.handle, cmsSigInputClass)
        cmsSetColorSpace(profile.handle, cmsSigCmykData)
        cmsSetPCS(profile.handle, cmsSigLabData)
        cmsSetHeaderRenderingIntent(profile.handle, ALCEDO_INTENT_RELATIVE_COLORIMETRIC)

        guard let pipeline = cmsPipelineAlloc(nil, 4, 3) else { return nil }
        defer { cmsPipelineFree(pipeline) }
        guard let clut = cmsStageAllocCLut16bit(nil, 17, 4, 3, nil) else { return nil }
        let sampler: cmsSAMPLER16 = { input, output, cargo in
            guard let input, let output, let cargo else { return 0 }
            let transform = cmsHTRANSFORM(cargo)
            var rgb = [cmsUInt16Number](repeating: 0, count: 3)
            let k = 65535 - Int(input[3])
            for channel in 0..<3 {
                let ink = 65535 - Int(input[channel])
                rgb[channel] = cmsUInt16Number((ink * k + 32767) / 65535)
            }
            cmsDoTransform(transform, &rgb, output, 1)
            return 1
        }
        // An `mAB` table needs its A and B curves, identity here, around the CLUT.
        guard cmsStageSampleCLut16bit(clut, sampler, toLab, 0) != 0,
              let aCurves = cmsStageAllocToneCurves(nil, 4, nil), let bCurves = cmsStageAllocToneCurves(nil, 3, nil),
              cmsPipelineInsertStage(pipeline, cmsAT_END, aCurves) != 0,
              cmsPipelineInsertStage(pipeline, cmsAT_END, clut) != 0,
              cmsPipelineInsertStage(pipeline, cmsAT_END, bCurves) != 0 else { return nil }
        guard cmsWriteTag(profile.handle, cmsSigAToB0Tag, UnsafeRawPointer(pipeline)) != 0 else { return nil }

        guard let mlu = cmsMLUalloc(nil, 1) else { return nil }
        defer { cmsMLUfree(mlu) }
        cmsMLUsetASCII(mlu, "en", "US", description)
        cmsWriteTag(profile.handle, cmsSigProfileDescriptionTag, UnsafeRawPointer(mlu))
        var whitePoint = cmsD50_XYZ().pointee
        cmsWriteTag(profile.handle, cmsSigMediaWhitePointTag, &whitePoint)
        return profile.iccData()
    }
}

import CLCMS2
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An open lcms profile, closed when the value goes away. Used only inside one call or
/// while a transform is built, never shared between threads.
final class LCMSProfile {
    let handle: cmsHPROFILE

    init(handle: cmsHPROFILE) {
        self.handle = handle
    }

    /// Opens ICC bytes; `nil` when lcms refuses them.
    convenience init?(iccData data: Data) {
        LCMSProfile.installSilentHandler
        let opened: cmsHPROFILE? = data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return nil }
            return cmsOpenProfileFromMem(base, cmsUInt32Number(raw.count))
        }
        guard let opened else { return nil }
        self.init(handle: opened)
    }

    deinit { cmsCloseProfile(handle) }

    /// lcms's built-in sRGB profile.
    static func sRGB() -> LCMSProfile {
        installSilentHandler
        return LCMSProfile(handle: cmsCreate_sRGBProfile())
    }

    /// Installs lcms's silent error handler once.
    static let installSilentHandler: Void = alcedo_lcms_install_silent_handler()

    /// The description tag in ASCII, or `""`.
    var description: String {
        var buffer = [CChar](repeating: 0, count: 256)
        let count = cmsGetProfileInfoASCII(handle, cmsInfoDescription, "en", "US", &buffer, cmsUInt32Number(buffer.count))
        guard count > 0 else { return "" }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
    }

    /// The device colour space.
    var colorSpace: ImageColorProfile.ColorSpace {
        switch cmsGetColorSpace(handle) {
        case cmsSigRgbData: return .rgb
        case cmsSigGrayData: return .gray
        case cmsSigCmykData: return .cmyk
        default: return .other
        }
    }

    /// The profile serialized as ICC bytes, or `nil` when lcms cannot write it.
    func iccData() -> Data? {
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(handle, nil, &size) != 0, size > 0 else { return nil }
        var data = Data(count: Int(size))
        let ok = data.withUnsafeMutableBytes { raw in cmsSaveProfileToMem(handle, raw.baseAddress, &size) != 0 }
        return ok ? data.prefix(Int(size)) : nil
    }
}

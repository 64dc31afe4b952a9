import CLCMS2
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// One colour transform from a source profile to sRGB, built once per profile and reused.
///
/// `@unchecked Sendable`: the lcms transform is immutable once built and is created with
/// `cmsFLAGS_NOCACHE`, which makes `cmsDoTransform` reentrant (lcms keeps no per-call state
/// in the transform then), so one transform may run on any number of threads at once.
final class ColorTransform: @unchecked Sendable {
    /// How the pixels are changed.
    enum Kind {
        /// The profile is sRGB (every probe colour comes back within 1): pixels stay.
        case identity
        /// RGBA8 in place through lcms, alpha copied.
        case rgba(cmsHTRANSFORM)
        /// RGBA8 in place through tables lcms computed (matrix-shaper profiles; see
        /// ``MatrixShaperTransform``), alpha untouched.
        case matrixShaper(MatrixShaperTransform)
        /// Gray profiles: a 256-entry table from the gray level (the red sample) to RGB.
        case grayTable([UInt8])
        /// CMYK8 (or inverted CMYK8) in place to RGBA8 through lcms, alpha then set to 255.
        case cmyk(cmsHTRANSFORM)
    }

    let kind: Kind

    private init(kind: Kind) {
        self.kind = kind
    }

    deinit {
        switch kind {
        case .rgba(let handle), .cmyk(let handle): cmsDeleteTransform(handle)
        case .identity, .grayTable, .matrixShaper: break
        }
    }

    /// The intent and flags every transform uses: relative colorimetric with black-point
    /// compensation (see ``ColorManagement/convertToSRGB``).
    static let intent = ALCEDO_INTENT_RELATIVE_COLORIMETRIC
    static let flags = ALCEDO_FLAGS_BLACKPOINTCOMPENSATION | ALCEDO_FLAGS_NOCACHE

    /// Builds the transform for `profile` (RGB or gray) to sRGB; `nil` when lcms cannot.
    static func make(rgbOrGray profile: LCMSProfile) -> ColorTransform? {
        let sRGB = LCMSProfile.sRGB()
        switch profile.colorSpace {
        case .rgb:
            guard let handle = cmsCreateTransform(profile.handle, ALCEDO_TYPE_RGBA_8, sRGB.handle, ALCEDO_TYPE_RGBA_8,
                                                  intent, flags | ALCEDO_FLAGS_COPY_ALPHA) else { return nil }
            let transform = ColorTransform(kind: .rgba(handle))
            if transform.isIdentityOnProbes { return ColorTransform(kind: .identity) }
            // The fast path, when it agrees with lcms within 1 on every probe colour.
            if let fast = MatrixShaperTransform(profile) {
                let candidate = ColorTransform(kind: .matrixShaper(fast))
                if candidate.agrees(with: transform) { return candidate }
            }
            return transform
        case .gray:
            guard let handle = cmsCreateTransform(profile.handle, ALCEDO_TYPE_GRAY_8, sRGB.handle, ALCEDO_TYPE_RGB_8,
                                                  intent, flags) else { return nil }
            defer { cmsDeleteTransform(handle) }
            var levels = (0...255).map { UInt8($0) }
            var table = [UInt8](repeating: 0, count: 256 * 3)
            cmsDoTransform(handle, &levels, &table, 256)
            let identity = (0..<256).allSatisfy { level in
                (0..<3).allSatisfy { abs(Int(table[level * 3 + $0]) - level) <= 1 }
            }
            return ColorTransform(kind: identity ? .identity : .grayTable(table))
        case .cmyk, .other:
            return nil
        }
    }

    /// Builds the transform for a CMYK profile to sRGB; `inverted` reads 0 as full ink.
    static func make(cmyk profile: LCMSProfile, inverted: Bool) -> ColorTransform? {
        let sRGB = LCMSProfile.sRGB()
        guard profile.colorSpace == .cmyk,
              let handle = cmsCreateTransform(profile.handle, inverted ? ALCEDO_TYPE_CMYK_8_REV : ALCEDO_TYPE_CMYK_8,
                                              sRGB.handle, ALCEDO_TYPE_RGBA_8, intent, flags) else { return nil }
        return ColorTransform(kind: .cmyk(handle))
    }

    /// Converts `pixels` (RGBA8, or CMYK8 for a CMYK transform) in place to sRGB RGBA8.
    func apply(to pixels: inout [UInt8]) {
        if case .identity = kind { return }  // no access: a shared array is not copied
        pixels.withUnsafeMutableBufferPointer { apply(to: $0) }
    }

    /// Converts the pixels at `bytes` (RGBA8, or CMYK8 for a CMYK transform) in place to sRGB RGBA8.
    func apply(to bytes: UnsafeMutableBufferPointer<UInt8>) {
        let count = bytes.count / 4
        guard count > 0 else { return }
        switch kind {
        case .identity:
            return
        case .rgba(let handle):
            Self.transformInChunks(handle, UnsafeMutableRawBufferPointer(bytes), pixelCount: count)
        case .matrixShaper(let fast):
            fast.apply(to: bytes)
        case .cmyk(let handle):
            Self.transformInChunks(handle, UnsafeMutableRawBufferPointer(bytes), pixelCount: count)
            var index = 3
            while index < bytes.count {
                bytes[index] = 255
                index += 4
            }
        case .grayTable(let table):
            table.withUnsafeBufferPointer { lut in
                var index = 0
                while index + 3 < bytes.count {
                    let level = Int(bytes[index]) * 3
                    bytes[index] = lut[level]
                    bytes[index + 1] = lut[level + 1]
                    bytes[index + 2] = lut[level + 2]
                    index += 4
                }
            }
        }
    }

    /// lcms takes a 32-bit pixel count: very large buffers go through in pieces.
    private static func transformInChunks(_ handle: cmsHTRANSFORM, _ raw: UnsafeMutableRawBufferPointer, pixelCount: Int) {
        guard let base = raw.baseAddress else { return }
        let chunk = 1 << 24
        var done = 0
        while done < pixelCount {
            let n = min(chunk, pixelCount - done)
            let pointer = base + done * 4
            cmsDoTransform(handle, pointer, pointer, cmsUInt32Number(n))
            done += n
        }
    }

    /// `true` when this transform and `other` give every probe colour within 1 of each other.
    private func agrees(with other: ColorTransform) -> Bool {
        var mine = Self.probeColors
        var theirs = mine
        apply(to: &mine)
        other.apply(to: &theirs)
        return zip(mine, theirs).allSatisfy { abs(Int($0) - Int($1)) <= 1 }
    }

    /// The three primaries' ramps, the gray ramp and a 16x16x16 cube, as RGBA8.
    private static var probeColors: [UInt8] {
        var probe: [UInt8] = []
        probe.reserveCapacity((256 * 4 + 4096) * 4)
        for level in 0...255 {
            let v = UInt8(level)
            probe += [v, 0, 0, 255, 0, v, 0, 255, 0, 0, v, 255, v, v, v, 255]
        }
        for r in stride(from: 0, through: 255, by: 17) {
            for g in stride(from: 0, through: 255, by: 17) {
                for b in stride(from: 0, through: 255, by: 17) {
                    probe += [UInt8(r), UInt8(g), UInt8(b), 255]
                }
            }
        }
        return probe
    }

    /// `true` when every probe colour comes back within 1 of itself: the profile is sRGB in
    /// all but name.
    private var isIdentityOnProbes: Bool {
        let probe = Self.probeColors
        var out = probe
        apply(to: &out)
        return zip(probe, out).allSatisfy { abs(Int($0) - Int($1)) <= 1 }
    }
}

/// Transforms built so far, keyed by profile bytes and input kind, so that a profile is
/// parsed and optimised once however many images carry it. Holds at most 32 transforms
/// (the oldest goes first).
final class ColorTransformCache: Sendable {
    struct Key: Hashable {
        enum Input: Hashable { case rgbOrGray, cmyk, cmykInverted }
        let profile: Data
        let input: Input
    }

    private struct State {
        var transforms: [Key: ColorTransform] = [:]
        var order: [Key] = []
        /// Profiles lcms could not build a transform for (cached too: a broken profile costs once).
        var failed: Set<Key> = []
    }

    static let shared = ColorTransformCache()
    static let capacity = 32

    private let state = Mutex(State())

    /// How many transforms are held (for tests).
    var count: Int { state.withLock { $0.transforms.count } }

    /// The cached transform for `key`, or the one `build` makes (stored), or `nil` when
    /// `build` fails (remembered).
    func transform(for key: Key, build: () -> ColorTransform?) -> ColorTransform? {
        let cached: ColorTransform?? = state.withLock { state in
            if let hit = state.transforms[key] { return .some(hit) }
            if state.failed.contains(key) { return .some(nil) }
            return nil
        }
        if let cached { return cached }
        let built = build()
        state.withLock { state in
            guard let built else {
                if state.failed.count >= Self.capacity { state.failed.removeAll() }
                state.failed.insert(key)
                return
            }
            if state.transforms[key] == nil {
                state.transforms[key] = built
                state.order.append(key)
                while state.order.count > Self.capacity {
                    state.transforms[state.order.removeFirst()] = nil
                }
            }
        }
        return built
    }
}

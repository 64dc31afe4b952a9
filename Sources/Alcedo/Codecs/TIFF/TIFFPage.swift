import CTIFF
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The facts of the current TIFF directory (page) that decoding needs, read once.
struct TIFFPage {
    /// How the samples are to be turned into RGBA.
    enum Model: Equatable {
        case gray(minIsWhite: Bool)
        case rgb
        case palette
        case cmyk
        /// CIE L*a*b* (CIELab: signed a* and b*; ICCLab: unsigned, offset by half the range).
        case lab(unsignedAB: Bool)
        /// Anything else libtiff's RGBA interface converts (YCbCr without JPEG, ITU L*a*b*, LogLuv…).
        case other
    }

    /// What the first extra sample is.
    enum Alpha: Equatable {
        case none, associated, unassociated
    }

    let width: Int
    let height: Int
    let bitsPerSample: Int
    let samplesPerPixel: Int
    let sampleFormat: Int
    let photometric: Int
    let compression: UInt16
    let separatePlanes: Bool
    let orientation: ImageOrientation
    let tiled: Bool
    let tileWidth: Int
    let tileHeight: Int
    let rowsPerStrip: Int
    var model: Model
    let alpha: Alpha
    let iccProfile: Data?
    /// The colour map as RGBA words in memory order (palette images).
    let palette: [UInt32]
    /// The WhitePoint tag's chromaticity (L*a*b* images).
    let whitePoint: (x: Double, y: Double)?

    /// The number of colour samples of ``model`` (gray 1, RGB 3, CMYK 4).
    var colorSamples: Int {
        switch model {
        case .gray, .palette, .other: return 1
        case .rgb, .lab: return 3
        case .cmyk: return 4
        }
    }

    /// The words `alcedo info` prints for the colour model.
    var colorModelName: String {
        let suffix = alpha == .none ? "" : (colorSamples == 1 ? "+alpha" : "a")
        switch model {
        case .gray: return colorSamples == 1 && alpha != .none ? "gray+alpha" : "gray"
        case .rgb: return photometric == Int(PHOTOMETRIC_YCBCR) ? "ycbcr" : "rgb" + suffix
        case .palette: return "palette"
        case .cmyk: return "cmyk" + (alpha == .none ? "" : "+alpha")
        case .lab: return "lab" + suffix
        case .other:
            switch Int32(photometric) {
            case PHOTOMETRIC_YCBCR: return "ycbcr"
            case PHOTOMETRIC_CIELAB, PHOTOMETRIC_ICCLAB, PHOTOMETRIC_ITULAB: return "lab"
            case PHOTOMETRIC_LOGL, PHOTOMETRIC_LOGLUV: return "logluv"
            case PHOTOMETRIC_SEPARATED: return "separated"
            default: return "photometric \(photometric)"
            }
        }
    }

    /// Reads the current directory. Only tags are read: no pixel data.
    init(_ session: TIFFReadSession) throws(AlcedoError) {
        guard let width = session.u32(TIFFTAG_IMAGEWIDTH), let height = session.u32(TIFFTAG_IMAGELENGTH) else {
            throw session.error("the directory has no image width or length", inHeader: true)
        }
        self.width = Int(width)
        self.height = Int(height)
        bitsPerSample = Int(session.u16Defaulted(TIFFTAG_BITSPERSAMPLE) ?? 1)
        samplesPerPixel = Int(session.u16Defaulted(TIFFTAG_SAMPLESPERPIXEL) ?? 1)
        sampleFormat = Int(session.u16Defaulted(TIFFTAG_SAMPLEFORMAT) ?? 1)
        compression = session.u16Defaulted(TIFFTAG_COMPRESSION) ?? UInt16(COMPRESSION_NONE)
        separatePlanes = session.u16Defaulted(TIFFTAG_PLANARCONFIG).map { Int32($0) == PLANARCONFIG_SEPARATE } ?? false
        orientation = session.u16(TIFFTAG_ORIENTATION).flatMap { ImageOrientation(rawValue: Int($0)) } ?? .up
        tiled = session.lib.TIFFIsTiled!(session.handle) != 0
        tileWidth = Int(session.u32(TIFFTAG_TILEWIDTH) ?? 0)
        tileHeight = Int(session.u32(TIFFTAG_TILELENGTH) ?? 0)
        rowsPerStrip = Int(min(session.u32(TIFFTAG_ROWSPERSTRIP) ?? UInt32.max, UInt32(max(1, height))))

        // Photometric: absent means gray (min-is-black) for 1 sample, RGB for 3 or more.
        let photometric = Int(session.u16(TIFFTAG_PHOTOMETRIC) ?? UInt16(samplesPerPixel >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK))
        self.photometric = photometric
        switch Int32(photometric) {
        case PHOTOMETRIC_MINISWHITE: model = .gray(minIsWhite: true)
        case PHOTOMETRIC_MINISBLACK: model = .gray(minIsWhite: false)
        case PHOTOMETRIC_RGB: model = .rgb
        case PHOTOMETRIC_PALETTE: model = .palette
        case PHOTOMETRIC_CIELAB: model = .lab(unsignedAB: false)
        case PHOTOMETRIC_ICCLAB: model = .lab(unsignedAB: true)
        case PHOTOMETRIC_SEPARATED: model = alcedo_tiff_ink_set(session.handle) == UInt16(INKSET_CMYK) && samplesPerPixel >= 4 ? .cmyk : .other
        case PHOTOMETRIC_YCBCR where Int32(compression) == COMPRESSION_JPEG:
            // libjpeg converts to RGB (TIFFTAG_JPEGCOLORMODE), subsampling included.
            model = .rgb
        default: model = .other
        }

        var extraCount: UInt16 = 0
        var extraValues: UnsafePointer<UInt16>?
        var alpha = Alpha.none
        if alcedo_tiff_get_extra_samples(session.handle, &extraCount, &extraValues) != 0, extraCount > 0, let extraValues {
            switch Int32(extraValues[0]) {
            case EXTRASAMPLE_ASSOCALPHA: alpha = .associated
            // Unspecified extra samples are taken as straight alpha, as ImageMagick reads them.
            default: alpha = .unassociated
            }
        }
        var icc: Data?
        var iccCount: UInt32 = 0
        var iccBytes: UnsafeRawPointer?
        if alcedo_tiff_get_icc(session.handle, &iccCount, &iccBytes) != 0, let iccBytes, iccCount > 0,
           Int(iccCount) <= EmbeddedProfileReader.maxProfileBytes {
            icc = Data(bytes: iccBytes, count: Int(iccCount))
        }
        iccProfile = icc

        var palette: [UInt32] = []
        if model == .palette {
            var red: UnsafePointer<UInt16>?, green: UnsafePointer<UInt16>?, blue: UnsafePointer<UInt16>?
            guard bitsPerSample <= 16, alcedo_tiff_get_colormap(session.handle, &red, &green, &blue) != 0,
                  let red, let green, let blue else {
                throw session.error("a palette image without a colour map", inHeader: true)
            }
            let count = 1 << min(bitsPerSample, 16)
            // libtiff's rule: a map whose entries all fit in 8 bits is an 8-bit map.
            let eightBit = (0..<count).allSatisfy { red[$0] < 256 && green[$0] < 256 && blue[$0] < 256 }
            func scale(_ v: UInt16) -> UInt32 { eightBit ? UInt32(v) : (UInt32(v) * 255 + 32767) / 65535 }
            palette = (0..<count).map { i in scale(red[i]) | scale(green[i]) << 8 | scale(blue[i]) << 16 | 0xFF00_0000 }
        }
        self.palette = palette
        var whiteX: Float = 0, whiteY: Float = 0
        whitePoint = alcedo_tiff_get_white_point(session.handle, &whiteX, &whiteY) != 0 ? (Double(whiteX), Double(whiteY)) : nil
        self.alpha = samplesPerPixel > colorSamplesFor(model) ? alpha : .none
    }

    /// SampleFormat 3: IEEE floating point.
    static let floatingPoint = Int(SAMPLEFORMAT_IEEEFP)

    /// Whether Alcedo converts this page's samples itself (else libtiff's RGBA interface does).
    var convertsSamples: Bool {
        guard model != .other, [Int(SAMPLEFORMAT_UINT), Int(SAMPLEFORMAT_VOID), Self.floatingPoint].contains(sampleFormat) else { return false }
        guard samplesPerPixel >= colorSamples else { return false }
        switch model {
        case .palette: return sampleFormat != Self.floatingPoint && [1, 2, 4, 8, 16].contains(bitsPerSample)
        case .lab: return sampleFormat != Self.floatingPoint && [8, 16].contains(bitsPerSample)
        default: return TIFFSampleConverter.reads(bits: bitsPerSample, sampleFormat: sampleFormat)
        }
    }
}

private func colorSamplesFor(_ model: TIFFPage.Model) -> Int {
    switch model {
    case .gray, .palette, .other: return 1
    case .rgb, .lab: return 3
    case .cmyk: return 4
    }
}

/// What a decoder does with the colour profile an image carries.
///
/// Every image in memory is sRGB by default, so processors and encoders need no special
/// case and a thumbnail looks the way a browser shows the original.
public enum ColorManagement: String, Sendable, Hashable, CaseIterable {
    /// Convert the pixels from the embedded profile (ICC in JPEG, PNG, WebP, GIF, AVIF,
    /// HEIC; PNG `gAMA` + `cHRM`) to sRGB. The default.
    ///
    /// The rendering intent is **relative colorimetric with black-point compensation**: it is
    /// what browsers apply to matrix-shaper profiles (Display P3, Adobe RGB, ProPhoto), so
    /// every colour inside sRGB keeps its exact value and only out-of-gamut colours are
    /// clipped; black-point compensation maps the source's black to sRGB's black, so the
    /// shadows of CMYK and print profiles (whose black is lighter than sRGB's) are not
    /// crushed or washed out. Perceptual intent would change in-gamut colours of LUT profiles
    /// differently from one profile vendor to the next, which is what thumbnails must avoid.
    case convertToSRGB = "srgb"
    /// Keep the pixels in the source's colour space and remember the profile
    /// (``ImageColorMetadata/pixelProfile``), so that the JPEG, PNG and WebP encoders embed it
    /// and wide gamut survives a round trip. CMYK JPEGs are still converted to sRGB, because
    /// Alcedo's pixels are RGBA.
    case preserve
    /// Do not read profiles: the pixels are the stored values, taken as sRGB (CMYK JPEGs as
    /// Adobe's inverted CMYK with the naive formula R = C·K/255). The fastest, and what
    /// Alcedo did before it managed colour.
    case ignore
}

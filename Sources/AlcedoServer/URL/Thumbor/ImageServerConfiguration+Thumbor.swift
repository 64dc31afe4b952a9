import Alcedo

extension ImageServerConfiguration {
    /// Switches to thumbor's URLs with thumbor 7.8's defaults where they differ from imgproxy's:
    /// `Cache-Control` max-age of one day (`MAX_AGE`), no WebP negotiation (`AUTO_WEBP = False`),
    /// no EXIF rotation (`RESPECT_ORIENTATION = False`), quality 80 for every format (`QUALITY`),
    /// and the source's format kept when the URL names none.
    public mutating func useThumborDialect() {
        dialect = .thumbor
        ttl = 86_400
        autoWebP = false
        defaultOptions.autoRotate = false
        defaultQuality = 80
        formatQuality = [:]
        preferredFormats = [.jpeg, .png, .gif, .webp, .avif]
    }
}

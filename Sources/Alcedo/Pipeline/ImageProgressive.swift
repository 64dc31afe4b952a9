#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a progressive JPEG is previewed while it downloads (Kingfisher's `ImageProgressive`),
/// given with ``AlcedoOptionsInfoItem/progressiveJPEG(_:)``.
///
/// While the body of a progressive JPEG arrives, the scans received so far are decoded
/// (libjpeg-turbo's buffered-image mode, fed only the new bytes, with the same decoder-side
/// scaling, orientation, colour management and ``DecodingLimits`` as the final decode), run
/// through the request's processor and image modifier, and delivered as previews: on
/// ``RetrieveImageTask/progressiveImages`` and to a bound target (``ImageDisplaying``) before
/// the final image. At most one preview is decoded at a time per request, off the cooperative
/// pool; a scan that completes while a preview is being decoded is skipped, not queued.
/// Previews are never cached, and the final image is decoded from the whole body as without
/// this option. A baseline JPEG, any other format, and images from the caches or a data
/// provider give no previews.
public struct ImageProgressive: Sendable, Hashable {
    /// Kingfisher's default: blurred early previews, fastest scan, no interval
    /// (`isBlur: true, isFastestScan: true, scanInterval: 0`).
    public static let `default` = ImageProgressive(isBlur: true, isFastestScan: true, scanInterval: 0)

    /// Blur the previews of the first scans, less with each scan, as Kingfisher does: the
    /// previews of scans 1 to 4 get a Gaussian blur of radius max(2, 10 - 4 x scan)
    /// pixels (6, 2, 2, 2), applied after the processor; later previews are sharp.
    public let isBlur: Bool
    /// When several scans have arrived since the last preview, show only the newest
    /// (`true`, the default: one decode for all of them), rather than each scan in turn
    /// (`false`: every scan whose data has arrived is decoded and delivered, in order).
    public let isFastestScan: Bool
    /// The least time between two previews of one request, in seconds (default 0: none;
    /// negative or NaN: none; infinite: only the first preview). A scan that completes sooner
    /// after the last preview is skipped (not queued).
    public let scanInterval: TimeInterval

    /// Creates the settings; Kingfisher's defaults are in ``default``.
    public init(isBlur: Bool, isFastestScan: Bool, scanInterval: TimeInterval) {
        self.isBlur = isBlur
        self.isFastestScan = isFastestScan
        self.scanInterval = scanInterval
    }

    /// The blur radius for the preview of scan `scan` (1, 2, ...), 0 for none.
    func blurRadius(forScan scan: Int) -> Double {
        guard isBlur, scan >= 1, scan < 5 else { return 0 }
        return Double(max(2, 14 - (scan + 1) * 4))
    }
}

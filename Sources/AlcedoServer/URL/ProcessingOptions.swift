import Alcedo

/// The processing options of one imgproxy URL, with imgproxy's meanings and defaults.
///
/// Every property not set by the URL keeps the default stated on it. ``pathSegments`` writes
/// the options back in canonical form (only what differs from the defaults), which is what
/// ``ImgproxyURLBuilder`` puts in a URL.
public struct ProcessingOptions: Sendable, Hashable {
    /// How the image is made to meet ``width`` x ``height`` (imgproxy's resizing types).
    public enum ResizingType: String, Sendable, Hashable, CaseIterable {
        /// Keep the aspect ratio and fit inside the size.
        case fit
        /// Keep the aspect ratio, cover the size, and crop what is over (placed by ``ProcessingOptions/gravity``).
        case fill
        /// As `fill`, but a source smaller than the size is cropped to the size's aspect ratio instead.
        case fillDown = "fill-down"
        /// Exactly the size; the aspect ratio is not kept.
        case force
        /// `fill` when the source and the size are both portrait or both landscape, else `fit`.
        case auto
        /// Alcedo: keep the aspect ratio and cover the size, without cropping what is over
        /// (thumbor's `full-fit-in`).
        case cover
    }

    /// Where a crop (from `fill` or `crop`) or an extension is placed.
    public enum Gravity: Sendable, Hashable {
        /// One of imgproxy's compass gravities (`ce`, `no`, `so`, `ea`, `we`, `nowe`, `noea`,
        /// `sowe`, `soea`) with offsets in pixels, or smart gravity (`sm`, offsets ignored).
        case compass(Compass, xOffset: Double, yOffset: Double)
        /// A focus point, each coordinate in `0...1` (0,0 is the top-left corner).
        case focusPoint(x: Double, y: Double)

        /// The default: the centre, no offset.
        public static let center = Gravity.compass(.center, xOffset: 0, yOffset: 0)
    }

    /// imgproxy's compass gravity names.
    public enum Compass: String, Sendable, Hashable, CaseIterable {
        case center = "ce", north = "no", south = "so", east = "ea", west = "we"
        case northWest = "nowe", northEast = "noea", southWest = "sowe", southEast = "soea"
        /// imgproxy's smart gravity: the crop keeps the most detailed part of the image (edges,
        /// saturated colour, skin tones; see ``SmartCrop``), centred when nothing stands out.
        case smart = "sm"
    }

    /// A crop applied before resizing.
    public struct Crop: Sendable, Hashable {
        /// Width in pixels, or a fraction of the source width when below 1; 0 is the full width.
        public var width: Double
        /// Height in pixels, or a fraction of the source height when below 1; 0 is the full height.
        public var height: Double
        /// Where the crop sits (default: the URL's ``ProcessingOptions/gravity``).
        public var gravity: Gravity?

        public init(width: Double, height: Double, gravity: Gravity? = nil) {
            self.width = width
            self.height = height
            self.gravity = gravity
        }
    }

    /// A border drawn inside the image edge (an Alcedo option: `border:W:RRGGBB`).
    public struct Border: Sendable, Hashable {
        public var width: Double
        public var color: RGBA

        public init(width: Double, color: RGBA) {
            self.width = width
            self.color = color
        }
    }

    /// A trim of the surrounding background, before anything else (imgproxy's `trim`/`t`).
    public struct Trim: Sendable, Hashable {
        /// How far a pixel's channels may differ from the background colour and still be trimmed (default 10).
        public var threshold: Double
        /// The background colour (default `nil`: the top-left pixel's). Magenta `ff00ff` trims transparency.
        public var color: RGBA?
        /// Cut the same amount from the left and the right (default `false`).
        public var equalHorizontal: Bool
        /// Cut the same amount from the top and the bottom (default `false`).
        public var equalVertical: Bool

        public init(threshold: Double = 10, color: RGBA? = nil, equalHorizontal: Bool = false, equalVertical: Bool = false) {
            self.threshold = threshold
            self.color = color
            self.equalHorizontal = equalHorizontal
            self.equalVertical = equalVertical
        }
    }

    /// Padding added around the result in pixels before ``dpr`` (imgproxy's `padding`/`pd`, CSS order).
    public struct Padding: Sendable, Hashable {
        public var top = 0, right = 0, bottom = 0, left = 0

        public init(top: Int = 0, right: Int = 0, bottom: Int = 0, left: Int = 0) {
            self.top = top
            self.right = right
            self.bottom = bottom
            self.left = left
        }

        /// `true` when any side is not 0.
        public var isEnabled: Bool { top != 0 || right != 0 || bottom != 0 || left != 0 }
    }

    /// Where a watermark goes: a compass position, tiled over the whole image, or a focus point.
    public enum WatermarkPosition: Sendable, Hashable {
        /// One of the compass positions (`ce` by default); smart gravity is not one.
        case compass(Compass)
        /// `re`: the watermark repeated over the whole image, the offsets giving the spacing.
        case replicate
        /// `fp:X:Y`: the watermark centred on this point, each coordinate in `0...1`.
        case focusPoint(x: Double, y: Double)
    }

    /// A watermark over the result (imgproxy's `watermark`/`wm`), from the server's watermark image.
    public struct Watermark: Sendable, Hashable {
        /// Multiplies the server's watermark opacity, in `0...1`.
        public var opacity: Double
        /// Default `.compass(.center)`.
        public var position: WatermarkPosition
        /// Offsets from the position in pixels before ``ProcessingOptions/dpr`` (a fraction of
        /// the image below 1); with `re` the spacing between tiles (default 0).
        public var xOffset: Double
        public var yOffset: Double
        /// The watermark's size as a fraction of the result's (default 0: its own size).
        public var scale: Double

        public init(opacity: Double, position: WatermarkPosition = .compass(.center), xOffset: Double = 0, yOffset: Double = 0,
                    scale: Double = 0) {
            self.opacity = opacity
            self.position = position
            self.xOffset = xOffset
            self.yOffset = yOffset
            self.scale = scale
        }
    }

    /// Per-URL limits that replace the server's (imgproxy's security options; refused unless the
    /// server allows security options). `nil` keeps the server's value.
    public struct SecurityLimits: Sendable, Hashable {
        /// `max_src_resolution`/`msr`: megapixels.
        public var maxSourceResolution: Double?
        /// `max_src_file_size`/`msfs`: bytes (0 or less: no limit).
        public var maxSourceFileSize: Int?
        /// `max_animation_frames`/`maf`: the first frames kept, as imgproxy loads only those
        /// (at least 1; 1 makes a still image). Not a refusal.
        public var maxAnimationFrames: Int?
        /// `max_animation_frame_resolution`/`mafr`: megapixels per frame of an animation (after
        /// `max_animation_frames`); a larger one is refused, a still image is not held to it (0:
        /// only the whole-image limit).
        public var maxAnimationFrameResolution: Double?
        /// `max_result_dimension`/`mrd`: the longest side of a result, which is scaled down to fit (0: none).
        public var maxResultDimension: Int?

        public init() {}

        /// `true` when no limit is set.
        public var isEmpty: Bool { self == SecurityLimits() }
    }

    /// Default `.fit`.
    public var resizingType: ResizingType = .fit
    /// Requested width in pixels before ``dpr``; 0 (the default) derives it from the height
    /// and the source's aspect ratio (the source width when both are 0).
    public var width = 0
    /// Requested height in pixels before ``dpr``; 0 (the default) as for ``width``.
    public var height = 0
    /// The least width of the result before ``dpr`` (default 0: none), `min-width`/`mw`.
    public var minWidth = 0
    /// The least height of the result before ``dpr`` (default 0: none), `min-height`/`mh`.
    public var minHeight = 0
    /// Multiplies the horizontal scale, not offsets or paddings (default 1), `zoom`/`z`.
    public var zoomX: Double = 1
    /// Multiplies the vertical scale, not offsets or paddings (default 1), `zoom`/`z`.
    public var zoomY: Double = 1
    /// Multiplies every size, offset and padding (default 1).
    public var dpr: Double = 1
    /// Enlarge a source smaller than the requested size (default `false`).
    public var enlarge = false
    /// Extend a result smaller than the requested size to it, with ``background`` (default `false`).
    public var extend = false
    /// Where the image sits on an extended canvas (default ``Gravity/center``), `ex:1:GRAVITY`.
    public var extendGravity: Gravity = .center
    /// Extend the result to the requested aspect ratio (default `false`), `extend_aspect_ratio`/`exar`.
    public var extendAspectRatio = false
    /// Where the image sits when extended to the aspect ratio (default ``Gravity/center``).
    public var extendAspectRatioGravity: Gravity = .center
    /// Where crops are placed (default ``Gravity/center``).
    public var gravity: Gravity = .center
    /// A crop before resizing (default none).
    public var crop: Crop?
    /// Trim the surrounding background first (default none).
    public var trim: Trim?
    /// Padding around the result, filled with ``background`` (default none).
    public var padding = Padding()
    /// Mirror left and right (default `false`), `flip:1`.
    public var flipHorizontal = false
    /// Mirror top and bottom (default `false`), `flip::1`.
    public var flipVertical = false
    /// Pixelate with blocks of this many pixels (default 0: none; 1 is none too).
    public var pixelate = 0
    /// A watermark (default none).
    public var watermark: Watermark?
    /// Encoder quality 1-100; 0 (the default) is the server's default quality for the output
    /// format (80; WebP 79, AVIF 63, as imgproxy).
    public var quality = 0
    /// Per-format qualities that replace the server's (default none), `format_quality`/`fq`.
    public var formatQuality: [ImageFormat: Int] = [:]
    /// The output format (default `nil`: the URL's extension, else negotiated, else the
    /// server's preferred formats).
    public var format: ImageFormat?
    /// Fills transparent areas, extensions and padding with this colour (default `nil`:
    /// transparent, white when the output format has no alpha).
    public var background: RGBA?
    /// Gaussian blur σ in pixels (default 0: none).
    public var blur: Double = 0
    /// Sharpening σ in pixels (default 0: none), an unsharp mask of that radius.
    public var sharpen: Double = 0
    /// Clockwise rotation in degrees: 0, 90, 180 or 270 (default 0), after auto-rotation.
    public var rotate = 0
    /// Apply the source's EXIF orientation (default `true`).
    public var autoRotate = true
    /// Leave the source's EXIF, XMP and IPTC metadata out of the result (default `true`). With
    /// `false`, JPEG results keep all three and PNG, WebP and AVIF results EXIF and XMP, as libvips
    /// writes them, the EXIF orientation reset to 1 when the pixels were turned.
    public var stripMetadata = true
    /// When stripping metadata, keep the copyright notices (see
    /// `EmbeddedMetadata.copyrightOnly()`; default `nil`: the server's, `true` as imgproxy's).
    public var keepCopyright: Bool?
    /// Convert to sRGB and drop the ICC profile (default `nil`: the server's; Alcedo always
    /// converts to sRGB and writes no profile).
    public var stripColorProfile: Bool?

    /// `strip_color_profile:0`: the result keeps the source's colour space and ICC profile, as
    /// imgproxy exports it back to the source's profile (default: converted to sRGB, no profile).
    var keepsColorProfile: Bool { stripColorProfile == false }
    /// Decode the thumbnail a HEIC or AVIF source embeds instead of its main image, when it has
    /// one, as imgproxy (default `nil`: the server's, off unless `IMGPROXY_ENFORCE_THUMBNAIL`).
    public var enforceThumbnail: Bool?
    /// Lower the quality of a JPEG, WebP or AVIF result until it fits in this many bytes (default 0: no limit).
    public var maxBytes = 0
    /// Changes the URL and the ETag, nothing else (default empty).
    public var cacheBuster = ""
    /// Source formats sent as they are when the result would have the same format (default none).
    public var skipProcessing: [ImageFormat] = []
    /// Send the source's bytes unprocessed and unchecked (default `false`).
    public var raw = false
    /// A Unix time after which the URL answers 404 (default `nil`: never).
    public var expires: Int?
    /// The file name in `Content-Disposition` (default `nil`: the source URL's last path segment).
    public var filename: String?
    /// `Content-Disposition: attachment` instead of `inline` (default `false`).
    public var returnAttachment = false
    /// Per-URL security limits (default none).
    public var security = SecurityLimits()
    /// Serve only this frame (0-based) of an animated source (default `nil`: all frames).
    public var page: Int?
    /// Alcedo: corner radius in pixels (default 0: none), `round_corner:R`.
    public var roundCorner: Double = 0
    /// Alcedo: a border (default none), `border:W:RRGGBB[AA]`.
    public var border: Border?
    /// Alcedo: a colour blended over the image with its alpha (default none), `tint:RRGGBBAA`.
    public var tint: RGBA?
    /// Alcedo: the colour the corners cut by ``roundCorner`` are filled with (default `nil`:
    /// transparent), `round_corner:R:RRGGBB`.
    public var roundCornerColor: RGBA?
    /// Alcedo: a crop by source coordinates, after the trim and before anything else (default
    /// none), `crop_region:LEFT:TOP:RIGHT:BOTTOM`. It is clamped to the image; an empty one is none.
    public var region: Region?
    /// Alcedo: swap the requested width and height when the source is portrait and the size
    /// landscape or the reverse (default `false`), `adaptive:1` (thumbor's `adaptive-fit-in`).
    public var adaptiveOrientation = false
    /// Alcedo: a focus point in source pixels (before ``region``), which replaces ``gravity`` for the
    /// crop to the result (default `nil`), `focus_pixel:X:Y` (thumbor's `focal()`).
    public var focusPixel: FocusPixel?
    /// Alcedo: the `Cache-Control` max-age of this result in seconds, replacing the server's
    /// (default `nil`), `max_age:SECONDS` (thumbor's `max_age()`); 0 answers `no-cache`.
    public var maxAge: Int?

    /// Alcedo: a trim of the border whose colour is a corner pixel's, within a Euclidean RGBA
    /// distance (thumbor's `trim`; ``CornerTrimImageProcessor``), in place of ``trim`` (default
    /// none), `corner_trim:CORNER:TOLERANCE`. ``region`` is read in the untrimmed image's pixels.
    public var cornerTrim: CornerTrim?
    /// Alcedo: the requested width and height are lowered to the source's (before any crop or
    /// trim), so that nothing, a `fill` canvas or an `upscale` step included, is larger than the
    /// source (thumbor's `no_upscale()`; default `false`), `within_source:1`.
    public var sizeWithinSource = false
    /// Alcedo: the requested width (``width``) or height (``height``) is the image's own side
    /// after the trim and ``region`` crop (thumbor's `orig`; default `false`), `source_size:W:H`.
    public var widthFromSource = false, heightFromSource = false
    /// Alcedo: thumbor's crop and resize in place of ``resizingType``'s (default `false`),
    /// `thumbor_crop:1`: the requested size is completed as thumbor completes it (a side of 0
    /// from the other and the aspect ratio), the image is cut to that size's aspect ratio around
    /// ``focusPixel`` or the ``gravity``'s edge or middle, with thumbor's rounding (unless
    /// ``resizingType`` is `force`, thumbor's `stretch()`), and then resized to exactly that
    /// size. The window is chosen on the image before the resize, and before the flips.
    public var thumborCrop = false
    /// Alcedo: thumbor's `fit_in_resize` size for ``resizingType`` `fit` (thumbor's `fit-in`) or
    /// `cover` (`full-fit-in`), default `false`, `thumbor_fit_in:1`: when the decoder scaled the
    /// image down, the size is computed on the whole source, with thumbor's rounding, as thumbor
    /// computes it (the scaled image's own size could make a side a pixel off).
    public var thumborFitIn = false
    /// Alcedo: answer a PNG source whose result has no transparent pixel as JPEG when the URL
    /// names no format (thumbor's `autojpg()`; default `nil`: the server's `AUTO_PNG_TO_JPG`).
    public var pngToJPEG: Bool?

    /// Alcedo: steps run one after another, in this order, after everything above (default none).
    /// thumbor's post-transform filters become these, in the order its URL gives them; imgproxy's
    /// options keep imgproxy's fixed order and set none. In canonical paths each is one segment,
    /// in order (`levels:…`, `effect:…`, `url_watermark:…`…).
    public var steps: [Step] = []

    /// One step of ``steps``: an operation on the processed image, run by a library processor
    /// or by the same code as the fixed option of that name.
    public enum Step: Sendable, Hashable {
        /// A channel adjustment (``LevelsImageProcessor``).
        case levels(LevelsImageProcessor.Adjustment)
        /// A pixel effect (noise, convolution, thumbor's blur).
        case effect(Effect)
        /// A Gaussian blur of this σ in pixels (``BlurImageProcessor``), as ``ProcessingOptions/blur``.
        case blur(sigma: Double)
        /// A wavelet sharpening (``WaveletSharpenImageProcessor``; thumbor's `sharpen`).
        case waveletSharpen(WaveletSharpen)
        /// The image centred on a canvas of the requested size when `extend` (filled as `fill` says,
        /// a ``ExtendFill/background`` canvas with `color`, transparent when it is `nil`), its
        /// pixels replacing the canvas's, then composited over `color` when `merge` (default `true`)
        /// and there is one, or over the image's average colour for ``ExtendFill/average``
        /// (thumbor's `fill(color[,fill_transparent])`, and `background_color(auto)` without `extend`).
        case fill(ExtendFill, color: RGBA?, extend: Bool, merge: Bool = true)
        /// The image composited over a colour, flattened when it is opaque (thumbor's `background_color`).
        case background(RGBA)
        /// Corners rounded by this radius in pixels (quarter ellipses when `verticalRadius`, the
        /// radius down the sides, differs), cut corners painted with `color` (made transparent
        /// when `nil`), as thumbor's `round_corner(a|b,…)`.
        case roundCorner(radius: Double, verticalRadius: Double? = nil, color: RGBA?)
        /// An image from a URL drawn over the result (thumbor's `watermark(url,…)`).
        case urlWatermark(URLWatermark)
        /// A nine-patch image from a URL drawn around the result (thumbor's `frame(url)`).
        case frame(url: String)
        /// The image turned clockwise by 90, 180 or 270 degrees (thumbor's `rotate`, which
        /// turns what the steps before it left).
        case rotate(degrees: Int)
        /// The image scaled by a factor in (0, 1], each side rounded down, unless a side would
        /// be under a pixel (thumbor's `proportion`).
        case proportion(Double)
        /// The image enlarged to fit the requested size when it is smaller on both sides
        /// (thumbor's `upscale`).
        case upscale

        /// The canonical segment of the step.
        var segment: String {
            switch self {
            case .levels(let adjustment):
                return "levels:" + LevelsImageProcessor(adjustment).identifier.dropFirst("com.alcedo.levels(".count).dropLast()
            case .effect(let effect):
                return "effect:" + effect.processor.identifier.dropFirst("com.alcedo.".count)
            case .blur(let sigma):
                return "gaussian_blur:" + ProcessingOptions.number(sigma)
            case .waveletSharpen(let sharpen):
                return "wavelet_sharpen:\(ProcessingOptions.number(sharpen.amount)):\(ProcessingOptions.number(sharpen.radius)):"
                    + (sharpen.luminanceOnly ? "1" : "0")
            case .fill(let fill, let color, let extend, let merge):
                return "fill:\(fill.rawValue):" + (color.map(ProcessingOptions.hex) ?? "") + ":\(extend ? 1 : 0):\(merge ? 1 : 0)"
            case .background(let color):
                return "flatten:" + ProcessingOptions.hex(color)
            case .roundCorner(let radius, let verticalRadius, let color):
                return "corner:" + ProcessingOptions.number(radius) + (verticalRadius.map { "|" + ProcessingOptions.number($0) } ?? "")
                    + ":" + (color.map(ProcessingOptions.hex) ?? "")
            case .urlWatermark(let mark):
                return "url_watermark:" + mark.placement + ":" + Base64URL.encode(Array(mark.sourceURL.utf8))
            case .frame(let url):
                return "url_frame:" + Base64URL.encode(Array(url.utf8))
            case .rotate(let degrees):
                return "turn:\(degrees)"
            case .proportion(let factor):
                return "proportion:" + ProcessingOptions.number(factor)
            case .upscale:
                return "upscale"
            }
        }

        /// The step's name in the request's stage timings (`process:NAME`).
        var timingName: String {
            switch self {
            case .levels: return "levels"
            case .effect(let effect): return ProcessingStepClock.stepName(of: effect.processor)
            case .blur: return "blur"
            case .waveletSharpen: return "sharpen"
            case .fill: return "fill"
            case .background: return "background"
            case .roundCorner: return "round_corner"
            case .urlWatermark: return "watermark"
            case .frame: return "frame"
            case .rotate: return "rotate"
            case .proportion: return "proportion"
            case .upscale: return "upscale"
            }
        }

        /// The URL of an image the step draws, fetched before processing.
        var overlayURL: String? {
            switch self {
            case .urlWatermark(let mark): return mark.sourceURL
            case .frame(let url): return url
            default: return nil
            }
        }
    }

    /// The URLs of the images ``steps`` draw (watermarks, frames), in order.
    var overlayURLs: [String] { steps.compactMap(\.overlayURL) }

    /// The colour a result with transparency is flattened over when encoded as a format without
    /// alpha: ``background``, else the last colour a ``Step/fill(_:color:extend:merge:)`` or
    /// ``Step/background(_:)`` step flattened over.
    var flatteningBackground: RGBA? {
        if let background { return background }
        for step in steps.reversed() {
            if case .background(let color) = step { return color }
            if case .fill(_, let color?, _, _) = step { return color }
        }
        return nil
    }

    /// A pixel effect run by a library processor.
    public enum Effect: Sendable, Hashable {
        /// ``NoiseImageProcessor``.
        case noise(amount: Int, seed: UInt32)
        /// ``ConvolutionImageProcessor``.
        case convolution(kernel: [Double], columns: Int, normalize: Bool)
        /// ``KernelBlurImageProcessor`` (thumbor's `blur`).
        case kernelBlur(radius: Int, sigma: Double)

        /// The processor that runs it.
        public var processor: any ImageProcessor {
            switch self {
            case .noise(let amount, let seed): return NoiseImageProcessor(amount: amount, seed: seed)
            case .convolution(let kernel, let columns, let normalize):
                return ConvolutionImageProcessor(kernel: kernel, columns: columns, normalize: normalize)
            case .kernelBlur(let radius, let sigma): return KernelBlurImageProcessor(radius: radius, sigma: sigma)
            }
        }
    }

    /// thumbor's trim: the corner and the colour distance.
    public struct CornerTrim: Sendable, Hashable {
        public var corner: CornerTrimImageProcessor.Corner
        public var tolerance: Int

        public init(corner: CornerTrimImageProcessor.Corner, tolerance: Int) {
            self.corner = corner
            self.tolerance = tolerance
        }
    }

    /// thumbor's `sharpen` arguments.
    public struct WaveletSharpen: Sendable, Hashable {
        public var amount: Double, radius: Double, luminanceOnly: Bool

        public init(amount: Double, radius: Double, luminanceOnly: Bool) {
            self.amount = amount
            self.radius = radius
            self.luminanceOnly = luminanceOnly
        }
    }

    /// What the canvas of a ``Step/fill(_:color:extend:merge:)`` step is filled with.
    public enum ExtendFill: String, Sendable, Hashable {
        /// The step's colour (transparent when it is `nil`).
        case background
        /// The mean colour of the image's pixels (thumbor's `fill(auto)`).
        case average
        /// The image itself, blurred (σ 50) and stretched to the canvas (thumbor's `fill(blur)`).
        case blur
    }

    /// One coordinate of a ``URLWatermark``, as thumbor's `watermark` reads it.
    public enum WatermarkCoordinate: Sendable, Hashable {
        /// Pixels from the left or top; `fromEnd` (written with `-`): the watermark's far edge
        /// that far from the right or bottom.
        case pixels(Int, fromEnd: Bool)
        /// A percentage of the image's side (`Np`), from the right or bottom with `fromEnd` (`-Np`).
        case percent(Int, fromEnd: Bool)
        /// Centred.
        case center
        /// Repeated along this axis, spaced evenly.
        case `repeat`
    }

    /// An image from a URL drawn over the result (thumbor's `watermark(url,x,y,alpha[,w_ratio,h_ratio])`).
    public struct URLWatermark: Sendable, Hashable {
        /// The image's URL, as the loader fetches it (checked by the same rules as the source).
        public var sourceURL: String
        public var x: WatermarkCoordinate, y: WatermarkCoordinate
        /// Transparency added, in percent: each alpha value is lowered by `255 * alpha / 100`.
        public var alpha: Int
        /// The largest width and height as percentages of the image (`nil`: not bounded on that side;
        /// both `nil`: the watermark's own size).
        public var widthRatio: Int?, heightRatio: Int?

        public init(sourceURL: String, x: WatermarkCoordinate, y: WatermarkCoordinate, alpha: Int, widthRatio: Int? = nil,
                    heightRatio: Int? = nil) {
            self.sourceURL = sourceURL
            self.x = x
            self.y = y
            self.alpha = alpha
            self.widthRatio = widthRatio
            self.heightRatio = heightRatio
        }

        /// The canonical text of the placement (without the URL).
        var placement: String {
            func text(_ coordinate: WatermarkCoordinate) -> String {
                switch coordinate {
                case .pixels(let value, let fromEnd): return (fromEnd ? "-" : "") + String(value)
                case .percent(let value, let fromEnd): return (fromEnd ? "-" : "") + "\(value)p"
                case .center: return "center"
                case .repeat: return "repeat"
                }
            }
            return [text(x), text(y), String(alpha), widthRatio.map(String.init) ?? "none", heightRatio.map(String.init) ?? "none"]
                .joined(separator: ":")
        }
    }

    /// A rectangle in source pixels: columns `left..<right`, rows `top..<bottom`.
    public struct Region: Sendable, Hashable {
        public var left: Int, top: Int, right: Int, bottom: Int

        public init(left: Int, top: Int, right: Int, bottom: Int) {
            self.left = left
            self.top = top
            self.right = right
            self.bottom = bottom
        }
    }

    /// A point in source pixels.
    public struct FocusPixel: Sendable, Hashable {
        public var x: Double, y: Double

        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }
    }

    /// The defaults: fit, no size (the source size), no effects.
    public init() {}

    /// The options with every field that does not change pixels reset (format, quality,
    /// cache buster, metadata, response headers and limits checked elsewhere; `maf` stays:
    /// it keeps the first frames only).
    var pixelOptions: ProcessingOptions {
        var copy = self
        copy.format = nil
        copy.quality = 0
        copy.formatQuality = [:]
        copy.maxBytes = 0
        copy.cacheBuster = ""
        copy.stripMetadata = true
        copy.keepCopyright = nil
        // `scp:0` keeps the source's colour space (see ``keepsColorProfile``): other pixels.
        if copy.stripColorProfile != false { copy.stripColorProfile = nil }
        copy.skipProcessing = []
        copy.raw = false
        copy.expires = nil
        copy.filename = nil
        copy.returnAttachment = false
        copy.maxAge = nil
        copy.pngToJPEG = nil
        copy.security.maxSourceResolution = nil
        copy.security.maxSourceFileSize = nil
        copy.security.maxAnimationFrameResolution = nil
        return copy
    }

    /// `true` when the options change pixels (anything but format, quality, cache buster…).
    var changesPixels: Bool { pixelOptions != ProcessingOptions() }

    /// The options in canonical imgproxy form, one segment each, only those that differ from
    /// the defaults: `rs:fill:300:200:1:0`, `g:noea`, `q:75`… Parsing them gives these options.
    public var pathSegments: [String] {
        var segments: [String] = []
        let defaults = ProcessingOptions()
        if resizingType != defaults.resizingType || width != 0 || height != 0 || enlarge || extend {
            var segment = "rs:\(resizingType.rawValue):\(width):\(height):\(enlarge ? 1 : 0):\(extend ? 1 : 0)"
            if extend, extendGravity != .center { segment += ":" + Self.gravityArguments(extendGravity) }
            segments.append(segment)
        }
        if !extend, extendGravity != .center { segments.append("ex:0:" + Self.gravityArguments(extendGravity)) }
        if extendAspectRatio || extendAspectRatioGravity != .center {
            var segment = "exar:\(extendAspectRatio ? 1 : 0)"
            if extendAspectRatioGravity != .center { segment += ":" + Self.gravityArguments(extendAspectRatioGravity) }
            segments.append(segment)
        }
        if minWidth != 0 { segments.append("mw:\(minWidth)") }
        if minHeight != 0 { segments.append("mh:\(minHeight)") }
        if zoomX != 1 || zoomY != 1 {
            segments.append(zoomX == zoomY ? "z:\(Self.number(zoomX))" : "z:\(Self.number(zoomX)):\(Self.number(zoomY))")
        }
        if dpr != 1 { segments.append("dpr:\(Self.number(dpr))") }
        if gravity != .center { segments.append("g:" + Self.gravityArguments(gravity)) }
        if let crop {
            var segment = "c:\(Self.number(crop.width)):\(Self.number(crop.height))"
            if let gravity = crop.gravity { segment += ":" + Self.gravityArguments(gravity) }
            segments.append(segment)
        }
        if let trim {
            var segment = "t:\(Self.number(trim.threshold)):" + (trim.color.map { Self.hex($0) } ?? "")
            segment += ":\(trim.equalHorizontal ? 1 : 0):\(trim.equalVertical ? 1 : 0)"
            segments.append(segment)
        }
        if padding.isEnabled { segments.append("pd:\(padding.top):\(padding.right):\(padding.bottom):\(padding.left)") }
        if flipHorizontal || flipVertical { segments.append("fl:\(flipHorizontal ? 1 : 0):\(flipVertical ? 1 : 0)") }
        if pixelate > 1 { segments.append("pix:\(pixelate)") }
        if let watermark {
            var segment = "wm:\(Self.number(watermark.opacity)):"
            switch watermark.position {
            case .compass(let compass): segment += compass.rawValue
            case .replicate: segment += "re"
            case .focusPoint(let x, let y): segment += "fp:\(Self.number(x)):\(Self.number(y))"
            }
            if case .focusPoint = watermark.position {
                segment += ":\(Self.number(watermark.scale))"
            } else {
                segment += ":\(Self.number(watermark.xOffset)):\(Self.number(watermark.yOffset)):\(Self.number(watermark.scale))"
            }
            segments.append(segment)
        }
        if quality != 0 { segments.append("q:\(quality)") }
        if !formatQuality.isEmpty {
            let pairs = formatQuality.sorted { $0.key.rawValue < $1.key.rawValue }
            segments.append("fq:" + pairs.map { "\($0.key.preferredFileExtension):\($0.value)" }.joined(separator: ":"))
        }
        if let format { segments.append("f:\(format.preferredFileExtension)") }
        if let background { segments.append("bg:" + Self.hex(background)) }
        if blur != 0 { segments.append("bl:\(Self.number(blur))") }
        if sharpen != 0 { segments.append("sh:\(Self.number(sharpen))") }
        if rotate != 0 { segments.append("rot:\(rotate)") }
        if !autoRotate { segments.append("ar:0") }
        if !stripMetadata { segments.append("sm:0") }
        if let keepCopyright { segments.append("kcr:\(keepCopyright ? 1 : 0)") }
        if let stripColorProfile { segments.append("scp:\(stripColorProfile ? 1 : 0)") }
        if let enforceThumbnail { segments.append("eth:\(enforceThumbnail ? 1 : 0)") }
        if maxBytes != 0 { segments.append("mb:\(maxBytes)") }
        if !cacheBuster.isEmpty { segments.append("cb:\(cacheBuster)") }
        if !skipProcessing.isEmpty { segments.append("skp:" + skipProcessing.map(\.preferredFileExtension).joined(separator: ":")) }
        if raw { segments.append("raw:1") }
        if let expires { segments.append("exp:\(expires)") }
        if let filename { segments.append("fn:" + Base64URL.encode(Array(filename.utf8)) + ":1") }
        if returnAttachment { segments.append("att:1") }
        if let value = security.maxSourceResolution { segments.append("msr:\(Self.number(value))") }
        if let value = security.maxSourceFileSize { segments.append("msfs:\(value)") }
        if let value = security.maxAnimationFrames { segments.append("maf:\(value)") }
        if let value = security.maxAnimationFrameResolution { segments.append("mafr:\(Self.number(value))") }
        if let value = security.maxResultDimension { segments.append("mrd:\(value)") }
        if let page { segments.append("pg:\(page)") }
        if roundCorner != 0 { segments.append("round_corner:\(Self.number(roundCorner))") }
        if let border { segments.append("border:\(Self.number(border.width)):\(Self.hex(border.color))") }
        if let tint { segments.append("tint:" + Self.hex(tint)) }
        if let roundCornerColor { segments.append("round_corner_color:" + Self.hex(roundCornerColor)) }
        if let region { segments.append("crop_region:\(region.left):\(region.top):\(region.right):\(region.bottom)") }
        if adaptiveOrientation { segments.append("adaptive:1") }
        if let focusPixel { segments.append("focus_pixel:\(Self.number(focusPixel.x)):\(Self.number(focusPixel.y))") }
        if let maxAge { segments.append("max_age:\(maxAge)") }
        if let cornerTrim { segments.append("corner_trim:\(cornerTrim.corner.rawValue):\(cornerTrim.tolerance)") }
        if sizeWithinSource { segments.append("within_source:1") }
        if widthFromSource || heightFromSource { segments.append("source_size:\(widthFromSource ? 1 : 0):\(heightFromSource ? 1 : 0)") }
        if thumborCrop { segments.append("thumbor_crop:1") }
        if thumborFitIn { segments.append("thumbor_fit_in:1") }
        if let pngToJPEG { segments.append("png_to_jpeg:\(pngToJPEG ? 1 : 0)") }
        segments += steps.map(\.segment)
        return segments
    }

    /// The canonical text of the options that change pixels: part of the processor identifier.
    var pixelIdentifier: String {
        pixelOptions.pathSegments.joined(separator: "/")
    }

    static func gravityArguments(_ gravity: Gravity) -> String {
        switch gravity {
        case .compass(let compass, let x, let y):
            return x == 0 && y == 0 ? compass.rawValue : "\(compass.rawValue):\(number(x)):\(number(y))"
        case .focusPoint(let x, let y):
            return "fp:\(number(x)):\(number(y))"
        }
    }

    /// A number as short as it reads back the same: `3`, `0.5`.
    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return "\(value)"
    }

    static func hex(_ color: RGBA) -> String {
        let bytes = color.alpha == 255 ? [color.red, color.green, color.blue] : [color.red, color.green, color.blue, color.alpha]
        return bytes.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
        }.joined()
    }
}

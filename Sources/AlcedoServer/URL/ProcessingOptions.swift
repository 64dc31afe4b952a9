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

    /// Default `.fit`.
    public var resizingType: ResizingType = .fit
    /// Requested width in pixels before ``dpr``; 0 (the default) derives it from the height
    /// and the source's aspect ratio (the source width when both are 0).
    public var width = 0
    /// Requested height in pixels before ``dpr``; 0 (the default) as for ``width``.
    public var height = 0
    /// Multiplies ``width`` and ``height`` (default 1).
    public var dpr: Double = 1
    /// Enlarge a source smaller than the requested size (default `false`).
    public var enlarge = false
    /// Extend a result smaller than the requested size to it, with ``background`` (default `false`).
    public var extend = false
    /// Where crops and extensions are placed (default ``Gravity/center``).
    public var gravity: Gravity = .center
    /// A crop before resizing (default none).
    public var crop: Crop?
    /// Encoder quality 1-100; 0 (the default) is the server's default quality for the output
    /// format (80; WebP 79, AVIF 63, as imgproxy).
    public var quality = 0
    /// The output format: JPEG, PNG, WebP, GIF or AVIF (default `nil`: the URL's extension,
    /// else negotiated, else the source's).
    public var format: ImageFormat?
    /// Fills transparent areas and extensions with this colour (default `nil`: transparent,
    /// white when the output format has no alpha).
    public var background: RGBA?
    /// Gaussian blur σ in pixels (default 0: none).
    public var blur: Double = 0
    /// Sharpening σ in pixels (default 0: none), an unsharp mask of that radius.
    public var sharpen: Double = 0
    /// Clockwise rotation in degrees: 0, 90, 180 or 270 (default 0), after auto-rotation.
    public var rotate = 0
    /// Apply the source's EXIF orientation (default `true`).
    public var autoRotate = true
    /// Leave metadata out of the result (default `true`; Alcedo's encoders never write any).
    public var stripMetadata = true
    /// Lower the quality of a JPEG or WebP result until it fits in this many bytes (default 0: no limit).
    public var maxBytes = 0
    /// Changes the URL and the ETag, nothing else (default empty).
    public var cacheBuster = ""
    /// Serve only this frame (0-based) of an animated source (default `nil`: all frames).
    public var page: Int?
    /// Alcedo: corner radius in pixels (default 0: none), `round_corner:R`.
    public var roundCorner: Double = 0
    /// Alcedo: a border (default none), `border:W:RRGGBB[AA]`.
    public var border: Border?
    /// Alcedo: a colour blended over the image with its alpha (default none), `tint:RRGGBBAA`.
    public var tint: RGBA?

    /// The defaults: fit, no size (the source size), no effects.
    public init() {}

    /// `true` when the options change pixels (anything but format, quality, cache buster…).
    var changesPixels: Bool {
        var neutral = ProcessingOptions()
        neutral.format = format
        neutral.quality = quality
        neutral.maxBytes = maxBytes
        neutral.cacheBuster = cacheBuster
        neutral.stripMetadata = stripMetadata
        return neutral != self
    }

    /// The options in canonical imgproxy form, one segment each, only those that differ from
    /// the defaults: `rs:fill:300:200:1:0`, `g:noea`, `q:75`… Parsing them gives these options.
    public var pathSegments: [String] {
        var segments: [String] = []
        let defaults = ProcessingOptions()
        if resizingType != defaults.resizingType || width != 0 || height != 0 || enlarge || extend {
            segments.append("rs:\(resizingType.rawValue):\(width):\(height):\(enlarge ? 1 : 0):\(extend ? 1 : 0)")
        }
        if dpr != 1 { segments.append("dpr:\(Self.number(dpr))") }
        if gravity != .center { segments.append("g:" + Self.gravityArguments(gravity)) }
        if let crop {
            var segment = "c:\(Self.number(crop.width)):\(Self.number(crop.height))"
            if let gravity = crop.gravity { segment += ":" + Self.gravityArguments(gravity) }
            segments.append(segment)
        }
        if quality != 0 { segments.append("q:\(quality)") }
        if let format { segments.append("f:\(format.preferredFileExtension)") }
        if let background { segments.append("bg:" + Self.hex(background)) }
        if blur != 0 { segments.append("bl:\(Self.number(blur))") }
        if sharpen != 0 { segments.append("sh:\(Self.number(sharpen))") }
        if rotate != 0 { segments.append("rot:\(rotate)") }
        if !autoRotate { segments.append("ar:0") }
        if !stripMetadata { segments.append("sm:0") }
        if maxBytes != 0 { segments.append("mb:\(maxBytes)") }
        if !cacheBuster.isEmpty { segments.append("cb:\(cacheBuster)") }
        if let page { segments.append("pg:\(page)") }
        if roundCorner != 0 { segments.append("round_corner:\(Self.number(roundCorner))") }
        if let border { segments.append("border:\(Self.number(border.width)):\(Self.hex(border.color))") }
        if let tint { segments.append("tint:" + Self.hex(tint)) }
        return segments
    }

    /// The canonical text of the options that change pixels: part of the processor identifier.
    var pixelIdentifier: String {
        var copy = self
        copy.format = nil
        copy.quality = 0
        copy.maxBytes = 0
        copy.cacheBuster = ""
        copy.stripMetadata = true
        return copy.pathSegments.joined(separator: "/")
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

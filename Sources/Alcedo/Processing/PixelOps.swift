/// Pixel loops shared by the processors. Pixels are RGBA8 with straight alpha (see
/// ``AlcedoImage``); compositing converts to premultiplied `Float` in `0...1` and back.
enum PixelOps {
    /// A new buffer of `count` bytes written by `body` through a raw pointer (no zero-fill).
    @inline(__always)
    static func makeBuffer(count: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Void) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if let base = buffer.baseAddress { body(base) }
            initialized = count
        }
    }

    /// Maps every pixel of `pixels` through `body(source, destination)`, each pointing at the
    /// 4 bytes of one pixel. `body` must write all 4 destination bytes.
    @inline(__always)
    static func mapPixels(
        _ pixels: [UInt8], _ body: (UnsafePointer<UInt8>, UnsafeMutablePointer<UInt8>) -> Void
    ) -> [UInt8] {
        pixels.withUnsafeBufferPointer { source in
            makeBuffer(count: source.count) { destination in
                guard let src = source.baseAddress else { return }
                var offset = 0
                while offset < source.count {
                    body(src + offset, destination + offset)
                    offset += 4
                }
            }
        }
    }

    /// Maps each colour channel through its 256-entry table, keeping alpha.
    static func mapChannels(_ pixels: [UInt8], red: [UInt8], green: [UInt8], blue: [UInt8]) -> [UInt8] {
        precondition(red.count == 256 && green.count == 256 && blue.count == 256)
        return red.withUnsafeBufferPointer { r in
            green.withUnsafeBufferPointer { g in
                blue.withUnsafeBufferPointer { b in
                    mapPixels(pixels) { s, d in
                        d[0] = r[Int(s[0])]
                        d[1] = g[Int(s[1])]
                        d[2] = b[Int(s[2])]
                        d[3] = s[3]
                    }
                }
            }
        }
    }

    /// ``mapPixels(_:_:)`` for a `body` that, on an opaque pixel, computes each colour channel
    /// from that channel alone and gives every opaque pixel the same alpha (compositing with a
    /// constant colour does). Opaque pixels then go through three 256-entry tables made by
    /// running `body` on the 256 opaque greys, with the same results; the others through `body`.
    @inline(__always)
    static func mapPixels(
        separableWhenOpaque pixels: [UInt8], _ body: (UnsafePointer<UInt8>, UnsafeMutablePointer<UInt8>) -> Void
    ) -> [UInt8] {
        var tables = [UInt8](repeating: 0, count: 256 * 3)
        var opaqueAlpha: UInt8 = 255
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8) { scratch in
            guard let grey = scratch.baseAddress else { return }
            for value in 0...255 {
                let v = UInt8(value)
                grey[0] = v; grey[1] = v; grey[2] = v; grey[3] = 255
                body(grey, grey + 4)
                tables[value] = grey[4]
                tables[256 + value] = grey[5]
                tables[512 + value] = grey[6]
                opaqueAlpha = grey[7]
            }
        }
        return tables.withUnsafeBufferPointer { table in
            mapPixels(pixels) { s, d in
                if s[3] == 255 {
                    d[0] = table[Int(s[0])]
                    d[1] = table[256 + Int(s[1])]
                    d[2] = table[512 + Int(s[2])]
                    d[3] = opaqueAlpha
                } else {
                    body(s, d)
                }
            }
        }
    }

    /// The pixel at `p` premultiplied, as `Float`s in `0...1`: (r·a, g·a, b·a, a).
    @inline(__always)
    static func premultiplied(_ p: UnsafePointer<UInt8>) -> SIMD4<Float> {
        let a = Float(p[3]) * (1 / 255)
        let scale = a * (1 / 255)
        return SIMD4(Float(p[0]) * scale, Float(p[1]) * scale, Float(p[2]) * scale, a)
    }

    /// Writes the premultiplied colour `c` (`Float`s in `0...1`) to `p` as straight RGBA8,
    /// rounded to nearest. A fully transparent result is written as (0, 0, 0, 0).
    @inline(__always)
    static func storePremultiplied(_ c: SIMD4<Float>, to p: UnsafeMutablePointer<UInt8>) {
        let alpha = min(max(c.w, 0), 1)
        let a8 = byte(alpha * 255)
        guard a8 > 0 else {
            p[0] = 0; p[1] = 0; p[2] = 0; p[3] = 0
            return
        }
        let unscale = 255 / alpha
        p[0] = byte(c.x * unscale)
        p[1] = byte(c.y * unscale)
        p[2] = byte(c.z * unscale)
        p[3] = a8
    }

    /// `value` (nominally `0...255`) clamped to a byte and rounded to nearest, halves up; NaN
    /// is 0 (a conversion of NaN to an integer would trap).
    /// (Adding 0.5 and truncating: `Float.rounded()` is a library call on baseline x86-64.)
    @inline(__always)
    static func byte(_ value: Float) -> UInt8 {
        // `value > 0` is false for NaN, where `max(value, 0)` would keep the NaN.
        UInt8((value > 0 ? min(value, 255) : 0) + 0.5)
    }

    /// `value` in `0...1` as a byte, clamped and rounded to nearest; NaN is 0.
    @inline(__always)
    static func unitByte(_ value: Double) -> UInt8 {
        let scaled = value * 255
        return UInt8((scaled > 0 ? min(scaled, 255) : 0).rounded())
    }
}

extension RGBA {
    /// This colour premultiplied, as `Float`s in `0...1`.
    var premultiplied: SIMD4<Float> {
        let a = Float(alpha) / 255
        return SIMD4(Float(red) / 255 * a, Float(green) / 255 * a, Float(blue) / 255 * a, a)
    }
}

extension AlcedoImage {
    /// A copy with every frame's pixels replaced by `transform(pixels)`, keeping the frame
    /// durations, loop count, source format and orientation. `transform` must return
    /// `newSize.pixelCount * 4` bytes (default: the current size).
    func mappingFrames(to newSize: PixelSize? = nil, _ transform: ([UInt8]) -> [UInt8]) -> AlcedoImage {
        let newFrames = frames.map { Frame(pixels: transform($0.pixels), duration: $0.duration) }
        return replacingFrames(newFrames, width: newSize?.width, height: newSize?.height)
    }
}

extension SIMD4 where Scalar == Float {
    /// Source-over: `self` (premultiplied) drawn over `bottom` (premultiplied).
    @inline(__always)
    func over(_ bottom: SIMD4<Float>) -> SIMD4<Float> {
        self + bottom * (1 - w)
    }
}

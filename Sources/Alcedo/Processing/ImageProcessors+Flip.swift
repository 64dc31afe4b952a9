/// Mirrors every frame left-right, top-bottom, or both (imgproxy's `flip`).
///
/// Identifier: `com.alcedo.flip(<horizontal>,<vertical>)`, for example `com.alcedo.flip(true,false)`.
public struct FlipImageProcessor: ImageProcessor {
    /// Mirror left and right (default `true`).
    public let horizontal: Bool
    /// Mirror top and bottom (default `false`).
    public let vertical: Bool

    /// Creates a flip; with both `false` it returns images unchanged.
    /// - Parameters:
    ///   - horizontal: mirror left and right (default `true`).
    ///   - vertical: mirror top and bottom (default `false`).
    public init(horizontal: Bool = true, vertical: Bool = false) {
        self.horizontal = horizontal
        self.vertical = vertical
    }

    public var identifier: String {
        ProcessorSupport.identifier("flip", [String(horizontal), String(vertical)])
    }

    /// Flips every frame. Takes no parameter that can be out of range.
    public func process(_ image: AlcedoImage) throws(AlcedoError) -> AlcedoImage {
        guard horizontal || vertical else { return image }
        let width = image.width, height = image.height
        let rowBytes = width * 4
        return image.mappingFrames { pixels in
            var out = [UInt8](repeating: 0, count: pixels.count)
            pixels.withUnsafeBufferPointer { source in
                out.withUnsafeMutableBufferPointer { destination in
                    for row in 0..<height {
                        let from = source.baseAddress! + row * rowBytes
                        let to = destination.baseAddress! + (vertical ? height - 1 - row : row) * rowBytes
                        if horizontal {
                            for column in 0..<width {
                                (to + (width - 1 - column) * 4).update(from: from + column * 4, count: 4)
                            }
                        } else {
                            to.update(from: from, count: rowBytes)
                        }
                    }
                }
            }
            return out
        }
    }
}

import Hummingbird

/// What imgproxy's debug headers (`IMGPROXY_ENABLE_DEBUG_HEADERS`, `--debug-headers`) tell
/// about a result: the source's size in bytes and pixels, and the result's size in pixels.
struct DebugFacts: Sendable, Hashable {
    /// The source's bytes (`nil` when they are no longer at hand).
    var originBytes: Int?
    /// The source's stored width and height, from its header.
    var originWidth: Int?
    var originHeight: Int?
    /// The result's width and height.
    var resultWidth: Int
    var resultHeight: Int

    /// Adds `X-Origin-Content-Length`, `X-Origin-Width`, `X-Origin-Height`, `X-Result-Width`
    /// and `X-Result-Height` (the origin ones when known).
    func add(to headers: inout HTTPFields) {
        if let originBytes { headers[.init("X-Origin-Content-Length")!] = String(originBytes) }
        if let originWidth { headers[.init("X-Origin-Width")!] = String(originWidth) }
        if let originHeight { headers[.init("X-Origin-Height")!] = String(originHeight) }
        headers[.init("X-Result-Width")!] = String(resultWidth)
        headers[.init("X-Result-Height")!] = String(resultHeight)
    }
}

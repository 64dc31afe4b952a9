import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Hummingbird
import NIOCore

extension ImageService {
    /// Answers a thumbor `/meta/…` URL: the source's header is read (from the disk cache or a
    /// fetch through the source checks), and ``ThumborMeta`` describes what the URL does to it,
    /// as JSON, or JSONP with `?callback=NAME` (`text/javascript`).
    func metaResponse(_ path: ThumborPath, plan: ImgproxyPath, request: Request) async throws -> Response {
        let data = try await sourceBytes(plan)
        let info = try ImageCodecRegistry.shared.info(for: data, options: DecodingOptions(limits: configuration.decodingLimits))
        // The header's size is upright; without auto-rotation thumbor reads the stored size.
        let turned = !plan.options.autoRotate && [.leftMirrored, .right, .rightMirrored, .left].contains(info.orientation)
        let size = turned ? PixelSize(width: info.height, height: info.width) : PixelSize(width: info.width, height: info.height)
        let callback = request.uri.queryParameters.get("callback")
        // thumbor reads the frames of GIF sources only: any other is one frame to it.
        let frames = info.format == .gif ? info.frameCount : 1
        let text = ThumborMeta(path: path, source: size, trimmed: try await trimmedRect(path, data: data, options: plan.options))
            .text(url: path.image, frames: frames, callback: callback)
        var headers = HTTPFields()
        headers[.contentType] = callback == nil ? "application/json" : "text/javascript"
        headers[.contentLength] = String(text.utf8.count)
        headers[.cacheControl] = plan.options.maxAge.map { $0 > 0 ? "max-age=\($0),public" : "no-cache" } ?? cacheControl
        return Response(status: .ok, headers: headers,
                        body: request.method == .head ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// The rectangle `trim` keeps of the source (its first frame, as stored unless auto-rotated):
    /// the pixels are decoded only when the URL trims.
    private func trimmedRect(_ path: ThumborPath, data: Data, options: ProcessingOptions) async throws -> (x: Int, y: Int, size: PixelSize)? {
        guard let trim = path.trim else { return nil }
        let limits = configuration.decodingLimits, autoRotate = options.autoRotate
        let rect = try await Self.offPool { () throws(AlcedoError) -> TrimmedRect? in
            var image = try ImageCodecRegistry.shared.decode(data, options: DecodingOptions(limits: limits))
            if !autoRotate, image.orientation != .up { image = image.oriented(ImgproxyProcessor.inverse(image.orientation)) }
            let processor = CornerTrimImageProcessor(corner: trim.bottomRight ? .bottomRight : .topLeft, tolerance: trim.tolerance)
            return processor.contentBox(of: image).map { TrimmedRect(x: $0.x, y: $0.y, size: $0.size) }
        }
        return rect.map { ($0.x, $0.y, $0.size) }
    }

    private struct TrimmedRect: Sendable {
        var x: Int, y: Int, size: PixelSize
    }
}

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
        let turned = plan.options.autoRotate && [.leftMirrored, .right, .rightMirrored, .left].contains(info.orientation)
        let size = turned ? PixelSize(width: info.height, height: info.width) : PixelSize(width: info.width, height: info.height)
        let callback = request.uri.queryParameters.get("callback")
        let text = ThumborMeta(path: path, source: size).text(url: path.image, frames: info.frameCount, callback: callback)
        var headers = HTTPFields()
        headers[.contentType] = callback == nil ? "application/json" : "text/javascript"
        headers[.contentLength] = String(text.utf8.count)
        headers[.cacheControl] = plan.options.maxAge.map { $0 > 0 ? "max-age=\($0),public" : "no-cache" } ?? cacheControl
        return Response(status: .ok, headers: headers,
                        body: request.method == .head ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}

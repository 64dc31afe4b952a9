import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Hummingbird
import NIOCore

extension ImageService {
    /// Answers `/info/{signature}/{options}/{source}`: the source's header facts as
    /// `alcedo info --json` prints them (format, size, frames, durations, orientation,
    /// alpha, bytes), with `url` in place of `file`. Signed like image paths. `stages` (default
    /// `nil`) records the source fetch, the source host and the error, as for ``image(path:request:stages:)``.
    public func info(path: String, request: Request, stages: RequestStages? = nil) async -> Response {
        let response: Response
        do {
            let parsed = try parseAndVerify(path)
            stages?.sourceHost = Self.host(of: parsed.sourceURL)
            let data = if let stages { try await stages.stage(.download) { try await sourceBytes(parsed) } } else { try await sourceBytes(parsed) }
            let limits = configuration.decodingLimits
            let info = try ImageCodecRegistry.shared.info(for: data, options: DecodingOptions(limits: limits))
            var object = info.jsonObject(byteCount: data.count)
            object["url"] = parsed.sourceURL
            let json = JSONText.data(object, escapingSlashes: true)
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            headers[.contentLength] = String(json.count)
            headers[.cacheControl] = "public, max-age=\(configuration.ttl)"
            response = Response(status: .ok, headers: headers,
                                body: request.method == .head ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
        } catch {
            let status = logged(ErrorStatus(error))
            stages?.fail(type: ErrorStatus.imgproxyType(of: error), reason: status.reason)
            response = errorResponse(status)
        }
        metrics.recordResponse(status: Int(response.status.code))
        return response
    }

    /// The bytes of a plan's source, from the disk cache or fetched through the source checks
    /// (for answers about the source: imgproxy's `/info`, thumbor's `/meta`).
    func sourceBytes(_ parsed: ImgproxyPath) async throws -> Data {
        let url = try pipeline.sourceGuard.checkSource(parsed.fetchableSourceURL)
        if let cached = try? await pipeline.cache.retrieveDataInDiskCache(forKey: parsed.sourceURL) { return cached.data }
        return try await pipeline.downloader.downloadData(with: url).data
    }
}

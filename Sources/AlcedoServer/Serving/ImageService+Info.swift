import Alcedo
import Foundation
import Hummingbird
import NIOCore

extension ImageService {
    /// Answers `/info/{signature}/{options}/{source}`: the source's header facts as
    /// `alcedo info --json` prints them (format, size, frames, durations, orientation,
    /// alpha, bytes), with `url` in place of `file`. Signed like image paths.
    public func info(path: String, request: Request) async -> Response {
        let response: Response
        do {
            var warnings: [String] = []
            let (parsed, signedPart) = try ImgproxyPath.parse(path, rules: configuration.parsingRules, warnings: &warnings)
            try verifySignature(parsed.signature, signedPart: signedPart)
            let url = try pipeline.sourceGuard.checkSource(parsed.fetchableSourceURL)
            let data: Data
            if let cached = try? await pipeline.cache.retrieveDataInDiskCache(forKey: parsed.sourceURL) {
                data = cached.data
            } else {
                data = try await pipeline.downloader.downloadData(with: url).data
            }
            let limits = configuration.decodingLimits
            let info = try ImageCodecRegistry.shared.info(for: data, options: DecodingOptions(limits: limits))
            var object = info.jsonObject(byteCount: data.count)
            object["url"] = parsed.sourceURL
            let json = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            headers[.contentLength] = String(json.count)
            headers[.cacheControl] = "public, max-age=\(configuration.ttl)"
            response = Response(status: .ok, headers: headers,
                                body: request.method == .head ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
        } catch {
            response = errorResponse(ErrorStatus(error))
        }
        metrics.recordResponse(status: Int(response.status.code))
        return response
    }
}

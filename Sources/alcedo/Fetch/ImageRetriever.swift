import Alcedo
import Foundation

/// Where a retrieved image came from.
enum RetrievalSource: Sendable {
    /// Loaded: downloaded, read from a file or decoded from a `data:` URL.
    case none
    case memory
    case disk

    /// `none`, `memory` or `disk`, as printed and in JSON.
    var name: String {
        switch self {
        case .none: "none"
        case .memory: "memory"
        case .disk: "disk"
        }
    }
}

/// A retrieved, processed image.
struct RetrievedImage: Sendable {
    let image: AlcedoImage
    /// The size before processing, when known.
    let sourceSize: PixelSize?
    let cacheType: RetrievalSource
}

/// How one retrieval treats the caches.
struct RetrievalOptions: Sendable {
    /// Skip the caches and load again.
    var forceRefresh = false
    /// Never load: fail when the image is in neither cache.
    var onlyFromCache = false
}

/// Retrieves targets through the pipeline.
struct ImageRetriever: Sendable {
    func retrieve(_ target: FetchTarget, processor: (any ImageProcessor)?,
                  options: RetrievalOptions) async throws(FetchFailure) -> RetrievedImage {
        let data: Data
        switch target {
        case .network(let url):
            throw FetchFailure("cannot download \(url.absoluteString) in this build")
        case .file(let url):
            do throws(CLIFailure) {
                data = try await Blocking.run { () throws(CLIFailure) in try readFile(url.path) }
            } catch {
                throw FetchFailure("\(error.path): \(error.reason)")
            }
        case .inline(let bytes, _):
            data = bytes
        }
        return try await Blocking.run { () throws(FetchFailure) -> RetrievedImage in
            do throws(AlcedoError) {
                let registry = ImageCodecRegistry.shared
                let info = try registry.info(for: data)
                var options = DecodingOptions()
                if let target = processor?.decodingTarget {
                    options.targetSize = target.size
                    options.contentMode = target.mode
                }
                var image = try registry.decode(data, options: options)
                if let processor { image = try processor.process(image) }
                return RetrievedImage(image: image, sourceSize: PixelSize(width: info.width, height: info.height), cacheType: .none)
            } catch {
                throw FetchFailure(error)
            }
        }
    }
}

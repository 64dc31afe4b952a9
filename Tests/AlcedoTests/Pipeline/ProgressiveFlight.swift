import Foundation
import Testing
@testable import Alcedo

/// One callback-form request of the progressive tests: its task, its result once it comes,
/// the previews read from the task's stream and the progress reports so far.
struct ProgressiveFlight {
    let task: RetrieveImageTask
    let results: Collected<Result<RetrieveImageResult, AlcedoError>>
    let previews: Collected<AlcedoImage>
    let progress: Collected<(Int64, Int64)>
    let reader: Task<Void, Never>

    /// Waits for the end of the previews and for the result.
    func finish() async -> Result<RetrieveImageResult, AlcedoError>? {
        await reader.value
        _ = await eventually { results.values.count == 1 }
        return results.values.first
    }
}

extension PipelineHarness {
    /// Starts retrieving `path` with `options`, reading the task's previews into a list.
    func startProgressive(_ path: String, options: AlcedoOptionsInfo? = nil) -> ProgressiveFlight {
        let results = Collected<Result<RetrieveImageResult, AlcedoError>>()
        let progress = Collected<(Int64, Int64)>()
        let task = manager.retrieveImage(with: server.url(path), options: options,
                                         progressBlock: { progress.append(($0, $1)) }) { results.append($0) }!
        let previews = Collected<AlcedoImage>()
        let reader = Task { for await preview in task.progressiveImages { previews.append(preview) } }
        return ProgressiveFlight(task: task, results: results, previews: previews, progress: progress, reader: reader)
    }

    /// Routes `path` to `sample`, sent one scan at a time as the returned gate allows.
    func routePaced(_ path: String, _ sample: ProgressiveSample) -> PieceGate {
        let gate = PieceGate()
        server.route(path, TestHTTPServer.Response.ok(sample.data, contentType: "image/jpeg")
            .paced(at: sample.scanStarts, gate: gate))
        return gate
    }
}

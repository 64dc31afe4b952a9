import Alcedo
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One image the demo fetches: a sample on the demo server and the processors applied to it.
struct DemoJob: Sendable {
    /// The sample's file name, and the label in tables and on the contact sheet.
    let name: String
    let url: URL
    let processor: any ImageProcessor
    /// The processors in words (`downsample 400x300, round corner 24`).
    let processing: String

    /// The demo's jobs for `samples` served by `server`: every sample once, photos
    /// downsampled (one also rounded, one resized to fill and blurred), the transparent badge
    /// rounded, the animations resized with all their frames, and the first photo a second
    /// time with another processor, so one download serves two processed variants.
    static func all(for samples: [DemoSample], server: DemoHTTPServer) -> [DemoJob] {
        var jobs: [DemoJob] = []
        var photoIndex = 0
        for sample in samples {
            let url = server.url("/" + sample.name)
            let isAnimated = sample.name.hasPrefix("spinner")
            if isAnimated {
                jobs.append(DemoJob(name: sample.name, url: url,
                                    processor: ResizingImageProcessor(referenceSize: PixelSize(width: 96, height: 96), mode: .aspectFit),
                                    processing: "resize 96x96:fit"))
            } else if sample.contentType == "image/png" {
                jobs.append(DemoJob(name: sample.name, url: url,
                                    processor: DownsamplingImageProcessor(size: PixelSize(width: 160, height: 160))
                                        |> RoundCornerImageProcessor(cornerRadius: 40),
                                    processing: "downsample 160x160, round corner 40"))
            } else {
                let downsample = DownsamplingImageProcessor(size: PixelSize(width: 400, height: 300))
                switch photoIndex % 3 {
                case 0:
                    jobs.append(DemoJob(name: sample.name, url: url, processor: downsample, processing: "downsample 400x300"))
                case 1:
                    jobs.append(DemoJob(name: sample.name, url: url, processor: downsample |> RoundCornerImageProcessor(cornerRadius: 24),
                                        processing: "downsample 400x300, round corner 24"))
                default:
                    jobs.append(DemoJob(name: sample.name, url: url,
                                        processor: ResizingImageProcessor(referenceSize: PixelSize(width: 320, height: 240), mode: .aspectFill)
                                            |> BlurImageProcessor(blurRadius: 3),
                                        processing: "resize 320x240:fill, blur 3"))
                }
                photoIndex += 1
            }
        }
        // Next to its first request, so that both are in flight together and share the download.
        if let index = jobs.firstIndex(where: { $0.processing == "downsample 400x300" }) {
            let photo = jobs[index]
            jobs.insert(DemoJob(name: photo.name + " (2)", url: photo.url,
                                processor: DownsamplingImageProcessor(size: PixelSize(width: 200, height: 200))
                                    |> BlurImageProcessor(blurRadius: 6),
                                processing: "downsample 200x200, blur 6"), at: index + 1)
        }
        return jobs
    }
}

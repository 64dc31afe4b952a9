import Alcedo
import AsyncHTTPClient
import Foundation
import Testing

/// `alcedo serve --auto-avif`, `--format-quality` and `--avif-speed`, run as a user runs them.
@Suite("alcedo serve AVIF flags")
struct ServeAVIFFlagsTests {
    /// Starts `alcedo serve` with `arguments` and `environment`, asks for `options` of a JPEG
    /// with `Accept: image/avif,image/webp`, and returns the answer's format and body.
    func answer(_ arguments: [String], environment: [String: String] = [:], options: String = "w:32") async throws -> (ImageFormat, Data) {
        try await ServeProcess.withJPEGOrigin(arguments, environment: environment, options: options) { server, path in
            var request = HTTPClientRequest(url: server.baseURL + path)
            request.headers.add(name: "Accept", value: "image/avif,image/webp,*/*")
            let response = try await ServerHarness.sharedClient.execute(request, timeout: .seconds(300))
            var body = Data()
            for try await chunk in response.body { body.append(contentsOf: chunk.readableBytesView) }
            #expect(response.status.code == 200)
            #expect(response.headers.first(name: "Vary") == "Accept")
            return (ImageFormat.sniff(body), body)
        }
    }

    @Test func autoAVIFFromTheFlagOrTheEnvironmentFlagWins() async throws {
        #expect(try await answer([]).0 == .webp, "off by default")
        #expect(try await answer(["--auto-avif"]).0 == .avif)
        #expect(try await answer([], environment: ["ALCEDO_AUTO_AVIF": "1"]).0 == .avif)
        #expect(try await answer(["--no-auto-avif"], environment: ["ALCEDO_AUTO_AVIF": "true"]).0 == .webp)
    }

    @Test func formatQualityAndSpeedFlags() async throws {
        let tuned = try await answer(["--auto-avif", "--format-quality", "avif=30", "--avif-speed", "10"])
        let explicit = try await answer(["--auto-avif", "--avif-speed", "10"], options: "w:32/q:30")
        #expect(tuned.0 == .avif && tuned.1 == explicit.1, "avif=30 is the quality when the URL sets none")
        let fromEnvironment = try await answer(["--auto-avif"], environment: ["ALCEDO_FORMAT_QUALITY": "avif=30", "ALCEDO_AVIF_SPEED": "10"])
        #expect(fromEnvironment.1 == explicit.1)

        let (badSpeed, speedText) = try ServeCommandTests.runToEnd(["serve", "--port", "0", "--avif-speed", "11"])
        #expect(badSpeed != 0 && speedText.contains("0...10"), "\(speedText)")
        let (badQuality, qualityText) = try ServeCommandTests.runToEnd(["serve", "--port", "0", "--format-quality", "avif=200"])
        #expect(badQuality != 0 && qualityText.contains("1...100"), "\(qualityText)")
        let (badFormat, formatText) = try ServeCommandTests.runToEnd(["serve", "--port", "0", "--format-quality", "svg=50"])
        #expect(badFormat != 0 && formatText.contains("FORMAT=QUALITY"), "\(formatText)")
    }
}

import Alcedo
import AlcedoTestSupport
@testable import AlcedoServer
import Foundation
import Logging
import Synchronization
import Testing

/// `/metrics` read by the Prometheus Python client's own parser, as a Prometheus server would.
enum PrometheusParser {
    struct Family: Decodable {
        struct Sample: Decodable {
            let name: String
            let labels: [String: String]
            let value: Double?
        }
        let name: String
        let type: String
        let documentation: String
        let samples: [Sample]
    }

    enum Failure: Error, CustomStringConvertible {
        case refused(String)
        var description: String {
            switch self { case .refused(let message): "the Prometheus parser refused the text: \(message)" }
        }
    }

    /// The families of `text`, parsed by `prometheus_client.parser.text_string_to_metric_families`.
    static func families(_ text: String) throws -> [String: Family] {
        let process = Process()
        process.executableURL = MotoS3Server.python
        process.arguments = [MotoS3Server.repositoryRoot.appendingPathComponent("scripts/prometheus-text-families.py").path]
        let input = Pipe(), output = Pipe(), error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try ProcessLaunch.run(process)
        let writer = Thread {
            input.fileHandleForWriting.write(Data(text.utf8))
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let message = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failure.refused(message) }
        let list = try JSONDecoder().decode([Family].self, from: data)
        return Dictionary(list.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }
}

/// Collects the stages an observer is told of.
final class CollectingObserver: RequestStageObserver {
    let started = Mutex<[String]>([])
    let ended = Mutex<[StageRecord]>([])
    let requestIDs = Mutex<Set<String>>([])

    func stageStarted(_ name: StageName, at start: ContinuousClock.Instant, request: RequestStages) {
        started.withLock { $0.append(name.rawValue) }
        requestIDs.withLock { _ = $0.insert(request.requestID) }
    }

    func stageEnded(_ record: StageRecord, request: RequestStages) {
        ended.withLock { $0.append(record) }
    }
}

@Suite("Request stages, imgproxy's log formats and metric names")
struct ObservabilityTests {
    // MARK: Log lines

    static let date = Date(timeIntervalSince1970: 1_767_225_600 + 3_723)   // 2026-01-01 01:02:03 UTC

    @Test("json and gcp lines decode with imgproxy's keys; numbers stay numbers; error comes last")
    func jsonLines() throws {
        let metadata: Logger.Metadata = ["error": "bad \"thing\"\n", "status": .stringConvertible(404), "request_id": "abc",
                                          "stages": .dictionary(["decode": .stringConvertible(0.5)])]
        let json = ImgproxyLogHandler.line(format: .json, level: .warning, message: "Completed in 1ms /x", metadata: metadata, date: Self.date)
        #expect(json.hasSuffix("}\n"))
        #expect(json.hasPrefix("{\"time\":\"2026-01-01T01:02:03Z\",\"level\":\"WARNING\",\"msg\":\"Completed in 1ms /x\",\"request_id\":\"abc\","))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["status"] as? Int == 404)
        #expect(object["error"] as? String == "bad \"thing\"\n")
        #expect((object["stages"] as? [String: Any])?["decode"] as? Double == 0.5)
        #expect(json.range(of: "\"error\"")!.lowerBound > json.range(of: "\"stages\"")!.lowerBound)

        let gcp = ImgproxyLogHandler.line(format: .gcp, level: .error, message: "m", metadata: [:], date: Self.date)
        let gcpObject = try #require(try JSONSerialization.jsonObject(with: Data(gcp.utf8)) as? [String: Any])
        #expect(gcpObject["severity"] as? String == "ERROR")
        #expect(gcpObject["message"] as? String == "m")
        #expect(gcpObject["level"] == nil && gcpObject["msg"] == nil)
        #expect(gcpObject["time"] as? String == "2026-01-01T01:02:03Z")
    }

    @Test("structured lines are key=value with quoted strings, bare numbers and dotted groups; pretty lines colour the level")
    func textLines() {
        let metadata: Logger.Metadata = ["status": .stringConvertible(200), "request_id": "abc", "path": "/a b",
                                         "stages": .dictionary(["download": .stringConvertible(0.25)])]
        let structured = ImgproxyLogHandler.line(format: .structured, level: .info, message: "Completed in 1ms", metadata: metadata, date: Self.date)
        #expect(structured == "time=\"2026-01-01 01:02:03\" level=\"INFO\" msg=\"Completed in 1ms\" request_id=\"abc\" path=\"/a b\" status=200 stages.download=0.25\n")
        let pretty = ImgproxyLogHandler.line(format: .pretty, level: .info, message: "hi", metadata: ["request_id": "abc", "path": "/a b"], date: Self.date)
        #expect(pretty == "2026-01-01 01:02:03 \u{1B}[1;32m[INF]\u{1B}[0m hi \u{1B}[32mrequest_id\u{1B}[0m=abc \u{1B}[32mpath\u{1B}[0m=\"/a b\"\n")
        #expect(ImgproxyLogHandler.goQuoted("a\u{01}\"\\") == "\"a\\x01\\\"\\\\\"")
    }

    @Test("durations as Go writes them")
    func goDurations() {
        #expect(ImgproxyLogHandler.goDuration(.nanoseconds(850)) == "850ns")
        #expect(ImgproxyLogHandler.goDuration(.microseconds(850)) == "850µs")
        #expect(ImgproxyLogHandler.goDuration(.nanoseconds(12_345_678)) == "12.345678ms")
        #expect(ImgproxyLogHandler.goDuration(.milliseconds(1500)) == "1.5s")
        #expect(ImgproxyLogHandler.goDuration(.zero) == "0s")
    }

    @Test("request ids: a valid client id is kept, another replaced by a 21-character nanoid")
    func requestIDs() {
        #expect(RequestID.accept("abc-DEF_123") == "abc-DEF_123")
        let made = RequestID.accept("no spaces allowed")
        #expect(made.utf8.count == 21 && RequestID.isValid(made))
        #expect(RequestID.accept(nil) != RequestID.accept(nil))
        #expect(!RequestID.isValid(String(repeating: "a", count: 129)))
    }

    @Test("logged paths lose the signature segment")
    func pathsWithoutSignature() {
        #expect(ImageService.pathWithoutSignature("/SIG/rs:fit:10:10/plain/http://h/a.jpg") == "/rs:fit:10:10/plain/http://h/a.jpg")
        #expect(ImageService.pathWithoutSignature("/info/SIG/plain/http://h/a.jpg") == "/info/plain/http://h/a.jpg")
        #expect(ImageService.pathWithoutSignature("/unsafe/300x200/h/a.jpg") == "/300x200/h/a.jpg")
        #expect(ImageService.host(of: "http://user@example.com:8080/a.jpg") == "example.com:8080")
        #expect(ImageService.host(of: "local:///a.jpg") == nil)
    }

    // MARK: Stages in process

    @Test("a resize request's stages reach the observer and carry the request id; the tier and source host are kept")
    func stagesOfAResize() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 200, height: 150), contentType: "image/jpeg"))
        let observer = CollectingObserver()
        let server = try await ServerHarness.start { $0.stageObserver = observer }
        let reply = try await server.request(server.path(origin.url("/a.jpg"), "rs:fit:50:50"), headers: [("X-Request-ID", "resize-1")])
        await server.stop()
        #expect(reply.status == 200)
        #expect(reply.header("X-Request-ID") == "resize-1")
        let ended = observer.ended.withLock { $0 }
        let names = Set(ended.map(\.name.rawValue))
        for stage in ["queue", "cache_memory", "cache_disk", "download", "decode", "process:resize", "encode", "store"] {
            #expect(names.contains(stage), "stages: \(names.sorted())")
        }
        #expect(!names.contains("process"), "each processing step is timed apart: \(names.sorted())")
        let encode = try #require(ended.first { $0.name == .encode })
        #expect(encode.attributes.contains { $0 == ("format", "jpeg") })
        #expect(observer.requestIDs.withLock { $0 } == ["resize-1"])
        let download = try #require(ended.first { $0.name == .download })
        #expect(download.attributes.contains { $0 == ("origin_status", "200") })
        #expect(download.attributes.contains { $0.0 == "bytes" && Int($0.1) ?? 0 > 0 })
        #expect(ended.allSatisfy { $0.end >= $0.start })

        let stages = RequestStages(requestID: "x")
        let value = await stages.stage(.encode, attributes: [("format", "jpeg")]) { 42 }
        #expect(value == 42)
        await #expect(throws: ErrorStatus.Thrown.self) {
            try await stages.stage(.decode) { throw ErrorStatus.Thrown(status: .queueFull) }
        }
        #expect(stages.records.map(\.name) == [.encode, .decode])
        #expect(stages.records.last?.error != nil)
    }

    @Test("a result store's lookup is a stage of its own (cache_result_store, with hit), apart from the disk cache's")
    func resultStoreLookupIsAStage() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 200, height: 150), contentType: "image/jpeg"))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-stage-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let observer = CollectingObserver()
        let server = try await ServerHarness.start {
            $0.stageObserver = observer
            $0.resultStore = ObjectStoreTier(store: FolderObjectStore(root: folder), kind: .results)
        }
        let reply = try await server.request(server.path(origin.url("/a.jpg"), "rs:fit:40:40"))
        await server.stop()
        #expect(reply.status == 200)
        let ended = observer.ended.withLock { $0 }
        let lookup = try #require(ended.first { $0.name == .cacheResultStore }, "stages: \(ended.map(\.name.rawValue))")
        #expect(lookup.attributes.contains { $0 == ("hit", "false") })
        #expect(!ended.contains { $0.name == .cacheSourceStore }, "there is no source store")
    }

    @Test("every answer carries an X-Request-ID, as imgproxy's: /health, /metrics and unknown paths too")
    func requestIDOnEveryAnswer() async throws {
        let server = try await ServerHarness.start()
        let health = try await server.request("/health", headers: [("X-Request-ID", "health-1")])
        let metrics = try await server.request("/metrics")
        let invalid = try await server.request("/health", headers: [("X-Request-ID", "not valid!")])
        await server.stop()
        #expect(health.status == 200)
        #expect(health.header("X-Request-ID") == "health-1")
        #expect(metrics.status == 200)
        #expect(metrics.header("X-Request-ID")?.utf8.count == 21)
        #expect(invalid.header("X-Request-ID").map(RequestID.isValid) == true)
        #expect(invalid.header("X-Request-ID") != "not valid!")
    }

    @Test("info requests and secret refusals are counted and carry a request id; their errors are typed")
    func infoAndSecret() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 40, height: 30), contentType: "image/jpeg"))
        let server = try await ServerHarness.start { $0.secret = "s3cret" }
        let source = origin.url("/a.jpg").absoluteString
        let refused = try await server.request("/insecure/w:10/plain/" + source)
        #expect(refused.status == 403)
        #expect(refused.header("X-Request-ID")?.utf8.count == 21)
        let info = try await server.request("/info/insecure/plain/" + source, headers: [("Authorization", "Bearer s3cret"), ("X-Request-ID", "info-1")])
        #expect(info.status == 200)
        #expect(info.header("X-Request-ID") == "info-1")
        let families = try PrometheusParser.families(server.service.metrics.text())
        await server.stop()
        #expect(families["requests"]?.samples.first { $0.name == "requests_total" }?.value == 2)
        #expect(families["errors"]?.samples.contains { $0.labels["type"] == "security" && $0.value == 1 } == true)
        #expect(families["request_span_duration_seconds"]?.samples.contains {
            $0.labels["span"] == "downloading_source_image" && $0.name.hasSuffix("_count") && $0.value == 1
        } == true)
    }

    // MARK: The release binary

    static func jpegOrigin() async throws -> TestHTTPServer {
        let origin = try await TestHTTPServer.start()
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 320, height: 240), contentType: "image/jpeg"))
        return origin
    }

    static func logFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-log-\(UUID().uuidString).txt")
    }

    /// The lines of `file` once one contains `needle` (waits up to 5 s for the write).
    static func lines(of file: URL, containing needle: String) async throws -> [String] {
        for _ in 0..<50 {
            let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
            let lines = text.split(separator: "\n").map(String.init)
            if lines.contains(where: { $0.contains(needle) }) { return lines }
            try await Task.sleep(for: .milliseconds(100))
        }
        return []
    }

    /// Whether a decoded log line is an access line (`Completed in …`), not a `Started …` line.
    static func isCompletedLine(_ object: [String: Any]) -> Bool {
        (object["msg"] as? String)?.hasPrefix("Completed in ") == true
    }

    @Test("IMGPROXY_LOG_FORMAT=json: one access line per request with imgproxy's keys and Alcedo's fields")
    func jsonAccessLines() async throws {
        let origin = try await Self.jpegOrigin()
        defer { origin.stop() }
        let log = Self.logFile()
        defer { try? FileManager.default.removeItem(at: log) }
        let server = try await ServeProcess.start([], environment: ["IMGPROXY_LOG_FORMAT": "json"], standardError: log)
        defer { server.stop() }
        let source = origin.url("/a.jpg").absoluteString
        let ok = try await OneShotClient().get(server.baseURL + "/insecure/rs:fit:64:64/plain/" + source, headers: ["X-Request-ID": "json-ok"])
        #expect(ok.status == 200)
        #expect(ok.headers["x-request-id"] == "json-ok")
        let missing = try await OneShotClient().get(server.baseURL + "/insecure/rs:fit:64:64/plain/" + origin.url("/none.jpg").absoluteString)
        #expect(missing.status == 404)
        let generated = try #require(missing.headers["x-request-id"])
        #expect(generated.utf8.count == 21)

        let lines = try await Self.lines(of: log, containing: generated)
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.count == lines.count, "every line is JSON: \(lines)")
        let good = try #require(objects.first { $0["request_id"] as? String == "json-ok" && Self.isCompletedLine($0) })
        // imgproxy's `Started PATH` line comes first, with the client's address.
        let started = try #require(objects.first { $0["request_id"] as? String == "json-ok" })
        #expect(started["msg"] as? String == "Started /rs:fit:64:64/plain/" + source)
        #expect(started["method"] as? String == "GET")
        #expect(started["client_ip"] as? String == "127.0.0.1")
        #expect(good["client_ip"] as? String == "127.0.0.1")
        #expect(good["level"] as? String == "INFO")
        #expect((good["msg"] as? String)?.hasPrefix("Completed in ") == true)
        #expect(good["method"] as? String == "GET")
        #expect(good["path"] as? String == "/rs:fit:64:64/plain/" + source, "no signature segment")
        #expect(good["status"] as? Int == 200)
        #expect(good["bytes"] as? Int == ok.body.count)
        #expect((good["duration"] as? Double ?? 0) > 0)
        #expect(good["cache"] as? String == "source")
        #expect(good["source_host"] as? String == "127.0.0.1:\(origin.port)")
        let stages = try #require(good["stages"] as? [String: Any])
        for stage in ["queue", "download", "decode", "process:resize", "encode"] { #expect((stages[stage] as? Double ?? -1) >= 0, "\(stages)") }
        #expect((good["time"] as? String)?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/) != nil)

        let bad = try #require(objects.first { $0["request_id"] as? String == generated && Self.isCompletedLine($0) })
        #expect(bad["level"] as? String == "WARNING")
        #expect(bad["status"] as? Int == 404)
        #expect(bad["error_type"] as? String == "download")
        #expect((bad["error"] as? String)?.contains("404") == true)
    }

    @Test("IMGPROXY_LOG_FORMAT=gcp and structured: Cloud Logging's keys; key=value lines")
    func gcpAndStructuredLines() async throws {
        let origin = try await Self.jpegOrigin()
        defer { origin.stop() }
        let source = origin.url("/a.jpg").absoluteString
        for format in ["gcp", "structured"] {
            let log = Self.logFile()
            defer { try? FileManager.default.removeItem(at: log) }
            let server = try await ServeProcess.start([], environment: ["IMGPROXY_LOG_FORMAT": format], standardError: log)
            defer { server.stop() }
            let reply = try await OneShotClient().get(server.baseURL + "/insecure/w:32/plain/" + source, headers: ["X-Request-ID": "fmt-\(format)"])
            #expect(reply.status == 200)
            let lines = try await Self.lines(of: log, containing: "fmt-\(format)")
            let line = try #require(lines.first { $0.contains("fmt-\(format)") && $0.contains("Completed in") })
            if format == "gcp" {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                #expect(object["severity"] as? String == "INFO")
                #expect((object["message"] as? String)?.hasPrefix("Completed in ") == true)
                #expect(object["status"] as? Int == 200)
            } else {
                #expect(line.wholeMatch(of: /time="\d{4}-\d\d-\d\d \d\d:\d\d:\d\d" level="INFO" msg="Completed in [^"]+" request_id="fmt-structured" method="GET" path="\/w:32\/plain\/[^"]+" status=200 bytes=\d+ duration=[0-9.e-]+ cache="source" source_host="[^"]+".*/) != nil, "\(line)")
            }
        }
    }

    @Test("an unknown IMGPROXY_LOG_FORMAT is refused with the names it may take")
    func unknownLogFormat() throws {
        let (status, text) = try ServeCommandTests.runToEnd(["serve", "--port", "0", "--print-config"], environment: ["IMGPROXY_LOG_FORMAT": "xml"])
        #expect(status != 0)
        #expect(text.contains("IMGPROXY_LOG_FORMAT") && text.contains("pretty, structured, json or gcp"), "\(text)")
    }

    @Test("/metrics parses with the Prometheus parser and has imgproxy's names, labels and types, with and without a namespace")
    func imgproxyMetricNames() async throws {
        let origin = try await Self.jpegOrigin()
        defer { origin.stop() }
        let source = origin.url("/a.jpg").absoluteString
        for namespace in ["", "imgproxy"] {
            let server = try await ServeProcess.start([], environment: namespace.isEmpty ? [:] : ["IMGPROXY_PROMETHEUS_NAMESPACE": namespace])
            defer { server.stop() }
            let client = OneShotClient()
            #expect(try await client.get(server.baseURL + "/insecure/rs:fit:64:64/plain/" + source).status == 200)
            #expect(try await client.get(server.baseURL + "/insecure/rs:fit:64:64/plain/" + source).status == 200)
            #expect(try await client.get(server.baseURL + "/insecure/rs:fit:abc:64/plain/" + source).status == 400)
            let text = String(decoding: try await client.get(server.baseURL + "/metrics").body, as: UTF8.self)
            let families = try PrometheusParser.families(text)
            let prefix = namespace.isEmpty ? "" : namespace + "_"
            // The parser names counters without `_total`.
            let expected: [(String, String)] = [
                ("requests", "counter"), ("status_codes", "counter"), ("errors", "counter"),
                ("request_duration_seconds", "histogram"), ("request_span_duration_seconds", "histogram"),
                ("workers", "gauge"), ("requests_in_progress", "gauge"), ("images_in_progress", "gauge"),
                ("workers_utilization", "gauge"), ("download_duration_seconds", "histogram"),
                ("processing_duration_seconds", "histogram"), ("buffer_size_bytes", "histogram"),
            ]
            for (name, type) in expected {
                let family = try #require(families[prefix + name], "\(prefix + name) in \(families.keys.sorted())")
                #expect(family.type == type, "\(prefix + name)")
            }
            #expect(families[prefix + "requests"]?.documentation == "A counter of the total number of HTTP requests imgproxy processed.")
            let requests = families[prefix + "requests"]?.samples.first { $0.name == prefix + "requests_total" }?.value
            #expect(requests == 3)
            let statuses = families[prefix + "status_codes"]?.samples.filter { $0.name.hasSuffix("_total") } ?? []
            #expect(statuses.first { $0.labels["status"] == "200" }?.value == 2)
            #expect(statuses.contains { $0.labels["status"] != "200" })
            #expect(families[prefix + "errors"]?.samples.contains { $0.labels["type"] == "path_parsing" && $0.value == 1 } == true)
            let spans = Set(families[prefix + "request_span_duration_seconds"]?.samples.compactMap { $0.labels["span"] } ?? [])
            #expect(spans.isSuperset(of: ["queue", "downloading_source_image", "processing_image"]))
            let buckets = families[prefix + "request_duration_seconds"]?.samples.compactMap { $0.labels["le"] } ?? []
            #expect(buckets == ["0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1.0", "2.5", "5.0", "10.0", "+Inf"])
            let downloads = families[prefix + "buffer_size_bytes"]?.samples.first { $0.name.hasSuffix("_count") }
            #expect(downloads?.labels["type"] == "download" && downloads?.value == 1)
            #expect(families[prefix + "workers"]?.samples.first?.value ?? 0 >= 1)
            // Alcedo's own families stay, and its stage histogram has the resize's stages.
            #expect(families["alcedo_requests"]?.type == "counter")
            let stages = Set(families["alcedo_request_stage_duration_seconds"]?.samples.compactMap { $0.labels["stage"] } ?? [])
            #expect(stages.isSuperset(of: ["queue", "download", "decode"]), "\(stages)")
            if !namespace.isEmpty { #expect(families["requests"] == nil) }
            if namespace.isEmpty { try Self.checkDashboard(against: families) }
        }
    }

    /// Every `alcedo_*` series contrib/grafana's dashboard queries is one the server exports
    /// (but the shared tier's and the workers', which need Redis or --processes).
    static func checkDashboard(against families: [String: PrometheusParser.Family]) throws {
        let url = MotoS3Server.repositoryRoot.appendingPathComponent("contrib/grafana/alcedo-dashboard.json")
        let dashboard = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        #expect(panels.count >= 8)
        let exported = Set(families.values.flatMap { $0.samples.map(\.name) })
        var queried: Set<String> = []
        for panel in panels {
            for target in panel["targets"] as? [[String: Any]] ?? [] {
                let expr = try #require(target["expr"] as? String)
                for match in expr.matches(of: /alcedo_[a-z_]+/) { queried.insert(String(match.output)) }
            }
        }
        #expect(queried.count >= 15)
        for name in queried.sorted() where !name.hasPrefix("alcedo_shared_cache_") && name != "alcedo_worker_scrape_failures" {
            #expect(exported.contains(name), "the dashboard queries \(name), which /metrics does not have")
        }
    }

    @Test("--no-imgproxy-metrics leaves only Alcedo's own families; IMGPROXY_PROMETHEUS_NAMESPACE=alcedo is refused")
    func switchedOff() async throws {
        let server = try await ServeProcess.start(["--no-imgproxy-metrics"])
        defer { server.stop() }
        let text = String(decoding: try await OneShotClient().get(server.baseURL + "/metrics").body, as: UTF8.self)
        let families = try PrometheusParser.families(text)
        #expect(families.keys.allSatisfy { $0.hasPrefix("alcedo_") }, "\(families.keys.sorted())")
        #expect(families["alcedo_request_stage_duration_seconds"] == nil)

        let (status, message) = try ServeCommandTests.runToEnd(["serve", "--port", "0", "--prometheus-namespace", "alcedo"])
        #expect(status != 0)
        #expect(message.contains("alcedo_requests_total"))
    }

    @Test("--processes 2: the merged /metrics still parses, each imgproxy series labelled by worker")
    func workersMerged() async throws {
        let origin = try await Self.jpegOrigin()
        defer { origin.stop() }
        let server = try await ServeProcess.start(["--processes", "2", "--concurrency", "2", "--max-memory", "512"],
                                                  environment: ["IMGPROXY_PROMETHEUS_NAMESPACE": "img"])
        defer { server.stop() }
        let client = OneShotClient()
        for size in 30..<34 {
            #expect(try await client.get(server.baseURL + "/insecure/w:\(size)/plain/" + origin.url("/a.jpg").absoluteString).status == 200)
        }
        let text = String(decoding: try await client.get(server.baseURL + "/metrics").body, as: UTF8.self)
        let families = try PrometheusParser.families(text)
        let requests = try #require(families["img_requests"]).samples.filter { $0.name == "img_requests_total" }
        #expect(Set(requests.compactMap { $0.labels["worker"] }) == ["0", "1"])
        #expect(requests.compactMap(\.value).reduce(0, +) == 4)
        let spans = try #require(families["img_request_span_duration_seconds"]).samples
        #expect(spans.allSatisfy { $0.labels["worker"] != nil && $0.labels["span"] != nil })
        #expect(families["img_workers"]?.samples.count == 2)
    }
}

import AlcedoTestSupport
import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Testing

/// Request traces from `alcedo serve` built with the OpenTelemetry trait, received by a real
/// OTLP receiver (scripts/otlp-receiver.py: the OpenTelemetry project's protobuf definitions
/// from PyPI, over OTLP/HTTP and OTLP/gRPC). `make test-otel` builds that binary as `make
/// release OTEL=1` does and names it in `ALCEDO_OTEL_BINARY`; without it these tests are skipped
/// (the binary without the trait is tested below: it warns and sends nothing).
@Suite(.serialized) struct OpenTelemetryExportTests {
    static let otelBinary: URL? = ProcessInfo.processInfo.environment["ALCEDO_OTEL_BINARY"]
        .flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }

    static let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let parentSpanID = "00f067aa0ba902b7"

    @Test(.enabled(if: otelBinary != nil, "ALCEDO_OTEL_BINARY names no binary: run make test-otel"))
    func serverSpanJoinsTheClientTraceOverOTLPHTTP() async throws {
        try await withTracedServer(environment: ["IMGPROXY_OPEN_TELEMETRY_PROPAGATE_EXTERNAL": "true",
                                                 "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
                                                 "OTEL_SERVICE_NAME": "alcedo-under-test"],
                                   transport: .http) { spans, origin, requestID in
            let server = try #require(spans.first { $0.kind == "SERVER" }, "\(spans)")
            #expect(server.name == "GET /{signature}/{options}/{source}")
            #expect(server.transport == "http")
            #expect(server.service == "alcedo-under-test")
            #expect(server.traceID == Self.traceID)
            #expect(server.parentSpanID == Self.parentSpanID)
            #expect(server.attributes["http.response.status_code"] == "200")
            #expect(server.attributes["http.request.method"] == "GET")
            #expect(server.endNanoseconds > server.startNanoseconds)
            // The stages are child spans of the server span, with their attributes.
            let children = Self.spans(in: spans, childrenOf: server.spanID)
            let names = Set(children.map(\.name))
            #expect(names.isSuperset(of: ["queue", "download", "decode", "process:resize", "encode"]), "\(names)")
            #expect(Self.attribute("alcedo.origin_status", ofSpansNamed: "download", in: children) == ["200"])
            #expect(server.attributes["alcedo.request_id"] == requestID)
            #expect(Self.attribute("alcedo.request_id", ofSpansNamed: "decode", in: children) == [requestID])
            var outside: [String] = []
            for child in children where child.startNanoseconds + 1_000_000 < server.startNanoseconds
                || child.endNanoseconds > server.endNanoseconds + 1_000_000 { outside.append(child.name) }
            #expect(outside.isEmpty, "stage spans outside the request's span: \(outside)")
            // Every span of the request is in the client's trace and descends from the server span.
            let ids = Set(spans.map(\.spanID))
            for span in spans where span.kind != "SERVER" {
                #expect(span.traceID == Self.traceID, "\(span.name)")
                #expect(ids.contains(span.parentSpanID), "\(span.name) has no parent among the request's spans")
            }
            // The origin saw the trace context: the same trace, a span of this request as parent.
            let sent = try #require(origin.first?.headers.first(name: "traceparent"), "no traceparent reached the origin")
            let parts = sent.split(separator: "-").map(String.init)
            #expect(parts.count == 4 && parts[1] == Self.traceID)
            #expect(parts.count == 4 && ids.contains(parts[2]))
        }
    }

    @Test(.enabled(if: otelBinary != nil, "ALCEDO_OTEL_BINARY names no binary: run make test-otel"))
    func clientTraceIsIgnoredUnlessPropagationIsOnAndGRPCIsTheDefault() async throws {
        // No protocol named: imgproxy's default, gRPC.
        try await withTracedServer(environment: [:], transport: .grpc) { spans, _, _ in
            let server = try #require(spans.first { $0.kind == "SERVER" }, "\(spans)")
            #expect(server.transport == "grpc")
            #expect(server.service == "alcedo")
            #expect(server.traceID != Self.traceID)
            #expect(server.parentSpanID.isEmpty)
        }
    }

    @Test(.enabled(if: otelBinary != nil, "ALCEDO_OTEL_BINARY names no binary: run make test-otel"))
    func imgproxy3NamesStillWork() async throws {
        try await withTracedServer(environment: ["IMGPROXY_OPEN_TELEMETRY_PROTOCOL": "http",
                                                 "IMGPROXY_OPEN_TELEMETRY_SERVICE_NAME": "legacy-name"],
                                   transport: .http, legacyEndpoint: true) { spans, _, _ in
            let server = try #require(spans.first { $0.kind == "SERVER" }, "\(spans)")
            #expect(server.transport == "http")
            #expect(server.service == "legacy-name")
        }
    }

    /// The shipped binary (no trait) names the setting in a warning and serves as usual.
    @Test func binaryWithoutTheTraitWarnsAndServes() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 64, height: 48), contentType: "image/jpeg"))
        let check = try AlcedoBinary.run(["--version"])
        try #require(!check.stdout.contains("OpenTelemetry"), "the binary under test has the OpenTelemetry trait")
        let (server, errors) = try await Self.startServe(executable: AlcedoBinary.url,
                                                         environment: ["IMGPROXY_OPEN_TELEMETRY_ENABLE": "true"])
        let reply = try await Self.get(server.baseURL + "/insecure/rs:fit:32:32/plain/" + origin.url("/a.jpg").absoluteString)
        #expect(reply.status == 200)
        server.stop()
        let text = errors()
        #expect(text.contains("IMGPROXY_OPEN_TELEMETRY_ENABLE: this alcedo was built without the OpenTelemetry trait"), "\(text)")
        #expect(!text.contains("not supported, and are ignored: IMGPROXY_OPEN_TELEMETRY"), "\(text)")
    }

    // MARK: - Harness

    /// The spans whose parent is `parent`.
    static func spans(in spans: [ReceivedSpan], childrenOf parent: String) -> [ReceivedSpan] {
        var children: [ReceivedSpan] = []
        for span in spans where span.parentSpanID == parent { children.append(span) }
        return children
    }

    /// The values of `key` on the spans named `name`.
    static func attribute(_ key: String, ofSpansNamed name: String, in spans: [ReceivedSpan]) -> [String] {
        var values: [String] = []
        for span in spans where span.name == name {
            if let value = span.attributes[key] { values.append(value) }
        }
        return values
    }

    enum Transport { case http, grpc }

    struct ReceivedSpan: CustomStringConvertible {
        let transport, service, traceID, spanID, parentSpanID, name, kind, status: String
        let startNanoseconds, endNanoseconds: UInt64
        let attributes: [String: String]
        var description: String { "\(kind) \(name)" }
    }

    /// Starts the receiver, an origin and the traced server; sends one request with a
    /// `traceparent`; waits for its spans, and runs `body` with them and the origin's requests.
    func withTracedServer(environment: [String: String], transport: Transport, legacyEndpoint: Bool = false,
                          _ body: ([ReceivedSpan], [TestHTTPServer.Request], String) async throws -> Void) async throws {
        let binary = try #require(Self.otelBinary)
        let receiver = try await OTLPReceiver.start()
        defer { receiver.stop() }
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        origin.route("/a.jpg", .ok(TestImages.jpeg(width: 64, height: 48), contentType: "image/jpeg"))
        var settings = environment
        settings["IMGPROXY_OPEN_TELEMETRY_ENABLE"] = "true"
        settings["OTEL_BSP_SCHEDULE_DELAY"] = "50"
        let port = transport == .http ? receiver.httpPort : receiver.grpcPort
        if legacyEndpoint { settings["IMGPROXY_OPEN_TELEMETRY_ENDPOINT"] = "127.0.0.1:\(port)" }
        else { settings["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:\(port)" }
        let (server, errors) = try await Self.startServe(executable: binary, environment: settings)
        defer { server.stop() }
        let reply = try await Self.get(server.baseURL + "/insecure/rs:fit:32:32/plain/" + origin.url("/a.jpg").absoluteString,
                                       headers: ["traceparent": "00-\(Self.traceID)-\(Self.parentSpanID)-01"])
        #expect(reply.status == 200)
        var spans: [ReceivedSpan] = []
        for _ in 0..<100 {
            spans = receiver.spans()
            if spans.contains(where: { $0.kind == "SERVER" }) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        // Stage spans end before the server span; give late batches a moment.
        try await Task.sleep(for: .milliseconds(300))
        spans = receiver.spans()
        #expect(!spans.isEmpty, "no spans arrived; server log: \(errors())")
        try await body(spans, origin.requests("/a.jpg"), reply.headers["x-request-id"] ?? "")
    }

    static func startServe(executable: URL, environment: [String: String]) async throws -> (ServeProcess, () -> String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-otel-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let server = try await ServeProcess.start([], environment: environment, executable: executable, standardError: log)
        return (server, { (try? String(contentsOf: log, encoding: .utf8)) ?? "" })
    }

    static func get(_ url: String, headers: [String: String] = [:]) async throws -> (status: Int, headers: [String: String], body: Data) {
        var request = HTTPClientRequest(url: url)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await ServerHarness.sharedClient.execute(request, timeout: .seconds(300))
        var body = Data()
        for try await chunk in response.body { body.append(contentsOf: chunk.readableBytesView) }
        var fields: [String: String] = [:]
        for (name, value) in response.headers { fields[name.lowercased()] = value }
        return (Int(response.status.code), fields, body)
    }
}

/// scripts/otlp-receiver.py in the test environment, on free loopback ports.
final class OTLPReceiver: Sendable {
    let process: Process
    let httpPort: Int
    let grpcPort: Int
    let output: URL

    private init(process: Process, httpPort: Int, grpcPort: Int, output: URL) {
        self.process = process
        self.httpPort = httpPort
        self.grpcPort = grpcPort
        self.output = output
    }

    static func start() async throws -> OTLPReceiver {
        let python = MotoS3Server.python
        try #require(FileManager.default.isExecutableFile(atPath: python.path),
                     "no \(python.path): run scripts/install-s3-test-tools.sh (make test does)")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-spans-\(UUID().uuidString).jsonl")
        let process = Process()
        process.executableURL = python
        process.arguments = [MotoS3Server.repositoryRoot.appendingPathComponent("scripts/otlp-receiver.py").path, "--out", output.path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try ProcessLaunch.run(process)
        guard let line = try await ServeCommandTests.readLine(out.fileHandleForReading),
              let match = line.wholeMatch(of: /ready http=(\d+) grpc=(\d+)/),
              let http = Int(match.1), let grpc = Int(match.2) else {
            process.terminate()
            throw OTLPReceiverError()
        }
        return OTLPReceiver(process: process, httpPort: http, grpcPort: grpc, output: output)
    }

    struct OTLPReceiverError: Error, CustomStringConvertible {
        var description: String { "the OTLP receiver did not start" }
    }

    func spans() -> [OpenTelemetryExportTests.ReceivedSpan] {
        guard let text = try? String(contentsOf: output, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            func string(_ key: String) -> String { (object[key] as? String) ?? "" }
            func number(_ key: String) -> UInt64 { (object[key] as? NSNumber)?.uint64Value ?? 0 }
            let attributes = ((object["attributes"] as? [String: Any]) ?? [:]).mapValues { "\($0)" }
            return .init(transport: string("transport"), service: string("service"), traceID: string("trace_id"),
                         spanID: string("span_id"), parentSpanID: string("parent_span_id"), name: string("name"),
                         kind: string("kind"), status: string("status"), startNanoseconds: number("start_ns"),
                         endNanoseconds: number("end_ns"), attributes: attributes)
        }
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            for _ in 0..<50 where process.isRunning { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: output)
    }
}

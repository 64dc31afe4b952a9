import AlcedoTestSupport
import Foundation
import Testing
@testable import Alcedo

/// `s3://` sources through the ImageManager, against moto's S3 server on loopback with
/// authentication on (``MotoS3Server``).
@Suite("S3 sources")
struct S3ImageDataLoaderTests {
    static func image(_ width: Int, _ height: Int, format: ImageFormat = .png) -> Data {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for index in stride(from: 0, to: pixels.count, by: 4) { pixels[index] = UInt8(index / 4 % 251) }
        return try! ImageCodecRegistry.shared.encode(AlcedoImage(width: width, height: height, pixels: pixels), as: format)
    }

    static let objects: [MotoS3Server.Object] = [
        .init(bucket: "photos", key: "cat.png", data: image(40, 30), contentType: "image/png"),
        .init(bucket: "photos", key: "dir/a b é.png", data: image(12, 10), contentType: "image/png"),
        .init(bucket: "photos", key: "100% c+d.jpg", data: image(16, 8, format: .jpeg), contentType: "image/jpeg"),
        .init(bucket: "photos", key: "fresh.png", data: image(64, 48)),
        .init(bucket: "photos", key: "checked.png", data: image(20, 20), cacheControl: "no-cache"),
        .init(bucket: "photos", key: "large.png", data: image(300, 300)),
        .init(bucket: "private", key: "cat.png", data: image(40, 30)),
    ]

    /// A manager whose downloader reads `s3://` through `configuration` (moto's endpoint and
    /// user key unless changed), with a fresh disk cache; everything is shut down after `body`.
    static func withManager<T>(_ server: MotoS3Server, configure: (inout S3Configuration) -> Void = { _ in },
                               http: HTTPImageLoader.Configuration = .init(),
                               downloader settings: ImageDownloader.Configuration = .init(timeout: .seconds(30)),
                               _ body: (ImageManager) async throws -> T) async throws -> T {
        var configuration = S3Configuration(endpoint: server.endpoint,
                                            credentials: S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: server.secretAccessKey))
        configure(&configuration)
        let loader = try S3ImageDataLoader(configuration: configuration, httpConfiguration: http, environment: [:])
        let downloader = ImageDownloader(name: "s3-test", configuration: settings, loader: CompositeImageDataLoader([loader]))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-s3-test-\(UUID().uuidString)")
        let cache = ImageCache(memoryStorage: MemoryStorage.Backend(config: MemoryStorage.Config(totalCostLimit: 64 << 20)),
                               diskStorage: DiskStorage.EntryStore(config: DiskStorage.EntryStore.Config(folderURL: folder)))
        let manager = ImageManager(downloader: downloader, cache: cache, defaultOptions: [.waitForCache])
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let result = try await body(manager)
            await downloader.shutdown()
            return result
        } catch {
            await downloader.shutdown()
            throw error
        }
    }

    static func storageError(_ error: any Error) -> ObjectStorageError? {
        guard case AlcedoError.responseError(.URLSessionError(let storageError as ObjectStorageError))? = error as? AlcedoError else { return nil }
        return storageError
    }

    @Test func imagesThroughTheManagerWithAwkwardKeysRevalidationAndCoalescing() async throws {
        let server = try await MotoS3Server.start(buckets: ["photos", "private"], objects: Self.objects)
        defer { server.stop() }
        try await Self.withManager(server) { manager in
            let cat = try await manager.retrieveImage(with: try #require(URL(string: "s3://photos/cat.png")))
            #expect(cat.image.width == 40 && cat.image.height == 30)
            #expect(cat.cacheType == .none)
            #expect(cat.response?.statusCode == 200)
            #expect(cat.response?.cacheInfo.etag != nil)
            #expect(cat.response?.cacheInfo.lastModified != nil)

            // A space and non-ASCII letters (percent-encoded in the URL), and a key with % and +.
            let spaced = try await manager.retrieveImage(with: try #require(URL(string: "s3://photos/dir/a%20b%20%C3%A9.png")))
            #expect(spaced.image.width == 12)
            let percent = try await manager.retrieveImage(with: try #require(URL(string: "s3://photos/100%25%20c+d.jpg")))
            #expect(percent.image.width == 16 && percent.image.height == 8)

            // Second time: from memory, nothing sent.
            let before = server.requestLines.count
            let again = try await manager.retrieveImage(with: try #require(URL(string: "s3://photos/cat.png")))
            #expect(again.cacheType == .memory)
            #expect(server.requestLines.count == before)

            // 50 callers of one new variant: one GET reaches the store.
            let url = try #require(URL(string: "s3://photos/fresh.png"))
            let processor = DownsamplingImageProcessor(size: PixelSize(width: 32, height: 24))
            let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<50 {
                    group.addTask { try await manager.retrieveImage(with: url, options: [.processor(processor)]).image.width }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(sizes == Array(repeating: 32, count: 50))
            #expect(server.count("GET", "/photos/fresh.png") == 1)
        }

        // Revalidation: an object stored with Cache-Control: no-cache is asked with its ETag
        // (If-None-Match) on the next use; the store's 304 keeps the cached bytes.
        try await Self.withManager(server) { manager in
            let url = try #require(URL(string: "s3://photos/checked.png"))
            let first = try await manager.retrieveImage(with: url, options: [.respectHTTPFreshness])
            #expect(first.cacheType == .none)
            let etag = try #require(first.response?.cacheInfo.etag)
            manager.cache.clearMemoryCache()
            let second = try await manager.retrieveImage(with: url, options: [.respectHTTPFreshness])
            #expect(second.cacheType == .disk)
            #expect(second.response?.statusCode == 304)
            #expect(second.image.width == 20)
            #expect(server.statuses("GET", "/photos/checked.png") == [200, 304])
            #expect(etag.hasPrefix("\""))
        }
    }

    @Test func errorsAreTypedAndDeniedBucketsSendNothing() async throws {
        let server = try await MotoS3Server.start(buckets: ["photos", "private"], objects: Self.objects)
        defer { server.stop() }
        let retrying: AlcedoOptionsInfo = [.retryStrategy(DelayRetryStrategy(maxRetryCount: 2, retryInterval: .seconds(0)))]
        try await Self.withManager(server, configure: { $0.deniedBuckets = ["private"] }) { manager in
            // A missing key: 404 NoSuchKey, not retried.
            do {
                _ = try await manager.retrieveImage(with: try #require(URL(string: "s3://photos/missing.png")), options: retrying)
                Issue.record("a missing key loaded")
            } catch {
                let storageError = try #require(Self.storageError(error), "\(error)")
                #expect(storageError.code == "NoSuchKey")
                #expect(storageError.category == .notFound)
                #expect(storageError.statusCode == 404)
                #expect(!AlcedoError.responseError(reason: .objectStorageError(storageError)).isRetriable)
            }
            #expect(server.count("GET", "/photos/missing.png") == 1)
            // A missing bucket.
            do {
                _ = try await manager.retrieveImage(with: try #require(URL(string: "s3://nobucket/a.png")))
                Issue.record("a missing bucket loaded")
            } catch {
                #expect(Self.storageError(error)?.code == "NoSuchBucket", "\(error)")
            }
            // A denied bucket: refused before any request.
            let before = server.requestLines.count
            do {
                _ = try await manager.retrieveImage(with: try #require(URL(string: "s3://private/cat.png")))
                Issue.record("a denied bucket loaded")
            } catch {
                guard case .requestError(.invalidURL(.sourceNotAllowed(_, let reason)))? = error as? AlcedoError else {
                    Issue.record("expected sourceNotAllowed, got \(error)")
                    return
                }
                #expect(reason.contains("private"))
            }
            #expect(server.requestLines.count == before)
        }
        // An allowed-bucket list refuses every other bucket.
        try await Self.withManager(server, configure: { $0.allowedBuckets = ["photos"] }) { manager in
            await #expect(throws: AlcedoError.self) {
                _ = try await manager.retrieveImage(with: URL(string: "s3://private/cat.png")!)
            }
            #expect(server.count("GET", "/private/cat.png") == 0)
        }
        // A wrong secret really fails: SignatureDoesNotMatch, an access refusal.
        try await Self.withManager(server, configure: {
            $0.credentials = S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: "wrong" + server.secretAccessKey)
        }) { manager in
            do {
                _ = try await manager.retrieveImage(with: try #require(URL(string: "s3://photos/cat.png")))
                Issue.record("a wrong secret loaded")
            } catch {
                let storageError = try #require(Self.storageError(error), "\(error)")
                #expect(storageError.code == "SignatureDoesNotMatch")
                #expect(storageError.category == .accessDenied)
                #expect(!"\(error)".contains(server.secretAccessKey))
            }
        }
        // An unknown key ID.
        try await Self.withManager(server, configure: {
            $0.credentials = S3Credentials(accessKeyID: "AKIAUNKNOWN000000000", secretAccessKey: server.secretAccessKey)
        }) { manager in
            do {
                _ = try await manager.retrieveImage(with: try #require(URL(string: "s3://photos/cat.png")))
                Issue.record("an unknown key loaded")
            } catch {
                #expect(Self.storageError(error)?.code == "InvalidAccessKeyId", "\(error)")
                #expect(Self.storageError(error)?.category == .accessDenied)
            }
        }
        // Temporary credentials with their session token; and with a wrong token.
        try await Self.withManager(server, configure: {
            $0.credentials = S3Credentials(accessKeyID: server.sessionAccessKeyID, secretAccessKey: server.sessionSecretAccessKey,
                                           sessionToken: server.sessionToken)
        }) { manager in
            let result = try await manager.retrieveImage(with: try #require(URL(string: "s3://photos/cat.png")))
            #expect(result.image.width == 40)
        }
        try await Self.withManager(server, configure: {
            $0.credentials = S3Credentials(accessKeyID: server.sessionAccessKeyID, secretAccessKey: server.sessionSecretAccessKey,
                                           sessionToken: "not-the-token")
        }) { manager in
            do {
                _ = try await manager.retrieveImage(with: try #require(URL(string: "s3://photos/cat.png")))
                Issue.record("a wrong session token loaded")
            } catch {
                #expect(Self.storageError(error)?.category == .accessDenied, "\(error)")
            }
        }
    }

    @Test func virtualHostAddressingAndTheByteLimit() async throws {
        let server = try await MotoS3Server.start(buckets: ["photos"], objects: Self.objects.filter { $0.bucket == "photos" })
        defer { server.stop() }
        // bucket.HOST addressing: the store's host name is pinned to loopback, and the request
        // carries `Host: photos.s3.alcedo.test:PORT`, which moto reads the bucket from.
        var http = HTTPImageLoader.Configuration()
        http.dnsOverride = ["photos.s3.alcedo.test": "127.0.0.1"]
        try await Self.withManager(server, configure: {
            $0.endpoint = URL(string: "http://s3.alcedo.test:\(server.port)")
            $0.usePathStyle = false
        }, http: http) { manager in
            let result = try await manager.retrieveImage(with: try #require(URL(string: "s3://photos/dir/a%20b%20%C3%A9.png")))
            #expect(result.image.width == 12)
            #expect(server.count("GET", "/photos/dir/a%20b%20%C3%A9.png") == 0)
        }
        // An object over the byte limit is refused from its Content-Length, before its body.
        let large = try #require(Self.objects.first { $0.key == "large.png" }).data.count
        try await Self.withManager(server, downloader: .init(timeout: .seconds(30), maximumBodySize: large - 1)) { manager in
            do {
                _ = try await manager.retrieveImage(with: try #require(URL(string: "s3://photos/large.png")))
                Issue.record("an object over the limit loaded")
            } catch {
                guard case .responseError(.invalidURLResponse(.bodyTooLarge(_, let limit, let received)))? = error as? AlcedoError else {
                    Issue.record("expected bodyTooLarge, got \(error)")
                    return
                }
                #expect(limit == large - 1)
                #expect(received == 0)
            }
        }
    }

    /// Throttling (503 SlowDown) is retried by the retry strategy; the store here is a loopback
    /// HTTP server answering as S3 does, once with SlowDown, then with the object.
    @Test func slowDownIsRetried() async throws {
        let origin = try await TestHTTPServer.start()
        defer { origin.stop() }
        let slowDown = """
            <?xml version="1.0" encoding="UTF-8"?>
            <Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message><RequestId>R1</RequestId></Error>
            """
        origin.route("/photos/busy.png", sequence: [
            .status(503, headers: [("Content-Type", "application/xml")], body: slowDown),
            .ok(Self.image(8, 8), contentType: "image/png"),
        ])
        let configuration = S3Configuration(endpoint: origin.url("/"), credentials: S3Credentials(accessKeyID: "AKIATEST", secretAccessKey: "secret"))
        let loader = try S3ImageDataLoader(configuration: configuration, environment: [:])
        let downloader = ImageDownloader(name: "s3-retry", configuration: .init(timeout: .seconds(30)), loader: loader)
        defer { Task { await downloader.shutdown() } }
        let url = try #require(URL(string: "s3://photos/busy.png"))
        // Without a retry strategy: the typed throttling error.
        do {
            _ = try await downloader.downloadData(with: url)
            Issue.record("SlowDown was not reported")
        } catch {
            let storageError = try #require(Self.storageError(error), "\(error)")
            #expect(storageError.code == "SlowDown" && storageError.category == .throttled && storageError.requestID == "R1")
            #expect(error.isRetriable)
        }
        origin.route("/photos/again.png", sequence: [
            .status(503, headers: [("Content-Type", "application/xml")], body: slowDown),
            .ok(Self.image(8, 8), contentType: "image/png"),
        ])
        let result = try await downloader.downloadData(with: try #require(URL(string: "s3://photos/again.png")),
                                                       options: DownloadOptions(retryStrategy: DelayRetryStrategy(maxRetryCount: 2, retryInterval: .seconds(0))))
        #expect(ImageFormat.sniff(result.data) == .png)
        let requests = origin.requests("/photos/again.png")
        #expect(requests.count == 2)
        #expect(requests.allSatisfy { $0.headers.first(name: "Authorization")?.hasPrefix("AWS4-HMAC-SHA256 Credential=AKIATEST/") == true })
        #expect(requests.allSatisfy { $0.headers.first(name: "x-amz-content-sha256") == "UNSIGNED-PAYLOAD" })
    }

    @Test func locationsFromURLs() throws {
        let spaced = try S3ObjectLocation(url: try #require(URL(string: "s3://b-1/a%20b/%C3%A9+%25.jpg?versionId=v%2B1")))
        #expect(spaced == S3ObjectLocation(bucket: "b-1", key: "a b/é+%.jpg", versionID: "v+1"))
        #expect(try S3ObjectLocation(url: try #require(URL(string: "s3://b/k.png?3HL4kqtJlcpXroDTDmJ"))).versionID == "3HL4kqtJlcpXroDTDmJ")
        #expect(throws: AlcedoError.self) { try S3ObjectLocation(url: URL(string: "s3://bucket/")!) }
        #expect(throws: AlcedoError.self) { try S3ObjectLocation(url: URL(string: "s3:///key")!) }
        #expect(throws: AlcedoError.self) { try S3ObjectLocation(url: URL(string: "http://bucket/key")!) }
        #expect(spaced.url.absoluteString == "s3://b-1/a%20b/%C3%A9%2B%25.jpg?versionId=v%2B1")
    }

    @Test func credentialsFromTheEnvironmentAndTheSharedFile() throws {
        let environment = ["AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "envsecret", "AWS_SESSION_TOKEN": "tok"]
        #expect(try S3Credentials.resolve(environment: environment) == S3Credentials(accessKeyID: "AKIAENV", secretAccessKey: "envsecret", sessionToken: "tok"))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-aws-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent(".aws"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try """
            # shared credentials
            [default]
            aws_access_key_id = AKIADEFAULT
            aws_secret_access_key = defaultsecret

            [images]
            aws_access_key_id=AKIAIMAGES
            aws_secret_access_key=imagessecret
            aws_session_token = imagestoken
            """.write(to: folder.appendingPathComponent(".aws/credentials"), atomically: true, encoding: .utf8)
        #expect(try S3Credentials.resolve(environment: ["HOME": folder.path])?.accessKeyID == "AKIADEFAULT")
        let images = try S3Credentials.resolve(environment: ["HOME": folder.path, "AWS_PROFILE": "images"])
        #expect(images == S3Credentials(accessKeyID: "AKIAIMAGES", secretAccessKey: "imagessecret", sessionToken: "imagestoken"))
        #expect(throws: S3ConfigurationError.missingProfile("nope", file: folder.appendingPathComponent(".aws/credentials").path)) {
            try S3Credentials.resolve(environment: ["HOME": folder.path, "AWS_PROFILE": "nope"])
        }
        #expect(try S3Credentials.resolve(environment: ["HOME": folder.appendingPathComponent("none").path]) == nil)
        let error = S3ConfigurationError.missingProfile("nope", file: "/x")
        #expect(error.localizedDescription == error.description)
    }
}

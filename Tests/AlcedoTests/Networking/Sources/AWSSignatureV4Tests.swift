import AlcedoTestSupport
import Foundation
import Testing
@testable import Alcedo

/// The signer against AWS's published examples (the S3 "Signature Version 4: authenticating
/// requests using the Authorization header" examples, and `get-vanilla` of the SigV4 test
/// suite), and against botocore's signer on the same inputs.
@Suite("AWS Signature Version 4")
struct AWSSignatureV4Tests {
    static let exampleCredentials = S3Credentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE",
                                                  secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    static let exampleDate = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z

    /// AWS's "GET Object" example: a Range header, the empty payload's hash.
    @Test func awsGetObjectExample() throws {
        let signer = AWSSignatureV4(credentials: Self.exampleCredentials, region: "us-east-1")
        let url = try #require(URL(string: "https://examplebucket.s3.amazonaws.com/test.txt"))
        let headers = signer.signedHeaders(method: "GET", url: url, headers: ["Range": "bytes=0-9"],
                                           payloadHash: AWSSignatureV4.emptyPayloadHash, date: Self.exampleDate)
        #expect(headers["x-amz-date"] == "20130524T000000Z")
        #expect(headers["Authorization"] == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        let canonical = signer.canonicalRequest(
            method: "GET", url: url,
            headers: ["Host": "examplebucket.s3.amazonaws.com", "Range": "bytes=0-9",
                      "x-amz-content-sha256": AWSSignatureV4.emptyPayloadHash, "x-amz-date": "20130524T000000Z"],
            payloadHash: AWSSignatureV4.emptyPayloadHash)
        #expect(canonical.text == """
            GET
            /test.txt

            host:examplebucket.s3.amazonaws.com
            range:bytes=0-9
            x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
            x-amz-date:20130524T000000Z

            host;range;x-amz-content-sha256;x-amz-date
            e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
            """)
        #expect(signer.stringToSign(canonicalRequest: canonical.text, time: "20130524T000000Z") == """
            AWS4-HMAC-SHA256
            20130524T000000Z
            20130524/us-east-1/s3/aws4_request
            7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972
            """)
    }

    /// AWS's "GET Bucket Lifecycle" (a query parameter without a value) and "Get Bucket (List
    /// Objects)" (two parameters, sorted) examples.
    @Test func awsBucketQueryExamples() throws {
        let signer = AWSSignatureV4(credentials: Self.exampleCredentials, region: "us-east-1")
        let lifecycle = signer.signedHeaders(method: "GET", url: try #require(URL(string: "https://examplebucket.s3.amazonaws.com/?lifecycle")),
                                             payloadHash: AWSSignatureV4.emptyPayloadHash, date: Self.exampleDate)
        #expect(lifecycle["Authorization"]?.hasSuffix("Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543") == true)
        let list = signer.signedHeaders(method: "GET", url: try #require(URL(string: "https://examplebucket.s3.amazonaws.com/?prefix=J&max-keys=2")),
                                        payloadHash: AWSSignatureV4.emptyPayloadHash, date: Self.exampleDate)
        #expect(list["Authorization"]?.hasSuffix("Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7") == true)
    }

    /// `get-vanilla` of AWS's SigV4 test suite (service `service`, only `host` and `x-amz-date` signed).
    @Test func sigV4SuiteGetVanilla() throws {
        let signer = AWSSignatureV4(credentials: S3Credentials(accessKeyID: "AKIDEXAMPLE",
                                                               secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
                                    region: "us-east-1", service: "service")
        let canonical = signer.canonicalRequest(method: "GET", url: try #require(URL(string: "https://example.amazonaws.com/")),
                                                headers: ["Host": "example.amazonaws.com", "X-Amz-Date": "20150830T123600Z"],
                                                payloadHash: AWSSignatureV4.emptyPayloadHash)
        let toSign = signer.stringToSign(canonicalRequest: canonical.text, time: "20150830T123600Z")
        #expect(toSign.hasSuffix("\nbb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63"))
        #expect(signer.signature(stringToSign: toSign, time: "20150830T123600Z")
                == "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
    }

    @Test func keysAreEncodedOnceTheS3Way() {
        #expect(AWSSignatureV4.canonicalURI(forKeyPath: "a b/c+d/%/é~_.-") == "a%20b/c%2Bd/%25/%C3%A9~_.-")
        #expect(AWSSignatureV4.canonicalQuery("versionId=a%2Bb&acl") == "acl=&versionId=a%2Bb")
        let configuration = S3Configuration(endpoint: URL(string: "http://127.0.0.1:9000"))
        #expect(configuration.objectURL(bucket: "b", key: "dir/ä ö+1%.jpg", versionID: "v/1").absoluteString
                == "http://127.0.0.1:9000/b/dir/%C3%A4%20%C3%B6%2B1%25.jpg?versionId=v%2F1")
        var virtual = configuration
        virtual.usePathStyle = false
        #expect(virtual.objectURL(bucket: "b", key: "k.jpg").absoluteString == "http://b.127.0.0.1:9000/k.jpg")
        #expect(S3Configuration(region: "eu-west-1").objectURL(bucket: "photos", key: "a.jpg").absoluteString
                == "https://photos.s3.eu-west-1.amazonaws.com/a.jpg")
        // A dotted bucket over HTTPS stays path-style (a wildcard certificate would not match).
        #expect(S3Configuration(region: "eu-west-1").objectURL(bucket: "my.photos", key: "a.jpg").absoluteString
                == "https://s3.eu-west-1.amazonaws.com/my.photos/a.jpg")
    }

    @Test func sessionTokenIsSentAndSigned() throws {
        let credentials = S3Credentials(accessKeyID: "ASIAEXAMPLE", secretAccessKey: "Zq9-SECRET-VALUE", sessionToken: "token/with+chars")
        let headers = AWSSignatureV4(credentials: credentials, region: "us-east-1")
            .signedHeaders(method: "GET", url: try #require(URL(string: "http://127.0.0.1:9000/b/k")), date: Self.exampleDate)
        #expect(headers["x-amz-security-token"] == "token/with+chars")
        #expect(headers["x-amz-content-sha256"] == "UNSIGNED-PAYLOAD")
        #expect(headers["Authorization"]?.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,") == true)
        #expect(!credentials.description.contains("Zq9-SECRET") && !credentials.description.contains("token/with"))
        #expect(!"\(credentials)".contains("Zq9-SECRET") && !String(reflecting: credentials).contains("Zq9-SECRET"))
    }

    /// Alcedo's signer and botocore's (S3SigV4Auth, run from the test tools' environment) on
    /// the same requests: keys with spaces, `+`, `%`, non-ASCII letters, a version, a session
    /// token, a port, virtual-host and path-style hosts.
    @Test func matchesBotocore() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let time = "20231114T221320Z"
        let cases: [(S3Configuration, S3ObjectLocation, S3Credentials)] = [
            (S3Configuration(endpoint: URL(string: "http://127.0.0.1:9000")), S3ObjectLocation(bucket: "photos", key: "a b+c%d/é.jpg"),
             S3Credentials(accessKeyID: "AKIAEXAMPLE1", secretAccessKey: "s3cr3t/+=")),
            (S3Configuration(region: "eu-central-1"), S3ObjectLocation(bucket: "photos", key: "2024/日本/x~y_z.png", versionID: "3/L4kqtJl+cpXroDTDmJ"),
             S3Credentials(accessKeyID: "ASIAEXAMPLE2", secretAccessKey: "other", sessionToken: "FwoGZXIvYXdzEJr//////////wEaD")),
            (S3Configuration(region: "auto", endpoint: URL(string: "https://account.r2.cloudflarestorage.com"), usePathStyle: false),
             S3ObjectLocation(bucket: "media", key: "плюс+.webp"),
             S3Credentials(accessKeyID: "r2key", secretAccessKey: "r2secret")),
        ]
        var inputs: [[String: Any]] = []
        var ours: [(canonical: String, signature: String)] = []
        for (configuration, location, credentials) in cases {
            let url = configuration.objectURL(bucket: location.bucket, key: location.key, versionID: location.versionID)
            let signer = AWSSignatureV4(credentials: credentials, region: configuration.region)
            let headers = signer.signedHeaders(method: "GET", url: url, date: date)
            var sent: [String: String] = ["Host": AWSSignatureV4.hostHeader(url)]
            for field in headers where field.name != "Authorization" { sent[field.name] = field.value }
            var input: [String: Any] = ["accessKeyID": credentials.accessKeyID, "secretAccessKey": credentials.secretAccessKey,
                                        "region": configuration.region, "method": "GET", "url": url.absoluteString,
                                        "time": time, "headers": sent]
            if let token = credentials.sessionToken { input["sessionToken"] = token }
            inputs.append(input)
            let canonical = signer.canonicalRequest(method: "GET", url: url, headers: HTTPHeaderFields(sent.map { ($0.key, $0.value) }),
                                                    payloadHash: AWSSignatureV4.unsignedPayload)
            let signature = try #require(headers["Authorization"]?.components(separatedBy: "Signature=").last)
            ours.append((canonical.text, signature))
        }
        let theirs = try MotoS3Server.botocoreSignatures(inputs)
        try #require(theirs.count == ours.count)
        for (index, reference) in theirs.enumerated() {
            #expect(ours[index].canonical == reference["canonicalRequest"], "case \(index)")
            #expect(ours[index].signature == reference["signature"], "case \(index)")
        }
    }
}

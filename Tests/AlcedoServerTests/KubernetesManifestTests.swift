import AlcedoTestSupport
import Foundation
import Testing

/// contrib/kubernetes, checked offline by scripts/check-kubernetes.py: every document against
/// the Kubernetes API schemas (kubernetes-validate from PyPI, strict: unknown fields fail) and
/// the alcedo Deployment against the image contrib/container/Containerfile builds.
@Suite struct KubernetesManifestTests {
    static let script = MotoS3Server.repositoryRoot.appendingPathComponent("scripts/check-kubernetes.py")

    func check(_ files: [URL] = []) async throws -> (status: Int32, output: String) {
        let python = MotoS3Server.python
        try #require(FileManager.default.isExecutableFile(atPath: python.path),
                     "no \(python.path): run scripts/install-s3-test-tools.sh (make test does)")
        let result = try await AlcedoBinary.runDetached([Self.script.path] + files.map(\.path), executable: python)
        return (result.status, result.stdout + result.stderr)
    }

    @Test func manifestsValidateAgainstTheSchemasAndTheImage() async throws {
        let (status, output) = try await check()
        #expect(status == 0, "\(output)")
        for kind in ["Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget", "ConfigMap", "Secret"] {
            #expect(output.contains(kind), "\(kind) not checked: \(output)")
        }
    }

    /// The check fails for what the API server or the image would refuse.
    @Test(arguments: [
        ("readOnlyRootFilesystem: true", "readOnlyRootFilesystem: true\n            readOnlyRootFileSystem: true",
         "'readOnlyRootFileSystem' was unexpected"),
        ("containerPort: 8080", "containerPort: \"8080\"", "is not of type 'integer'"),
        ("readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false", "root file system must be read-only"),
        ("runAsUser: 10001", "runAsUser: 1000", "is not the image's user 10001"),
        ("livenessProbe:\n            httpGet:\n              path: /health", "livenessProbe:\n            httpGet:\n              path: /healthz",
         "livenessProbe asks /healthz"),
        ("      volumes:\n", "      volumes:\n        - name: unused\n          emptyDir: {}\n", ""),
    ])
    func brokenDeploymentsFail(original: String, replacement: String, message: String) async throws {
        let manifest = try String(contentsOf: MotoS3Server.repositoryRoot.appendingPathComponent("contrib/kubernetes/deployment.yaml"),
                                  encoding: .utf8)
        try #require(manifest.contains(original))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("alcedo-k8s-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("deployment.yaml")
        try manifest.replacingOccurrences(of: original, with: replacement).write(to: file, atomically: true, encoding: .utf8)
        let (status, output) = try await check([file])
        if message.isEmpty {
            // An extra unused volume is valid: the check is not a text comparison.
            #expect(status == 0, "\(output)")
        } else {
            #expect(status == 1, "\(output)")
            #expect(output.contains(message), "\(output)")
        }
    }
}

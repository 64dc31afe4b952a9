import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An origin that answers `GET /r/BASE64 ...` with the bytes BASE64 (URL-safe) decodes to, as they
/// are, and closes: status lines and framing no HTTP library would write. One thread, one
/// connection at a time.
public final class RawOrigin: Sendable {
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    private let fd: Int32

    /// Starts listening on a free loopback port.
    public init() throws {
        let listening = try LoopbackPort.listen()
        fd = listening.fd
        port = listening.port
        let listener = fd
        Thread.detachNewThread {
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 { return }
                RawOrigin.answer(client)
                close(client)
            }
        }
    }

    private static func answer(_ client: Int32) {
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)), request.count < 1 << 20 {
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return }
            request += buffer[0..<count]
        }
        let line = String(decoding: request.prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
        let target = line.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        guard target.hasPrefix("/r/") else { return }
        var encoded = String(target.dropFirst(3)).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while encoded.count % 4 != 0 { encoded += "=" }
        let bytes = [UInt8](Data(base64Encoded: encoded) ?? Data())
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { return }
            sent += count
        }
    }

    /// The URL whose request this origin answers with exactly `bytes`.
    public func url(answering bytes: some Sequence<UInt8>) -> URL {
        let encoded = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return URL(string: "http://127.0.0.1:\(port)/r/" + encoded)!
    }

    /// Stops listening.
    public func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}

import Foundation
import Glibc

/// Loopback ports for the servers the tests start (redis-server, moto).
public enum LoopbackPort {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// A port on 127.0.0.1 that was free a moment ago (the kernel's pick for port 0).
    public static func free() throws -> Int {
        let (fd, port) = try bound(listening: false)
        close(fd)
        return port
    }

    /// A port on 127.0.0.1 that refuses connections for as long as the returned socket is
    /// open: it is bound but not listening, so nothing else can take the port in the meantime
    /// (a port merely closed can be handed to the next test's server). The caller closes it.
    public static func refusing() throws -> (fd: Int32, port: Int) {
        try bound(listening: false)
    }

    /// A socket listening on 127.0.0.1 at a port the kernel picks, and that port. The caller
    /// closes the descriptor.
    public static func listen() throws -> (fd: Int32, port: Int) {
        try bound(listening: true)
    }

    /// 127.0.0.1:`port` as a socket address.
    static func loopbackAddress(_ port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private static func bound(listening: Bool) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed") }
        var address = loopbackAddress(0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, !listening || Glibc.listen(fd, 16) == 0 else {
            close(fd)
            throw Failure(description: listening ? "bind or listen failed" : "bind failed")
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Whether something accepts connections on 127.0.0.1:`port`.
    public static func accepts(_ port: Int) -> Bool {
        let fd = connect(port)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }

    /// A blocking TCP socket connected to 127.0.0.1:`port`, or -1 with `errno` set. A receive
    /// buffer size is set before connecting (so the window is small from the start), a receive
    /// timeout in seconds after. The caller closes the descriptor.
    public static func connect(_ port: Int, receiveBuffer: Int32? = nil, receiveTimeout: Int? = nil) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let seconds = receiveTimeout {
            var wait = timeval(tv_sec: seconds, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        }
        var address = loopbackAddress(port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let failure = errno
            close(fd)
            errno = failure
            return -1
        }
        return fd
    }
}

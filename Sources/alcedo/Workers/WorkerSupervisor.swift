import Alcedo
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// `alcedo serve --processes N`: starts N worker processes (this executable, with the same
/// arguments and a ``WorkerRole`` in their environment) that listen on one port together
/// (`SO_REUSEPORT`), and starts a new one at once when one dies.
///
/// A Swift trap cannot be caught and a C decoder can fault: in a worker that costs the requests
/// that worker had open, never the service. The supervisor itself runs no request code. It
/// keeps the port bound (not listening) while workers come and go, so no other program can take
/// it; SIGTERM or SIGINT is passed on to every worker, which stop accepting and finish their
/// requests; it exits 0 when every worker did.
final class WorkerSupervisor: Sendable {
    /// Workers that die within this time of starting count as failing at start.
    static let quickDeath: Duration = .seconds(1)

    private struct Worker {
        var pid: pid_t
        var started: ContinuousClock.Instant
        var listeningLine: String?
    }

    private struct State {
        var workers: [Int: Worker] = [:]
        var stopping = false
        var failedExit = false
    }

    let count: Int
    let host: String
    let requestedPort: Int
    let arguments: [String]
    let gracePeriod: Int
    private let state = Mutex(State())
    private let metricsPorts = Mutex<[Int]>([])

    /// - Parameters:
    ///   - arguments: the command line after the executable's name, passed to every worker.
    ///   - gracePeriod: seconds a worker may take to finish its requests after SIGTERM; after
    ///     that and 5 s more it is killed.
    init(count: Int, host: String, port: Int, arguments: [String], gracePeriod: Int) {
        self.count = count
        self.host = host
        requestedPort = port
        self.arguments = arguments
        self.gracePeriod = gracePeriod
    }

    /// Runs the workers until SIGTERM or SIGINT and every worker has ended; returns the exit
    /// status for this process (0 when every worker exited 0).
    /// - Parameter onListening: called once with `http://HOST:PORT` when every worker listens.
    func run(onListening: (String) -> Void) throws -> Int32 {
        let (reservation, port) = try Self.reservePort(host: host, port: requestedPort)
        defer { close(reservation) }
        // Each worker's own metrics port on loopback, kept reserved as the main port is.
        let metrics = try (0..<count).map { _ in try Self.reservePort(host: "127.0.0.1", port: 0) }
        defer { for (descriptor, _) in metrics { close(descriptor) } }
        metricsPorts.withLock { $0 = metrics.map(\.1) }
        let executable = try Self.executablePath()
        let signalSources = [SIGTERM, SIGINT].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in stop() }
            source.resume()
            return source
        }
        defer { for source in signalSources { source.cancel() } }

        for index in 0..<count {
            try spawn(index: index, port: port, executable: executable)
        }
        // Every worker listening (or one failing before it does) ends the wait.
        let deadline = ContinuousClock.now + .seconds(120)
        var announced = false
        while !announced {
            let (ready, line) = state.withLock { state -> (Bool, String?) in
                let lines = state.workers.values.compactMap(\.listeningLine)
                return (lines.count == count, lines.first)
            }
            if ready, let line {
                onListening(line)
                announced = true
                break
            }
            var status: Int32 = 0
            let ended = waitpid(-1, &status, WNOHANG)
            if ended > 0 {
                // A worker that cannot start (a bad setting it found, a port it cannot bind)
                // ends the command: starting it again would fail the same way.
                Console.error("alcedo: worker (pid \(ended)) \(Self.describe(status)) before listening; stopping")
                stop()
                return drain()
            }
            if ContinuousClock.now > deadline || state.withLock({ $0.stopping }) {
                Console.error("alcedo: the workers did not all start listening; stopping")
                stop()
                return drain()
            }
            usleep(10_000)
        }

        var quickDeaths = 0
        while true {
            var status: Int32 = 0
            let pid = waitpid(-1, &status, 0)
            if pid < 0 {
                if errno == EINTR { continue }
                break  // ECHILD: no worker left
            }
            let (index, worker, stopping) = state.withLock { state -> (Int?, Worker?, Bool) in
                guard let entry = state.workers.first(where: { $0.value.pid == pid }) else { return (nil, nil, state.stopping) }
                state.workers[entry.key] = nil
                // After a stop was asked, every worker should finish its requests and exit 0.
                if state.stopping && !(Self.exitedNormally(status) && Self.exitStatus(status) == 0) { state.failedExit = true }
                return (entry.key, entry.value, state.stopping)
            }
            guard let index, let worker else { continue }
            if stopping {
                if state.withLock({ $0.workers.isEmpty }) { break }
                continue
            }
            let lived = ContinuousClock.now - worker.started
            quickDeaths = lived < Self.quickDeath ? quickDeaths + 1 : 0
            Console.error("alcedo: worker \(index) (pid \(pid)) \(Self.describe(status)) after \(Self.seconds(lived)); starting a new one")
            // A worker that keeps dying at start is restarted at most once a second.
            if quickDeaths >= 5 { usleep(1_000_000) }
            if state.withLock({ $0.stopping }) { continue }
            do {
                try spawn(index: index, port: port, executable: executable)
            } catch {
                Console.error("alcedo: worker \(index) could not be started again: \(error)")
            }
        }
        return state.withLock { $0.failedExit } ? 1 : 0
    }

    /// Asks every worker to stop (SIGTERM) and kills those still running after the grace period.
    private func stop() {
        let pids: [pid_t] = state.withLock { state in
            let first = !state.stopping
            state.stopping = true
            return first ? state.workers.values.map(\.pid) : []
        }
        guard !pids.isEmpty else { return }
        for pid in pids { kill(pid, SIGTERM) }
        let limit = UInt32(clamping: max(0, gracePeriod) + 5)
        _ = startDetachedThread(stackSize: 64 << 10) { [self] in
            sleep(limit)
            for pid in state.withLock({ $0.workers.values.map(\.pid) }) { kill(pid, SIGKILL) }
        }
    }

    /// Waits for every worker after a failed start; the exit status is 1.
    private func drain() -> Int32 {
        var status: Int32 = 0
        while waitpid(-1, &status, 0) > 0 || errno == EINTR {}
        return 1
    }

    private func spawn(index: Int, port: Int, executable: String) throws {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw WorkerStartError("pipe: \(String(decoding: Self.errorText(errno), as: UTF8.self))") }
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, writeEnd, STDOUT_FILENO)
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGTERM, SIGINT, SIGPIPE, SIGHUP] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var role = WorkerRole(index: index, count: count, port: port, supervisor: getpid())
        role.metricsPorts = metricsPorts.withLock { $0 }
        var environment = ProcessInfo.processInfo.environment
        for (name, value) in role.environment { environment[name] = value }
        let argv = (["alcedo"] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var spawned: pid_t = 0
        let result = posix_spawn(&spawned, executable, &actions, &attributes, argv, envp)
        let pid = spawned
        close(writeEnd)
        guard result == 0 else {
            close(readEnd)
            throw WorkerStartError("\(executable): \(String(decoding: Self.errorText(result), as: UTF8.self))")
        }
        state.withLock { $0.workers[index] = Worker(pid: pid, started: .now) }
        // The worker's first line says where it listens; anything after it is passed on.
        let started = startDetachedThread(stackSize: 256 << 10) { [self] in
            var buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            var announced = false
            while true {
                let n = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                if announced {
                    chunk.withUnsafeBytes { _ = write(STDOUT_FILENO, $0.baseAddress, n) }
                    continue
                }
                buffer += chunk[0..<n]
                if let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    announced = true
                    let address = line.hasPrefix("listening on ") ? String(line.dropFirst("listening on ".count)) : line
                    state.withLock { state in
                        if let entry = state.workers.first(where: { $0.value.pid == pid }) {
                            state.workers[entry.key]?.listeningLine = address
                        }
                    }
                    let rest = buffer[(newline + 1)...]
                    if !rest.isEmpty { rest.withUnsafeBytes { _ = write(STDOUT_FILENO, $0.baseAddress, $0.count) } }
                }
            }
            close(readEnd)
        }
        if !started { close(readEnd) }
    }

    /// Binds (without listening) a socket with `SO_REUSEPORT` on `host:port`, so that the port
    /// is this service's while workers come and go; returns it and the port (resolved when 0).
    static func reservePort(host: String, port: Int) throws -> (Int32, Int) {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, "\(port)", &hints, &list)
        guard status == 0, let first = list else {
            throw WorkerStartError("\(host) could not be resolved (\(String(decoding: Self.cString(gai_strerror(status)), as: UTF8.self)))")
        }
        defer { freeaddrinfo(list) }
        let fd = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw WorkerStartError("socket: \(String(decoding: errorText(errno), as: UTF8.self))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let text = String(decoding: errorText(errno), as: UTF8.self)
            close(fd)
            throw WorkerStartError("cannot bind \(host):\(port): \(text)")
        }
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0 else { close(fd); throw WorkerStartError("getsockname failed") }
        let family = Int32(address.ss_family)
        let networkPort: UInt16 = withUnsafePointer(to: &address) { pointer in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port }
        }
        return (fd, Int(UInt16(bigEndian: networkPort)))
    }

    /// This executable's path (`/proc/self/exe`, resolved: the binary may be replaced on disk
    /// while it runs, and workers must run the same one).
    static func executablePath() throws -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                guard let base = chars.baseAddress else { return -1 }
                return readlink("/proc/self/exe", base, chars.count - 1)
            }
        }
        guard n > 0 else { throw WorkerStartError("cannot find this executable (/proc/self/exe)") }
        return String(decoding: buffer[0..<n], as: UTF8.self)
    }

    /// How a worker ended, in words: "exited with status 3", "was killed by signal 9 (SIGKILL)".
    static func describe(_ status: Int32) -> String {
        if exitedNormally(status) { return "exited with status \(exitStatus(status))" }
        let number = status & 0x7F
        let names: [Int32: String] = [SIGKILL: "SIGKILL", SIGSEGV: "SIGSEGV", SIGILL: "SIGILL", SIGABRT: "SIGABRT",
                                      SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGTERM: "SIGTERM", SIGINT: "SIGINT",
                                      SIGTRAP: "SIGTRAP"]
        return "was killed by signal \(number)" + (names[number].map { " (\($0))" } ?? "")
    }

    static func exitedNormally(_ status: Int32) -> Bool { status & 0x7F == 0 }
    static func exitStatus(_ status: Int32) -> Int32 { (status >> 8) & 0xFF }

    private static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let tenths = Int(seconds) * 10 + Int(attoseconds / 100_000_000_000_000_000)
        return "\(tenths / 10).\(tenths % 10) s"
    }

    private static func errorText(_ code: Int32) -> [UInt8] { cString(strerror(code)) }

    private static func cString(_ pointer: UnsafePointer<CChar>?) -> [UInt8] {
        guard let pointer else { return [] }
        return Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer))).map { UInt8(bitPattern: $0) }
    }
}

/// A worker process could not be started.
struct WorkerStartError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import Alcedo
import AlcedoServer
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

/// Which worker of `alcedo serve --processes N` this process is: set by the supervisor in the
/// worker's environment, absent in a process started by a user.
struct WorkerRole: Sendable, Equatable {
    /// The worker's number, 0 to `count - 1`.
    var index: Int
    /// How many workers share the port.
    var count: Int
    /// The port every worker listens on (resolved by the supervisor when 0 was asked).
    var port: Int
    /// The supervisor's process id: a worker whose parent is gone stops.
    var supervisor: Int32
    /// Each worker's loopback port for its own metrics, by index (reserved by the supervisor).
    var metricsPorts: [Int] = []

    static let indexVariable = "ALCEDO_WORKER_INDEX"
    static let countVariable = "ALCEDO_WORKER_COUNT"
    static let portVariable = "ALCEDO_WORKER_PORT"
    static let supervisorVariable = "ALCEDO_WORKER_SUPERVISOR"
    static let metricsPortsVariable = "ALCEDO_WORKER_METRICS_PORTS"

    /// The role named by `environment`, or `nil` when the variables are absent or malformed.
    init?(environment: [String: String]) {
        guard let index = environment[Self.indexVariable].flatMap({ Int($0) }),
              let count = environment[Self.countVariable].flatMap({ Int($0) }),
              let port = environment[Self.portVariable].flatMap({ Int($0) }),
              let supervisor = environment[Self.supervisorVariable].flatMap({ Int32($0) }),
              count >= 1, (0..<count).contains(index), (1...65_535).contains(port) else { return nil }
        self.init(index: index, count: count, port: port, supervisor: supervisor)
        let ports = (environment[Self.metricsPortsVariable] ?? "").split(separator: ",").compactMap { Int($0) }
        if ports.count == count, ports.allSatisfy({ (1...65_535).contains($0) }) { metricsPorts = ports }
    }

    init(index: Int, count: Int, port: Int, supervisor: Int32) {
        self.index = index
        self.count = count
        self.port = port
        self.supervisor = supervisor
    }

    /// The variables that make a child process this worker.
    var environment: [String: String] {
        [Self.indexVariable: "\(index)", Self.countVariable: "\(count)", Self.portVariable: "\(port)",
         Self.supervisorVariable: "\(supervisor)", Self.metricsPortsVariable: metricsPorts.map(String.init).joined(separator: ",")]
    }

    /// Makes this worker stop (SIGTERM) when its supervisor ends, however it ends; a worker
    /// whose supervisor is already gone stops at once.
    static func stopWithSupervisor(_ role: WorkerRole) {
        ProcessMemory.setParentDeathSignal(SIGTERM)
        if getppid() != role.supervisor { kill(getpid(), SIGTERM) }
    }

    /// `configuration` as one of `count` workers runs it: the port shared (`SO_REUSEPORT`), and
    /// its share of the memory budget, the caches held in memory, the concurrency and the queue
    /// (rounded up, at least one). The separate metrics port is the first worker's alone; with
    /// `metricsPorts` (one per worker) each worker serves its own metrics there and a scrape of
    /// any worker answers every worker's.
    /// - Throws: ``ServerConfigurationError`` when the share of `--max-memory` leaves nothing
    ///   for requests once the process and its caches are set aside.
    static func share(of configuration: ImageServerConfiguration, count: Int, index: Int, port: Int,
                      metricsPorts: [Int] = []) throws -> ImageServerConfiguration {
        var c = configuration
        c.sharesPort = true
        c.port = port
        c.maxMemory = configuration.maxMemory / count
        c.resultCacheBytes = configuration.resultCacheBytes / count
        c.memoryCacheBytes = configuration.memoryCacheBytes / count
        c.concurrency = max(1, (configuration.concurrency + count - 1) / count)
        c.queueLength = (configuration.queueLength + count - 1) / count
        if index != 0 { c.metricsAddress = nil }
        if metricsPorts.count == count { c.workerMetrics = WorkerMetrics(index: index, ports: metricsPorts) }
        let setAside = c.processMemoryShare + c.resultCacheBytes + c.memoryCacheBytes
        guard setAside < c.maxMemory else {
            throw ServerConfigurationError.invalidValue("--processes", message: "--max-memory \(configuration.maxMemory >> 20) MiB over \(count) "
                + "processes is \(c.maxMemory >> 20) MiB each, which leaves nothing for requests once the process "
                + "(\(c.processMemoryShare >> 20) MiB) and its caches (\((setAside - c.processMemoryShare) >> 20) MiB) are set aside: "
                + "raise --max-memory or run fewer processes")
        }
        return c
    }
}

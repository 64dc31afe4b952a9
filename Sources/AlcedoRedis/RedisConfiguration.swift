import Alcedo
import Logging
import NIOSSL

/// The settings of a ``RedisSharedStorage``.
public struct RedisConfiguration: Sendable {
    /// The nodes; keys are spread over them by rendezvous hashing (see ``RendezvousHashing``).
    public var nodes: [RedisEndpoint]
    /// Entries whose stored value (data, metadata and header) is larger are not stored.
    /// Default 8 MiB.
    public var maxValueSize: Int
    /// Prepended to every Redis key Alcedo writes. Default `alcedo:`.
    public var keyPrefix: String
    /// How long a `GET` may take before it counts as a miss (and closes its connection).
    /// Default 50 ms.
    public var getTimeout: Duration
    /// How long other commands (`SET`, `DEL`, locks) may take. Default 250 ms.
    public var writeTimeout: Duration
    /// How long a connection (TCP, TLS, `AUTH`, `SELECT`) may take. Default 500 ms.
    public var connectTimeout: Duration
    /// Connections per node; each carries any number of pipelined commands. Default 2.
    public var connectionsPerNode: Int
    /// The first wait before reconnecting after a failed connection; it doubles per failure.
    /// Default 50 ms.
    public var reconnectBackoff: Duration
    /// The longest wait between reconnection attempts. Default 2 s.
    public var maxReconnectBackoff: Duration
    /// The circuit breaker of each node. Default 3 failures, 2 s open.
    public var circuitBreaker: CircuitBreaker.Config
    /// The reply caps. Default ``RESPDecoder/Limits`` with bulk strings up to
    /// ``maxValueSize`` plus 1 MiB.
    public var decoderLimits: RESPDecoder.Limits
    /// The TLS settings for `rediss://` nodes; `nil` (default) uses
    /// `TLSConfiguration.makeClientConfiguration()`: the system's trust roots, full verification.
    public var tlsConfiguration: TLSConfiguration?
    /// A PEM file of the certificate authorities trusted for `rediss://` nodes, in place of the
    /// trust roots of ``tlsConfiguration`` (for a private CA). Default `nil`: those trust roots.
    public var caFile: String?
    /// Where connection problems are logged. Default label `alcedo.redis`.
    public var logger: Logger

    /// Creates settings for `nodes`; every other parameter has the default stated on its property.
    public init(nodes: [RedisEndpoint], maxValueSize: Int = 8 << 20, keyPrefix: String = "alcedo:",
                getTimeout: Duration = .milliseconds(50), writeTimeout: Duration = .milliseconds(250),
                connectTimeout: Duration = .milliseconds(500), connectionsPerNode: Int = 2,
                reconnectBackoff: Duration = .milliseconds(50), maxReconnectBackoff: Duration = .seconds(2),
                circuitBreaker: CircuitBreaker.Config = .init(), decoderLimits: RESPDecoder.Limits? = nil,
                tlsConfiguration: TLSConfiguration? = nil, caFile: String? = nil, logger: Logger = Logger(label: "alcedo.redis")) {
        self.nodes = nodes
        self.maxValueSize = maxValueSize
        self.keyPrefix = keyPrefix
        self.getTimeout = getTimeout
        self.writeTimeout = writeTimeout
        self.connectTimeout = connectTimeout
        self.connectionsPerNode = connectionsPerNode
        self.reconnectBackoff = reconnectBackoff
        self.maxReconnectBackoff = maxReconnectBackoff
        self.circuitBreaker = circuitBreaker
        self.decoderLimits = decoderLimits ?? RESPDecoder.Limits(maxBulkLength: maxValueSize + (1 << 20))
        self.tlsConfiguration = tlsConfiguration
        self.caFile = caFile
        self.logger = logger
    }

    /// Settings for the nodes at `urls` (`redis://` or `rediss://`, see ``RedisEndpoint/init(url:)``).
    public init(urls: [String], maxValueSize: Int = 8 << 20) throws(AlcedoError) {
        var nodes: [RedisEndpoint] = []
        for url in urls { nodes.append(try RedisEndpoint(url: url)) }
        self.init(nodes: nodes, maxValueSize: maxValueSize)
    }
}

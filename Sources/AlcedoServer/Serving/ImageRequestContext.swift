import Hummingbird
import NIOCore

/// The request context `alcedo serve` runs its routers with: Hummingbird's basic context and
/// the address of the connected client, which the access log names as `client_ip` (as
/// imgproxy's does). A router of your own may use it, or any context: the proxy reads the
/// address only from contexts that conform to `RemoteAddressRequestContext`.
public struct ImageRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connected client's address (`nil` when the channel has none, as on a Unix socket).
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

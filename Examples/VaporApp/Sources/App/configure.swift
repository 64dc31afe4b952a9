import AlcedoServer
import Vapor

/// Sets up the app: the thumbnail route on Alcedo's library, and Alcedo's image proxy
/// under `/proxy` (imgproxy's URLs; unsigned unless `proxy.key` and `proxy.salt` are set).
/// - Returns: the mounted proxy, whose ``ImageProxyMount/shutdown()`` the caller runs when
///   the app stops.
@discardableResult
public func configure(_ app: Application, proxy configuration: ImageServerConfiguration = ImageServerConfiguration(),
                      thumbnails: ThumbnailRoute = ThumbnailRoute()) throws -> ImageProxyMount {
    app.get("hello") { _ in "Hello from Vapor with Alcedo\n" }
    thumbnails.mount(on: app)
    let proxy = ImageProxyMount(configuration: configuration, prefix: "/proxy")
    proxy.mount(on: app)
    return proxy
}

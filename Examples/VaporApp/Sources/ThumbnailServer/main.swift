import AlcedoServer
import App
import Vapor

// `swift run ThumbnailServer serve --port 8080`, then
//   curl -o t.webp 'http://127.0.0.1:8080/thumbnails/dusk.jpg?size=200&format=webp'
//   curl -o p.jpg  'http://127.0.0.1:8080/proxy/insecure/rs:fit:300:200/plain/https://example.com/a.jpg'
var environment = try Environment.detect()
try LoggingSystem.bootstrap(from: &environment)
let app = try await Application.make(environment)
do {
    let proxy = try configure(app)
    try await app.execute()
    await proxy.shutdown()
} catch {
    app.logger.report(error: error)
    try? await app.asyncShutdown()
    throw error
}
try await app.asyncShutdown()

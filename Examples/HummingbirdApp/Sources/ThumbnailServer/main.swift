import App

// `swift run ThumbnailServer`, then
//   curl -o t.webp 'http://127.0.0.1:8080/thumbnails/valley.jpg?size=200&format=webp'
//   curl -o p.png  'http://127.0.0.1:8080/proxy/insecure/rs:fit:300:200/f:png/plain/https://example.com/a.jpg'
let (application, service) = buildApplication()
try await application.runService()
await service.shutdown()

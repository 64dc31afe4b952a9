import Alcedo
import Foundation

// Usage:
//   NetworkBenchmarks serve DIR                 serve DIR's files on 127.0.0.1 (prints "PORT n"),
//                                               plus /stall: a 1 MB body that stops after 1 KB
//   NetworkBenchmarks fetch BASE LIST CONC RUNS download every name in LIST from BASE with at
//                                               most CONC at a time, RUNS times; prints JSON
//   NetworkBenchmarks idle URL COUNT SECONDS [alcedo-http|urlsession]
//                                               hold COUNT requests to URL for SECONDS; prints
//                                               the CPU used meanwhile as JSON

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("NetworkBenchmarks: \(message)\n".utf8))
    exit(2)
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "serve":
    guard arguments.count == 2 else { fail("serve DIR") }
    try await FileServer.run(directory: URL(fileURLWithPath: arguments[1]))
case "fetch":
    guard arguments.count == 5, let base = URL(string: arguments[1]), let concurrency = Int(arguments[3]),
          let runs = Int(arguments[4]) else { fail("fetch BASE LIST CONCURRENCY RUNS") }
    let names = try String(contentsOfFile: arguments[2], encoding: .utf8).split(separator: "\n").map(String.init)
    try await BulkFetch.run(urls: names.map { base.appendingPathComponent($0) }, concurrency: concurrency, runs: runs)
case "idle":
    guard arguments.count >= 4, let url = URL(string: arguments[1]), let count = Int(arguments[2]),
          let seconds = Double(arguments[3]) else { fail("idle URL COUNT SECONDS [loader]") }
    await IdleCPU.run(url: url, count: count, seconds: seconds, loader: arguments.count > 4 ? arguments[4] : "alcedo-http")
default:
    fail("serve | fetch | idle")
}

import Alcedo
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `--cache-dir DIR`, as `alcedo fetch`, `prefetch` and `cache` take it.
struct CacheLocationOptions: ParsableArguments {
    @Option(name: .customLong("cache-dir"), help: ArgumentHelp(
        "The disk cache folder (default: the default cache, $XDG_CACHE_HOME/alcedo/default or ~/.cache/alcedo/default).",
        valueName: "dir"))
    var cacheDirectory: String?
}

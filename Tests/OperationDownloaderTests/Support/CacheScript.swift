import Foundation
import Testing

/// One response of the fixture server's `/cache` endpoint (Tests/Support/fixture_cache.py): request n of a tag
/// gets step n (the last step repeats).
struct CacheScriptStep {
    var status = 200
    var headers: [(String, String)] = []
    /// A fixture file as the body (else `body`).
    var file: String?
    var body: String?
    /// Wait for `server.release(hold)` first.
    var hold: String?
    var disconnect = false

    var json: [String: Any] {
        var object: [String: Any] = ["s": status, "h": headers.map { [$0.0, $0.1] }]
        if let file { object["f"] = file }
        if let body { object["b"] = body }
        if let hold { object["hold"] = hold }
        if disconnect { object["disconnect"] = true }
        return object
    }
}

extension FixtureServer {
    /// `/cache/<name>?tag=<tag>&s=<script>`: the same URL (cache key) for every request of the script.
    func cacheURL(_ name: String = "image", tag: String, _ steps: [CacheScriptStep],
                  sourceLocation: SourceLocation = #_sourceLocation) -> URL {
        let data = (try? JSONSerialization.data(withJSONObject: steps.map(\.json), options: [.sortedKeys])) ?? Data("[]".utf8)
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        let script = String(decoding: data, as: UTF8.self).addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
        return url("/cache/\(name)?tag=\(tag)&s=\(script)", sourceLocation: sourceLocation)
    }
}

import Foundation

/// The cache answers of a run, as the last line of every run counts them (the summary table's and `--input`'s):
/// "; cache: 1 memory, 2 HTTP hits, 0 stale, 1 revalidated" always, then "; 2 waited for another process" when a
/// shared cache's single-flight made downloads wait. Failures answered by the cache count too (a stored 404).
struct CacheTally: Equatable {
    var memory = 0
    var hits = 0
    var stale = 0
    var revalidated = 0
    var waits = 0

    init() {}

    init(_ records: [DownloadRecord]) {
        for record in records { add(record) }
    }

    mutating func add(_ record: DownloadRecord) {
        switch record.cacheResult {
        case .memory?: memory += 1
        case .hit?: hits += 1
        case .stale?: stale += 1
        case .revalidated?: revalidated += 1
        case nil: break
        }
        if record.waitedForSharedFetch { waits += 1 }
    }

    var text: String {
        var text = "; cache: \(memory) memory, \(hits) HTTP \(hits == 1 ? "hit" : "hits"), \(stale) stale, \(revalidated) revalidated"
        if waits > 0 { text += "; \(waits) waited for another process" }
        return text
    }
}

extension DownloadRecord.CacheResult {
    /// How a finished line names where the answer came from: "memory cache", "HTTP cache", ...
    var words: String {
        switch self {
        case .memory: return "memory cache"
        case .hit: return "HTTP cache"
        case .stale: return "HTTP cache, stale"
        case .revalidated: return "HTTP cache, revalidated"
        }
    }
}

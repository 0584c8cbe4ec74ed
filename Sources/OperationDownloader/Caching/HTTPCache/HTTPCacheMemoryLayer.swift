import Foundation

/// The small in-memory layer in front of the disk: recently used entries by key, least recently used
/// evicted first. Not thread-safe by itself: `HTTPImageCache` guards it with its lock.
///
/// Each item remembers the identity of the file it came from, so that an entry replaced or removed by
/// another cache instance or process is noticed (one `stat`) instead of served from memory.
struct HTTPCacheMemoryLayer {
    struct Item {
        let response: CachedHTTPResponse
        let fileName: String
        let identity: HTTPCacheDirectory.FileIdentity
        let cost: Int
        var lastAccess: UInt64
    }

    let capacity: Int
    private(set) var usage = 0
    private var items: [String: Item] = [:]
    private var clock: UInt64 = 0

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// Entries bigger than this share of the capacity bypass memory: one large image would evict the rest.
    var maximumItemCost: Int { capacity / 10 }

    var count: Int { items.count }

    mutating func item(forKey key: String) -> Item? {
        guard var item = items[key] else { return nil }
        clock &+= 1
        item.lastAccess = clock
        items[key] = item
        return item
    }

    mutating func insert(_ response: CachedHTTPResponse, fileName: String, identity: HTTPCacheDirectory.FileIdentity) {
        remove(key: response.key)
        let cost = response.data.count + 512
        guard cost <= maximumItemCost else { return }
        clock &+= 1
        items[response.key] = Item(response: response, fileName: fileName, identity: identity, cost: cost, lastAccess: clock)
        usage += cost
        if usage > capacity { evict() }
    }

    mutating func remove(key: String) {
        if let old = items.removeValue(forKey: key) { usage -= old.cost }
    }

    /// Removes items whose file name is in `names` (after a disk trim removed those files).
    mutating func remove(fileNames names: Set<String>) {
        for (key, item) in items where names.contains(item.fileName) {
            remove(key: key)
        }
    }

    mutating func removeAll() {
        items.removeAll()
        usage = 0
    }

    private mutating func evict() {
        let oldestFirst = items.values.sorted { $0.lastAccess < $1.lastAccess }
        for item in oldestFirst where usage > capacity {
            remove(key: item.response.key)
        }
    }
}

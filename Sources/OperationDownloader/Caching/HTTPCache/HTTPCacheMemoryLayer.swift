import Foundation

/// The small in-memory layer in front of the disk: recently used entries by file name, least recently used
/// evicted first. Not thread-safe by itself: `HTTPImageCache` guards it with its lock.
///
/// Each item remembers the identity of the file it came from, so that an entry replaced or removed by
/// another cache instance or process is noticed (one `stat`) instead of served from memory. An item whose
/// write is still queued (`identity == nil`) is trusted as is: it is newer than the file.
struct HTTPCacheMemoryLayer {
    /// What a file holds: a response, or the variant index of a URL.
    enum Content {
        case response(CachedHTTPResponse)
        /// The `Vary` field names and the generation naming the variant files.
        case variantIndex(fields: [String], generation: String)
        /// The file's removal is queued: it reads as absent meanwhile.
        case removed
    }

    struct Item {
        let content: Content
        /// nil while the write of this content is queued.
        var identity: HTTPCacheDirectory.FileIdentity?
        let cost: Int
        var lastAccess: UInt64
        /// Tells this item's write apart from later writes of the same file.
        let serial: UInt64
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

    mutating func item(forFileName name: String) -> Item? {
        guard var item = items[name] else { return nil }
        clock &+= 1
        item.lastAccess = clock
        items[name] = item
        return item
    }

    /// Inserts `content` for `name`. A pending item (`identity` nil) is kept whatever its size until its
    /// write lands; returns the serial that `written(_:serial:identity:)` must quote.
    @discardableResult
    mutating func insert(_ content: Content, fileName name: String, identity: HTTPCacheDirectory.FileIdentity?) -> UInt64 {
        remove(fileName: name)
        clock &+= 1
        let cost = Self.cost(of: content)
        guard identity == nil || cost <= maximumItemCost else { return clock }
        items[name] = Item(content: content, identity: identity, cost: cost, lastAccess: clock, serial: clock)
        usage += cost
        if usage > capacity { evict() }
        return clock
    }

    /// The queued write of `name` (inserted with `serial`) landed as `identity` (nil: it failed).
    mutating func written(_ name: String, serial: UInt64, identity: HTTPCacheDirectory.FileIdentity?) {
        guard var item = items[name], item.serial == serial, item.identity == nil else { return }
        guard let identity, item.cost <= maximumItemCost else {
            remove(fileName: name)
            return
        }
        item.identity = identity
        items[name] = item
    }

    mutating func remove(fileName name: String) {
        if let old = items.removeValue(forKey: name) { usage -= old.cost }
    }

    /// Removes items whose file name is in `names` (after a disk trim removed those files).
    mutating func remove(fileNames names: Set<String>) {
        for name in names { remove(fileName: name) }
    }

    mutating func removeAll() {
        items.removeAll()
        usage = 0
    }

    private static func cost(of content: Content) -> Int {
        switch content {
        case .response(let response): return response.data.count + 512
        case .variantIndex, .removed: return 256
        }
    }

    private mutating func evict() {
        // Pending items stay: their content is not on disk yet.
        let oldestFirst = items.filter { $0.value.identity != nil }.sorted { $0.value.lastAccess < $1.value.lastAccess }
        for (name, _) in oldestFirst where usage > capacity {
            remove(fileName: name)
        }
    }
}

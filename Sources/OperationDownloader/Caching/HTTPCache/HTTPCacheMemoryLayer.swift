import Foundation

/// What an entry (a file, or a Redis key) holds: a response, or the variant index of a URL.
enum HTTPCacheContent {
    case response(CachedHTTPResponse)
    /// The `Vary` field names and the generation naming the variant entries.
    case variantIndex(fields: [String], generation: String)
    /// The entry's removal is queued: it reads as absent meanwhile.
    case removed
}

/// The small in-memory layer in front of the disk (or Redis): recently used entries by name, least recently
/// used evicted first. Not thread-safe by itself: its store guards it with its lock.
///
/// Each item remembers the identity of the entry it came from (a file's inode and size; a Redis value's
/// header), so that an entry replaced or removed by another cache instance or process is noticed (one
/// `stat`, one short read) instead of served from memory. An item whose write is still queued
/// (`identity == nil`) is trusted as is: it is newer than the stored one.
struct HTTPCacheMemoryLayer<Identity: Equatable> {
    typealias Content = HTTPCacheContent

    struct Item {
        let content: Content
        /// nil while the write of this content is queued.
        var identity: Identity?
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
    mutating func insert(_ content: Content, fileName name: String, identity: Identity?) -> UInt64 {
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
    mutating func written(_ name: String, serial: UInt64, identity: Identity?) {
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

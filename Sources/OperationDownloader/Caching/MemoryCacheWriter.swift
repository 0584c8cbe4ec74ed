import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// THE memory-cache writer of one download, for every operation class: each variant's complete image is added
/// once, under the caller's request (before any request modifier) and the variant's identifier, before the
/// caller it answers runs (so a request made from a completion already hits the cache).
///
/// This package's operation calls it from its final answer (CallbackFanOut.swift); an operation of another class
/// gets it through its completion wrappers (ForeignOperation.swift). The downloader makes one per operation
/// when it has a memory cache (Docs/Architecture.md, "The downloader and its operations").
final class MemoryCacheWriter: @unchecked Sendable {  // `lock` guards `written`
    private let cache: any ImageRequestCache
    private let request: URLRequest
    private let lock = NSLock()
    /// The identifiers written so far: a handful at most (one per variant), so an array.
    private var written: [String] = []

    init(cache: any ImageRequestCache, request: URLRequest) {
        self.cache = cache
        self.request = request
    }

    /// Tells the cache that an image of `bytes` is being decoded for it (`ImageCache.makeRoom(forCost:)`).
    func makeRoom(forBytes bytes: Int) {
        cache.makeRoom(forCost: UInt64(max(0, bytes)))
    }

    /// Adds `image` under `identifier` (`ImageVariant.additionalIdentifier`), unless it is incomplete, was
    /// already written for that identifier by this download, or the cache declines it (`shouldCache`).
    func write(_ image: DecodedImage, identifier: String?) {
        guard !image.isIncomplete else { return }
        let key = identifier ?? ""
        let first: Bool = lock.withLock {
            if written.contains(key) { return false }
            written.append(key)
            return true
        }
        guard first, cache.shouldCache(image, for: request, withAdditionalIdentifier: identifier) else { return }
        cache.add(image, for: request, withAdditionalIdentifier: identifier)
    }
}

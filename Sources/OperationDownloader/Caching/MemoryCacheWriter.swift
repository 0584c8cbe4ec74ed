import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// THE memory-cache writer of one download, for every operation class: a complete image is added under the
/// caller's request (before any request modifier) and its variant's identifier, before the caller it answers
/// runs (so a request made from a completion already hits the cache).
///
/// A value (part of the download's `DownloadPlumbing`), with no lock of its own: whoever answers the callers
/// writes each variant once. This package's operation answers all its callers in one pass (CallbackFanOut.swift:
/// `writeMemoryCache`); an operation of another class answers them one by one through completion wrappers, which keep
/// the identifiers written behind their own lock (ForeignOperation.swift). The downloader makes one per operation
/// when it has a memory cache (Docs/Architecture.md, "The downloader and its operations").
struct MemoryCacheWriter: Sendable {
    private let cache: any ImageRequestCache
    private let request: URLRequest

    init(cache: any ImageRequestCache, request: URLRequest) {
        self.cache = cache
        self.request = request
    }

    /// Tells the cache that an image of `bytes` is being decoded for it (`ImageCache.makeRoom(forCost:)`).
    func makeRoom(forBytes bytes: Int) {
        cache.makeRoom(forCost: UInt64(max(0, bytes)))
    }

    /// Adds `image` under `identifier` (`ImageVariant.additionalIdentifier`), unless it is incomplete or the
    /// cache declines it (`shouldCache`). The caller makes sure a variant is written once.
    func write(_ image: DecodedImage, identifier: String?) {
        guard !image.isIncomplete else { return }
        guard cache.shouldCache(image, for: request, withAdditionalIdentifier: identifier) else { return }
        cache.add(image, for: request, withAdditionalIdentifier: identifier)
    }
}

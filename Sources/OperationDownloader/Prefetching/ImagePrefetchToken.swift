import Foundation

/// One `prefetch` call's handle (SDWebImage's `SDWebImagePrefetchToken`): cancel it to stop that prefetch alone.
public final class ImagePrefetchToken: @unchecked Sendable {  // immutable after init (`weak` loads are atomic)
    private weak var prefetcher: ImagePrefetcher?
    let id: UInt64
    /// The URLs of this prefetch, as given.
    public let urls: [URL]

    init(prefetcher: ImagePrefetcher, id: UInt64, urls: [URL]) {
        self.prefetcher = prefetcher
        self.id = id
        self.urls = urls
    }

    /// Stops this prefetch: URLs not started yet are never requested, downloads in flight are cancelled (other
    /// callers of the same URLs keep theirs). Its `completed` handler still runs, once, with every URL counted as
    /// finished and those that did not succeed as skipped. Calling it again, or after completion, does nothing.
    public func cancel() {
        prefetcher?.cancel(id)
    }
}

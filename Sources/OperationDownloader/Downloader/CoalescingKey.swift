import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ImageDownloaderOptions {
    /// The options that change the transfer itself (the request sent, the HTTP cache and cookies, certificate
    /// checks, background time): callers that differ in them never share a transfer (Docs/Options.md,
    /// "Per transfer or per caller"). Every other option is the caller's own.
    static let perTransfer: ImageDownloaderOptions = [
        .useURLCache, .ignoreCachedResponse, .handleCookies, .allowInvalidSSLCertificates, .continueInBackground,
    ]
}

/// The key under which callers share one download in flight: the URL, the cache identifier, and everything
/// that changes the transfer (Nuke keys its data task by URL and cache policy, `TaskFetchOriginalDataKey`).
/// What a caller alone decides (priority, `.progressiveLoad`, its variant) stays out of it, so callers that
/// differ only there share the transfer and each gets what it asked for.
///
/// The key hashes its text once, when made: the map of operations in flight is read and written with it up to
/// five times per download, and hashing a URL's text each time cost about 1.5 k instructions per download.
struct CoalescingKey: Hashable, Sendable {
    /// The URL and whatever else keeps transfers apart.
    let text: String
    /// `text`'s hash, under this process's seed.
    private let textHash: Int

    init(_ text: String) {
        self.text = text
        self.textHash = text.hashValue
    }

    static func == (lhs: CoalescingKey, rhs: CoalescingKey) -> Bool {
        lhs.textHash == rhs.textHash && lhs.text == rhs.text
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(textHash)
    }

    /// `separatesVariants`: the operation class is not this package's (it decodes once, with its own settings,
    /// and may not honour a caller's `.progressiveLoad`), so each variant and progressive choice gets its own
    /// transfer. The common case (no transfer option, this package's class) is the URL and identifier alone.
    static func make(
        url: URL, identifier: String?, options: ImageDownloaderOptions, cachePolicy: URLRequest.CachePolicy,
        variant: ImageVariant, separatesVariants: Bool
    ) -> CoalescingKey {
        var key = url.absoluteString
        if let identifier, !identifier.isEmpty { key += "\u{1F}" + identifier }
        let transfer = effectiveTransferOptions(options)
        if !transfer.isEmpty {
            key += "\u{1F}t\(transfer.rawValue)"
            // With the HTTP cache on, the request's cache policy decides what is read, sent and stored.
            if transfer.contains(.useURLCache) { key += "p\(cachePolicy.rawValue)" }
        }
        if separatesVariants {
            let kind = variant.decoding == nil ? "data" : "image"
            let partials = options.contains(.progressiveLoad) ? "p" : ""
            key += "\u{1F}\(kind)\(partials)\u{1F}\(variant.decoding?.maximumPixelCount ?? 0)\u{1F}" + variant.cacheKey
        }
        return CoalescingKey(key)
    }

    /// The per-transfer options that have an effect: `.ignoreCachedResponse` does nothing without `.useURLCache`,
    /// so callers differing only there still share.
    static func effectiveTransferOptions(_ options: ImageDownloaderOptions) -> ImageDownloaderOptions {
        var transfer = options.intersection(.perTransfer)
        if !transfer.contains(.useURLCache) { transfer.remove(.ignoreCachedResponse) }
        return transfer
    }
}

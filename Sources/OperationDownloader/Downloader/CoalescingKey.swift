import Foundation
import Synchronization
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
/// five times per download, and hashing a URL's text each time was a visible share of a download's cost.
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
        variant: ImageVariant, separatesVariants: Bool, context: ImageDownloaderContext? = nil
    ) -> CoalescingKey {
        var key = url.absoluteString
        if let identifier, !identifier.isEmpty { key += "\u{1F}" + identifier }
        if let fields = context?.transferKeyText { key += "\u{1F}c" + fields }
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

extension ImageDownloaderContext {
    /// The fields this caller set that change its request or how its response is judged (modifiers, decryptor,
    /// coders, size limit, timeouts, HTTP cache), as key text; nil when it set none, the common case. A caller
    /// that sets one never has another caller's value applied to its download, so it gets what it would alone.
    /// Objects count by identity; a modifier that is a value type cannot be compared, so such a caller gets a
    /// transfer of its own. The retry policy is not here: SPEC §10 gives a coalesced download its first
    /// caller's policy.
    var transferKeyText: String? {
        var text = ""
        func object(_ name: String, _ value: Any?) {
            guard let value else { return }
            if type(of: value) is AnyClass {
                text += "\(name)=\(UInt(bitPattern: ObjectIdentifier(value as AnyObject)));"
            } else {
                text += "\(name)=value\(Self.uncomparable.add(1, ordering: .relaxed).newValue);"
            }
        }
        object("request", requestModifier)
        object("response", responseModifier)
        object("decryptor", decryptor)
        object("coders", codersManager)
        object("httpCache", httpCache)
        if let size = maximumResponseSize { text += "size=\(size);" }
        if let timeout = downloadTimeout { text += "timeout=\(timeout);" }
        if let duration = maximumDownloadDuration { text += "duration=\(duration);" }
        return text.isEmpty ? nil : text
    }

    /// Numbers the value-type modifiers met, so that each makes a key of its own.
    private static let uncomparable = Atomic<UInt64>(0)
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
@testable import OperationDownloader
import Testing

/// The coalescing key as a value: what splits a transfer and what does not (Docs/Options.md, "Per transfer or
/// per caller"). The behaviour behind it is in PerCallerOptionsTests and CoalescingTests.
@Suite struct CoalescingKeyTests {
    private static let url = URL(string: "http://key.test/image.png") ?? URL(fileURLWithPath: "/")

    private static func key(
        _ options: ImageDownloaderOptions = [], policy: URLRequest.CachePolicy = .useProtocolCachePolicy,
        identifier: String? = nil, separatesVariants: Bool = false
    ) -> String {
        let variant = ImageVariant(options: options, context: ImageDownloaderContext())
        return CoalescingKey.make(
            url: url, identifier: identifier, options: options, cachePolicy: policy, variant: variant,
            separatesVariants: separatesVariants).text
    }

    @Test func withoutTransferOptionsTheKeyIsTheURLAndIdentifier() {
        #expect(Self.key() == Self.url.absoluteString)
        #expect(Self.key(identifier: "a") == Self.url.absoluteString + "\u{1F}a")
    }

    @Test(arguments: [
        ImageDownloaderOptions.useURLCache, .handleCookies, .allowInvalidSSLCertificates, .continueInBackground,
        [.useURLCache, .ignoreCachedResponse],
    ])
    func eachTransferOptionChangesTheKey(_ options: ImageDownloaderOptions) {
        #expect(Self.key(options) != Self.key())
    }

    @Test func everyCombinationOfTransferOptionsHasItsOwnKey() {
        let singles: [ImageDownloaderOptions] = [.useURLCache, .ignoreCachedResponse, .handleCookies,
                                                 .allowInvalidSSLCertificates, .continueInBackground]
        var keys: Set<String> = []
        var effective: Set<UInt> = []
        for mask in 0..<(1 << singles.count) {
            var options: ImageDownloaderOptions = []
            for (bit, option) in singles.enumerated() where mask & (1 << bit) != 0 { options.insert(option) }
            keys.insert(Self.key(options))
            effective.insert(CoalescingKey.effectiveTransferOptions(options).rawValue)
        }
        // `.ignoreCachedResponse` without `.useURLCache` is no different: one key per effective combination.
        #expect(keys.count == effective.count)
        #expect(effective.count == 24)
    }

    @Test(arguments: [
        ImageDownloaderOptions.progressiveLoad, .lowPriority, .highPriority, .avoidDecodeImage, .scaleDownLargeImages,
        .decodeFirstFrameOnly, .preloadAllFrames, .ignoreCachedResponse,
    ])
    func callerOptionsAndOptionsWithoutEffectKeepTheKey(_ options: ImageDownloaderOptions) {
        #expect(Self.key(options) == Self.key())
    }

    /// A context field that changes the request or how the response is judged is part of the key once the
    /// caller sets it: equal values share, different values (or objects) do not, and unset fields add nothing.
    @Test func contextFieldsThatChangeTheTransferSplitTheKey() {
        func key(_ context: ImageDownloaderContext?) -> String {
            CoalescingKey.make(
                url: Self.url, identifier: nil, options: [], cachePolicy: .useProtocolCachePolicy,
                variant: ImageVariant(options: [], context: context ?? ImageDownloaderContext()),
                separatesVariants: false, context: context).text
        }
        let plain = key(nil)
        #expect(key(ImageDownloaderContext()) == plain)
        #expect(key(ImageDownloaderContext(callbackQueue: .main, traceParent: "00-\(String(repeating: "1", count: 32))-\(String(repeating: "2", count: 16))-01")) == plain)
        #expect(key(ImageDownloaderContext(maximumResponseSize: 10)) == key(ImageDownloaderContext(maximumResponseSize: 10)))
        #expect(key(ImageDownloaderContext(maximumResponseSize: 10)) != key(ImageDownloaderContext(maximumResponseSize: 11)))
        let coders = ImageCodersManager()
        #expect(key(ImageDownloaderContext(codersManager: coders)) == key(ImageDownloaderContext(codersManager: coders)))
        #expect(key(ImageDownloaderContext(codersManager: coders)) != key(ImageDownloaderContext(codersManager: ImageCodersManager())))
        let split: [ImageDownloaderContext] = [
            ImageDownloaderContext(maximumResponseSize: 10), ImageDownloaderContext(downloadTimeout: 5),
            ImageDownloaderContext(maximumDownloadDuration: 9),
            ImageDownloaderContext(codersManager: coders),
        ]
        #expect(Set(split.map(key) + [plain]).count == split.count + 1)
        // The first caller's retry policy applies to every caller that joins (SPEC §10).
        #expect(key(ImageDownloaderContext(retryPolicy: .never)) == plain)
    }

    @Test func theCachePolicyCountsOnlyWithTheHTTPCache() {
        #expect(Self.key(policy: .reloadIgnoringLocalCacheData) == Self.key())
        #expect(Self.key(.useURLCache, policy: .reloadIgnoringLocalCacheData) != Self.key(.useURLCache))
    }

    /// A foreign operation class decodes once for everyone: each variant and partial-image choice is its own transfer.
    @Test func aForeignOperationClassSeparatesVariantsAndPartialImages() {
        #expect(Self.key(.progressiveLoad, separatesVariants: true) != Self.key(separatesVariants: true))
        #expect(Self.key(.avoidDecodeImage, separatesVariants: true) != Self.key(separatesVariants: true))
        #expect(Self.key(.highPriority, separatesVariants: true) == Self.key(separatesVariants: true))
    }
}

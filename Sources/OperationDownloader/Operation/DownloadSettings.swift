import Foundation
import Decoding

/// The settings one operation runs with, resolved once from its context and options. Every default lives
/// here: the configuration's initial values and an operation made without a downloader use the same ones.
struct DownloadSettings: Sendable {
    /// `downloadTimeout` when none (or 0 or less) is given: the idle timeout, in seconds.
    static let defaultIdleTimeout: TimeInterval = 15
    static let defaultMaximumResponseSize = 256 * 1024 * 1024
    static let defaultProgressiveDecodingInterval: TimeInterval = 0.1

    /// No byte for this long fails the transfer (Docs/Options.md).
    let idleTimeout: TimeInterval
    /// The cap on one transfer, or nil.
    let maximumDownloadDuration: TimeInterval?
    let maximumResponseSize: Int
    let callbackQueue: DispatchQueue
    let progressiveDecodingInterval: TimeInterval
    let codersManager: ImageCodersManager
    let postsNotifications: Bool
    /// Whether progressive decoding may run for the callers that ask for partial images (`.progressiveLoad`,
    /// per caller): not with a decryptor (encrypted bytes cannot be decoded as they arrive).
    let mayDecodeProgressively: Bool
    /// Whether the first bytes are checked for a non-image body (a caller wants an image and no decryptor
    /// hides the bytes).
    let sniffsBody: Bool
    /// The retry policy (the context's, which the downloader fills from its configuration), or nil when it
    /// allows one attempt only: then a failure ends the download without consulting any retry rule.
    let retryPolicy: ImageDownloaderRetryPolicy?

    @inline(__always)
    init(options: ImageDownloaderOptions, context: ImageDownloaderContext) {
        idleTimeout = Self.idleTimeout(context.downloadTimeout)
        let duration = context.maximumDownloadDuration ?? 0
        maximumDownloadDuration = duration.isFinite && duration > 0 ? duration : nil
        maximumResponseSize = context.maximumResponseSize ?? Self.defaultMaximumResponseSize
        callbackQueue = context.callbackQueue ?? ImageDownloader.platformDefaultCallbackQueue
        progressiveDecodingInterval = context.progressiveDecodingInterval ?? Self.defaultProgressiveDecodingInterval
        codersManager = context.codersManager ?? .shared
        postsNotifications = context.postsNotifications ?? true
        mayDecodeProgressively = context.decryptor == nil
        sniffsBody = !options.contains(.avoidDecodeImage) && context.decryptor == nil
        retryPolicy = context.retryPolicy.flatMap { $0.maximumAttempts > 1 ? $0 : nil }
    }

    /// The idle timeout for a `downloadTimeout` value: 0, less, nil or not finite means the default.
    static func idleTimeout(_ seconds: TimeInterval?) -> TimeInterval {
        guard let seconds, seconds.isFinite, seconds > 0 else { return defaultIdleTimeout }
        return seconds
    }

    /// Seconds the transport's own timeout lags behind the package's, so the package's always fires first,
    /// even when a loaded process runs the package's timer late. (5 s was not enough: under TSan a process
    /// stalled long enough for corelibs' timer to win, see `backstopTimeout`.)
    static let backstopMargin: TimeInterval = 300

    /// The transport's own backstop for an idle timeout: whole seconds (URLSession on Linux truncates the
    /// request timeout, so 0.5 would fail at once), the idle timeout rounded up plus `backstopMargin`. Far from
    /// it: when corelibs' timer fires while a redirect callback waits on the busy delegate queue, corelibs ends
    /// the task quietly, and the completion handler the callback then calls traps ("Received callback for HTTP
    /// redirection, but we're not waiting for it"). The package's timer cancels the transfer the safe way first.
    static func backstopTimeout(idle seconds: TimeInterval?, margin: TimeInterval = backstopMargin) -> TimeInterval {
        max(1, idleTimeout(seconds).rounded(.up)) + margin
    }

    /// libcurl's backstops lag by less: nothing traps when they fire first (the transfer ends with `.timedOut`,
    /// the same error), and the bare curl transport, which has no operation timer, relies on them.
    static let curlBackstopMargin: TimeInterval = 5
}

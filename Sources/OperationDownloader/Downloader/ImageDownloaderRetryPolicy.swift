import Foundation

/// When and how a failed download is tried again (Docs/Options.md).
///
/// Retried: connection refused, reset or lost, DNS failures, timeouts, and HTTP 408, 429, 500, 502, 503 and
/// 504, as long as the failed attempt delivered nothing to a caller beyond the response (no progress with
/// received bytes, no partial image). Never retried: other statuses, bad image data, too-large bodies, TLS
/// failures and cancellation. The delay before attempt n+1 is random in
/// `0...min(maximumDelay, initialDelay * 2^(n-1))` (full jitter); a `Retry-After` header is a minimum wait,
/// capped at `maximumDelay`.
public struct ImageDownloaderRetryPolicy: Sendable, Equatable {
    /// Total attempts, the first included; 1 never retries.
    public var maximumAttempts: Int
    /// The delay bound before the second attempt; it doubles for each later one.
    public var initialDelay: TimeInterval
    /// The longest any wait may be, `Retry-After` included.
    public var maximumDelay: TimeInterval

    public init(maximumAttempts: Int = 3, initialDelay: TimeInterval = 0.25, maximumDelay: TimeInterval = 30) {
        self.maximumAttempts = maximumAttempts
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
    }

    /// One attempt, no retries (the default). Not `.none`, which would read as nil in an Optional context.
    public static let never = ImageDownloaderRetryPolicy(maximumAttempts: 1)
}

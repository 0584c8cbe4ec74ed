import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What to do after an attempt failed.
enum RetryDecision: Equatable, Sendable {
    /// The failure is final: answer every caller with it.
    case fail
    /// Try again after waiting this many seconds (0 or more, finite).
    case retry(after: TimeInterval)
}

/// Applies an `ImageDownloaderRetryPolicy` to one failed attempt: the operation asks `decide` once per failure.
///
/// Pure apart from its injected random source and clock, so every rule is unit-tested without a network.
struct RetryPlanner: Sendable {
    /// Returns a value in `0...upperBound` (upperBound is finite and ≥ 0).
    typealias RandomSource = @Sendable (_ upperBound: TimeInterval) -> TimeInterval

    let policy: ImageDownloaderRetryPolicy
    private let random: RandomSource
    private let now: @Sendable () -> Date

    /// The system random source: uniform in `0...upperBound`.
    static let systemRandom: RandomSource = { upperBound in
        upperBound > 0 ? TimeInterval.random(in: 0...upperBound) : 0
    }

    init(policy: ImageDownloaderRetryPolicy, random: @escaping RandomSource = RetryPlanner.systemRandom,
         now: @escaping @Sendable () -> Date = { Date() }) {
        self.policy = policy
        self.random = random
        self.now = now
    }

    /// Attempts allowed in all, the first included (at least 1).
    var maximumAttempts: Int { max(1, policy.maximumAttempts) }

    /// The decision after attempt number `attempt` (1 for the first) failed with `failure`.
    ///
    /// - Parameters:
    ///   - response: the failed attempt's response, if one arrived (for `Retry-After`).
    ///
    /// Whether a caller already saw bytes of the failed attempt does not matter: progress starts again from
    /// the next attempt's first byte (Docs/Options.md).
    func decide(after failure: any Error, response: URLResponse?, attempt: Int) -> RetryDecision {
        guard attempt < maximumAttempts, RetryClassification.isRetryable(failure) else {
            return .fail
        }
        let jittered = backoff(after: attempt)
        guard let asked = RetryAfter.delay(in: response, now: now()) else { return .retry(after: jittered) }
        // Retry-After is a minimum wait, capped by maximumDelay like every delay.
        return .retry(after: max(jittered, min(asked, cap)))
    }

    /// Full jitter: random in `0...min(maximumDelay, initialDelay * 2^(attempt-1))` before attempt `attempt + 1`.
    func backoff(after attempt: Int) -> TimeInterval {
        let bound = backoffBound(after: attempt)
        guard bound > 0 else { return 0 }
        let value = random(bound)
        // A test double (or a broken source) cannot push the delay out of range.
        return value.isNaN ? 0 : min(max(0, value), bound)
    }

    /// The upper bound of the jittered delay after attempt `attempt` (finite, ≥ 0).
    func backoffBound(after attempt: Int) -> TimeInterval {
        let initial = policy.initialDelay
        guard initial.isFinite, initial > 0 else { return 0 }
        // 2^(attempt-1) stays finite up to 2^1023; beyond that the cap applies anyway.
        let exponential = initial * pow(2, Double(min(max(0, attempt - 1), 1023)))
        return min(cap, exponential.isFinite ? exponential : cap)
    }

    /// `maximumDelay` made safe: NaN or negative means no wait; infinity means "no cap" but must stay finite
    /// for the random source.
    private var cap: TimeInterval {
        let maximum = policy.maximumDelay
        if maximum.isNaN || maximum <= 0 { return 0 }
        return min(maximum, .greatestFiniteMagnitude)
    }
}

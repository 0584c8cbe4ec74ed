import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// The retry rules of Docs/Options.md as pure units: which failures are retried, the full-jitter backoff, and
/// `Retry-After` (seconds or HTTP date, a minimum wait capped at maximumDelay, invalid values ignored).
@Suite struct RetryPlannerTests {
    private static let url = URL(string: "http://127.0.0.1/a.png")!

    private static func response(status: Int, headers: [String: String] = [:]) -> HTTPURLResponse? {
        HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
    }

    /// A random source that always answers this fraction of the bound, recording each bound asked.
    private final class FixedRandom: @unchecked Sendable {  // `lock` guards `bounds`
        private let lock = NSLock()
        private var bounds: [TimeInterval] = []
        let fraction: Double
        init(_ fraction: Double) { self.fraction = fraction }
        var source: RetryPlanner.RandomSource { { [self] bound in lock.withLock { bounds.append(bound) }; return bound * fraction } }
        var asked: [TimeInterval] { lock.withLock { bounds } }
    }

    private static func planner(
        _ policy: ImageDownloaderRetryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: 5, initialDelay: 1, maximumDelay: 30),
        random: FixedRandom = FixedRandom(1), now: Date = Date(timeIntervalSince1970: 1_700_000_000)
    ) -> RetryPlanner {
        RetryPlanner(policy: policy, random: random.source, now: { now })
    }

    // MARK: Classification

    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func retryableStatuses(_ status: Int) {
        #expect(RetryClassification.isRetryable(ImageDownloaderError.invalidDownloadStatusCode(status)))
    }

    @Test(arguments: [400, 401, 403, 404, 410, 418, 451, 501, 505, 511, 304, 200])
    func otherStatusesAreFinal(_ status: Int) {
        #expect(!RetryClassification.isRetryable(ImageDownloaderError.invalidDownloadStatusCode(status)))
    }

    @Test func transportFailuresThatAreRetried() {
        let codes: [URLError.Code] = [.timedOut, .cannotFindHost, .cannotConnectToHost, .networkConnectionLost, .dnsLookupFailed]
        for code in codes {
            #expect(RetryClassification.isRetryable(ImageDownloaderError.network(URLError(code))), "\(code)")
            #expect(RetryClassification.isRetryable(URLError(code)), "bare \(code)")
            #expect(RetryClassification.isRetryable(NSError(domain: NSURLErrorDomain, code: code.rawValue)), "NSError \(code)")
        }
    }

    @Test func failuresThatAreNeverRetried() {
        let tls: [URLError.Code] = [
            .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
            .clientCertificateRequired,
        ]
        var final: [any Error] = tls.map { ImageDownloaderError.network(URLError($0)) }
        final += [
            ImageDownloaderError.network(URLError(.cancelled)), URLError(.cancelled), CancellationError(),
            ImageDownloaderError.network(URLError(.unknown)),  // FIN mid-body and TLS failures alike on Linux
            ImageDownloaderError.network(URLError(.httpTooManyRedirects)),
            ImageDownloaderError.network(URLError(.unsupportedURL)),
            ImageDownloaderError.cancelled, ImageDownloaderError.badImageData(.notAnImage("an HTML page")),
            ImageDownloaderError.responseTooLarge(1 << 30), ImageDownloaderError.invalidURL,
            ImageDownloaderError.invalidDownloadContentType("text/html"), ImageDownloaderError.invalidDownloadResponse,
            ImageDownloaderError.notModified, ImageDownloaderError.cacheNotModified,
            ImageDownloaderError.invalidDownloadOperation, ImageDownloaderError.unsupportedOnPlatform("TLS"),
            NSError(domain: "other", code: URLError.Code.timedOut.rawValue),
        ]
        for error in final {
            #expect(!RetryClassification.isRetryable(error), "\(error)")
        }
    }

    // MARK: Decisions

    @Test func retriesUntilTheLastAttemptThenFails() {
        let planner = Self.planner(ImageDownloaderRetryPolicy(maximumAttempts: 3, initialDelay: 0.5, maximumDelay: 30))
        let failure = ImageDownloaderError.invalidDownloadStatusCode(503)
        #expect(planner.decide(after: failure, response: nil, attempt: 1) == .retry(after: 0.5))
        #expect(planner.decide(after: failure, response: nil, attempt: 2) == .retry(after: 1))
        #expect(planner.decide(after: failure, response: nil, attempt: 3) == .fail)
    }

    @Test func neverAndNonsensicalAttemptCountsNeverRetry() {
        let failure = ImageDownloaderError.network(URLError(.timedOut))
        for attempts in [1, 0, -5] {
            let planner = Self.planner(ImageDownloaderRetryPolicy(maximumAttempts: attempts))
            #expect(planner.decide(after: failure, response: nil, attempt: 1) == .fail)
        }
        #expect(Self.planner(.never).decide(after: failure, response: nil, attempt: 1) == .fail)
    }

    /// Whether a caller saw bytes of the failed attempt no longer matters: a lost connection is retried.
    @Test func aLostConnectionIsRetried() {
        let planner = Self.planner()
        let failure = ImageDownloaderError.network(URLError(.networkConnectionLost))
        #expect(planner.decide(after: failure, response: nil, attempt: 1) != .fail)
    }

    @Test func nonRetryableFailuresFailAtOnce() {
        let planner = Self.planner()
        for failure: any Error in [ImageDownloaderError.invalidDownloadStatusCode(404), ImageDownloaderError.badImageData(.decoding(.corrupt("x"))), ImageDownloaderError.cancelled] {
            #expect(planner.decide(after: failure, response: Self.response(status: 404), attempt: 1) == .fail)
        }
    }

    // MARK: Backoff

    @Test func fullJitterBoundsDoubleUpToTheCap() {
        let random = FixedRandom(1)
        let planner = Self.planner(ImageDownloaderRetryPolicy(maximumAttempts: 10, initialDelay: 0.25, maximumDelay: 3), random: random)
        let delays = (1...6).map { planner.backoff(after: $0) }
        #expect(delays == [0.25, 0.5, 1, 2, 3, 3])
        #expect(random.asked == [0.25, 0.5, 1, 2, 3, 3])
    }

    @Test func theDelayIsTheRandomValueInsideTheBound() {
        let random = FixedRandom(0.5)
        let planner = Self.planner(ImageDownloaderRetryPolicy(maximumAttempts: 10, initialDelay: 2, maximumDelay: 30), random: random)
        #expect(planner.backoff(after: 1) == 1)
        #expect(planner.backoff(after: 3) == 4)  // bound 8
        let zero = Self.planner(random: FixedRandom(0))
        #expect(zero.backoff(after: 4) == 0)
    }

    @Test func theSystemRandomStaysInsideTheBound() {
        let planner = RetryPlanner(policy: ImageDownloaderRetryPolicy(maximumAttempts: 10, initialDelay: 0.1, maximumDelay: 1))
        var seen = Set<Int>()
        for attempt in 1...6 {
            let bound = planner.backoffBound(after: attempt)
            for _ in 0..<200 {
                let delay = planner.backoff(after: attempt)
                #expect(delay >= 0 && delay <= bound)
                seen.insert(Int(delay / bound * 10))
            }
        }
        // Full jitter spreads over the whole range, not just near the bound.
        #expect(seen.count >= 8)
    }

    @Test func hostileInputsNeverTrapOrGoNegative() {
        let cases: [ImageDownloaderRetryPolicy] = [
            ImageDownloaderRetryPolicy(maximumAttempts: 100, initialDelay: .nan, maximumDelay: 30),
            ImageDownloaderRetryPolicy(maximumAttempts: 100, initialDelay: -1, maximumDelay: 30),
            ImageDownloaderRetryPolicy(maximumAttempts: 100, initialDelay: 1, maximumDelay: .nan),
            ImageDownloaderRetryPolicy(maximumAttempts: 100, initialDelay: 1, maximumDelay: -3),
            ImageDownloaderRetryPolicy(maximumAttempts: .max, initialDelay: .infinity, maximumDelay: .infinity),
            ImageDownloaderRetryPolicy(maximumAttempts: .max, initialDelay: 1e300, maximumDelay: 60),
        ]
        for policy in cases {
            let planner = RetryPlanner(policy: policy)
            for attempt in [1, 2, 64, 2000, Int.max - 1] {
                let delay = planner.backoff(after: attempt)
                #expect(delay >= 0 && delay.isFinite, "\(policy) attempt \(attempt): \(delay)")
            }
        }
        let broken = RetryPlanner(policy: ImageDownloaderRetryPolicy(maximumAttempts: 5), random: { _ in -.infinity })
        #expect(broken.backoff(after: 2) == 0)
        let nan = RetryPlanner(policy: ImageDownloaderRetryPolicy(maximumAttempts: 5), random: { _ in .nan })
        #expect(nan.backoff(after: 2) == 0)
    }

    // MARK: Retry-After

    @Test func retryAfterSecondsIsAMinimumWait() {
        let planner = Self.planner(random: FixedRandom(0))  // jitter 0: the header decides
        let failure = ImageDownloaderError.invalidDownloadStatusCode(429)
        let response = Self.response(status: 429, headers: ["Retry-After": "7"])
        #expect(planner.decide(after: failure, response: response, attempt: 1) == .retry(after: 7))
        // A longer jittered delay wins over a shorter Retry-After.
        let late = Self.planner(ImageDownloaderRetryPolicy(maximumAttempts: 5, initialDelay: 20, maximumDelay: 30))
        #expect(late.decide(after: failure, response: Self.response(status: 503, headers: ["retry-after": "2"]), attempt: 1) == .retry(after: 20))
    }

    @Test func retryAfterIsCappedAtMaximumDelay() {
        let planner = Self.planner(ImageDownloaderRetryPolicy(maximumAttempts: 5, initialDelay: 0.1, maximumDelay: 2), random: FixedRandom(0))
        let failure = ImageDownloaderError.invalidDownloadStatusCode(503)
        for value in ["3600", "99999999999999999999999999", "Wed, 21 Oct 2099 07:28:00 GMT"] {
            let response = Self.response(status: 503, headers: ["Retry-After": value])
            #expect(planner.decide(after: failure, response: response, attempt: 1) == .retry(after: 2), "\(value)")
        }
    }

    @Test func retryAfterAsAnHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)  // Tue, 14 Nov 2023 22:13:20 GMT
        #expect(RetryAfter.parse("Tue, 14 Nov 2023 22:13:25 GMT", now: now) == 5)
        #expect(RetryAfter.parse("Tuesday, 14-Nov-23 22:13:30 GMT", now: now) == 10)
        #expect(RetryAfter.parse("Tue Nov 14 22:13:21 2023", now: now) == 1)
        // In the past: no extra wait.
        #expect(RetryAfter.parse("Tue, 14 Nov 2023 22:00:00 GMT", now: now) == 0)
        let planner = Self.planner(random: FixedRandom(0), now: now)
        let response = Self.response(status: 503, headers: ["Retry-After": "Tue, 14 Nov 2023 22:13:24 GMT"])
        #expect(planner.decide(after: ImageDownloaderError.invalidDownloadStatusCode(503), response: response, attempt: 1) == .retry(after: 4))
    }

    @Test func invalidRetryAfterValuesAreIgnored() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        for value in ["", "  ", "-5", "+5", "1.5", "5s", "soon", "0x10", "Tue, 14 Nov 2023 25:00:00 GMT", String(repeating: "9 ", count: 100)] {
            #expect(RetryAfter.parse(value, now: now) == nil, "'\(value)'")
        }
        #expect(RetryAfter.parse(" 12 ", now: now) == 12)
        #expect(RetryAfter.parse("0", now: now) == 0)
        let planner = Self.planner(random: FixedRandom(0.5))
        let response = Self.response(status: 503, headers: ["Retry-After": "soon"])
        // Ignored: the jittered delay alone (bound 1 s for the first retry, half of it).
        #expect(planner.decide(after: ImageDownloaderError.invalidDownloadStatusCode(503), response: response, attempt: 1) == .retry(after: 0.5))
        #expect(RetryAfter.delay(in: nil, now: now) == nil)
        #expect(RetryAfter.delay(in: URLResponse(url: Self.url, mimeType: nil, expectedContentLength: 0, textEncodingName: nil), now: now) == nil)
    }
}

import Foundation
import Decoding
import Synchronization

/// The final decodes of a download (one per variant the callers want): their duration without the budget wait,
/// the wait itself, refusals by the decode memory budget, the budget's state, and a span each.
extension DownloadObservation {
    /// One decode in progress: its start, its span, and how long it waited for the decode memory budget (told by
    /// the budget, on the decoding thread).
    final class Decode: Sendable {
        let began = Monotonic.now()
        let span: (any ImageDownloaderSpan)?
        private let waitedNanoseconds = Atomic<UInt64>(0)

        init(span: (any ImageDownloaderSpan)?) {
            self.span = span
        }

        func waited(_ nanoseconds: UInt64) {
            waitedNanoseconds.wrappingAdd(nanoseconds, ordering: .relaxed)
        }

        var waited: UInt64 { waitedNanoseconds.load(ordering: .relaxed) }
    }

    /// A final decode begins.
    func decodeBegins() -> Decode {
        let parent = spans?.withLock { $0.download }?.context ?? trace
        let span = self.tracer?.startSpan("image.decode", parent: parent, ofKind: .internal, links: [])
        return Decode(span: span)
    }

    /// The decode's hook for `ImageDecodingOptions.budgetWaited`: the wait is timed and reported at once.
    func budgetWaitHook(for decode: Decode) -> DecodeBudgetWaitHook {
        let metrics = self.metrics
        let logger = telemetry?.logger
        let url = self.url
        return DecodeBudgetWaitHook { nanoseconds in
            decode.waited(nanoseconds)
            metrics?.budgetWait.recordNanoseconds(Int64(clamping: nanoseconds))
            logger?.log(
                .debug, "waited \(Double(nanoseconds) / 1e9) s for the decode memory budget to decode \(url?.absoluteString ?? "an image")",
                metadata: ["wait_seconds": String(Double(nanoseconds) / 1e9), "url": url?.absoluteString ?? ""])
        }
    }

    /// The decode ended with an image of `format` (or failed with `error`); `budget` is the one it reserved against.
    func decodeEnded(_ decode: Decode, format: ImageFormat, error: (any Error)?, budget: ImageDecodingBudget) {
        let total = Monotonic.now() &- decode.began
        let waited = decode.waited
        let working = total > waited ? total - waited : 0
        if let metrics = self.metrics {
            metrics.timer(MetricName.decodeDuration, "format", MetricLabels.format(format)).recordNanoseconds(Int64(clamping: working))
            metrics.sampleDecodeBudget(budget)
            if case .exceedsDecodingBudget? = error as? ImageDecodingError {
                metrics.counter(MetricName.decodeBudgetRefusals, "reason", "too_large").increment(by: 1)
            }
        }
        if case .exceedsDecodingBudget(let width, let height, let bytes, let budget)? = error as? ImageDecodingError {
            telemetry?.logger.log(
                .warning, "the decode memory budget refuses \(url?.absoluteString ?? "an image"): \(width)x\(height) needs \(bytes) bytes, more than the whole budget of \(budget)",
                metadata: ["url": url?.absoluteString ?? "", "bytes": String(bytes), "budget_bytes": String(budget)])
        }
        guard let span = decode.span else { return }
        span.setAttribute(.string(MetricLabels.format(format)), forKey: "image.format")
        if waited > 0 { span.setAttribute(.double(Double(waited) / 1e9), forKey: "od.decode.budget_wait_seconds") }
        if let error {
            span.recordError(error)
            span.setStatus(.error(description: String(describing: error)))
        }
        span.end()
    }
}

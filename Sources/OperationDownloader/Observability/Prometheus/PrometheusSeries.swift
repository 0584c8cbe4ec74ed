import Foundation
import Synchronization

/// One labelled series of a `PrometheusMetrics` family: a counter (an atomic), a gauge or a histogram (each
/// behind its own small lock), so an update never waits for another series or for a rendering (which reads each
/// series once).
enum PrometheusSeries: Sendable {
    case counter(PrometheusCounter)
    case gauge(PrometheusGauge)
    case histogram(PrometheusHistogram)

    /// The series' object as a plain reference (the enum keeps its case in the reference's spare bits).
    var object: AnyObject {
        switch self {
        case .counter(let counter): counter
        case .gauge(let gauge): gauge
        case .histogram(let histogram): histogram
        }
    }
}

/// A counter series: one atomic add per increment.
final class PrometheusCounter: ImageDownloaderCounterHandler, Sendable {
    private let value = Atomic<Int64>(0)

    func increment(by amount: Int64) {
        guard amount > 0 else { return }  // a counter only goes up
        value.wrappingAdd(amount, ordering: .relaxed)
    }

    func reset() {
        value.store(0, ordering: .relaxed)
    }

    var current: Int64 { value.load(ordering: .relaxed) }
}

/// A gauge series (its lock is inside the object: one allocation per series).
final class PrometheusGauge: ImageDownloaderMeterHandler, Sendable {
    private let value = Locked<Double>(0)

    func set(_ value: Double) {
        self.value.withLock { $0 = value }
    }

    func increment(by amount: Double) {
        value.withLock { $0 += amount }
    }

    func decrement(by amount: Double) {
        value.withLock { $0 -= amount }
    }

    var current: Double { value.withLock { $0 } }
}

/// A histogram series: a count per bucket (not cumulative; the exposition adds them up), the sum and the count.
final class PrometheusHistogram: ImageDownloaderTimerHandler, Sendable {
    struct Snapshot: Sendable {
        /// Observations per bucket of `upperBounds`, then one for `+Inf`.
        var counts: [UInt64]
        var sum: Double
        var count: UInt64
    }

    /// Finite, sorted upper bounds in seconds.
    let upperBounds: [Double]
    private let state: Locked<Snapshot>

    init(upperBounds: [Double]) {
        self.upperBounds = upperBounds
        state = Locked(Snapshot(counts: Array(repeating: 0, count: upperBounds.count + 1), sum: 0, count: 0))
    }

    func recordNanoseconds(_ duration: Int64) {
        observe(Double(max(0, duration)) / 1e9)
    }

    func observe(_ seconds: Double) {
        guard seconds.isFinite else { return }
        // A dozen bounds: a linear scan beats a binary search here.
        var index = upperBounds.count
        for (i, bound) in upperBounds.enumerated() where seconds <= bound {
            index = i
            break
        }
        state.withLock {
            $0.counts[index] &+= 1
            $0.sum += seconds
            $0.count &+= 1
        }
    }

    var snapshot: Snapshot { state.withLock { $0 } }
}

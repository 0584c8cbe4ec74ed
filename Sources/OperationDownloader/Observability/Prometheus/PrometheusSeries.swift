import Foundation
import Synchronization

/// One labelled series of a `PrometheusMetrics` family: a counter, a gauge or a histogram, each of atomics, so
/// an update takes no lock and never waits for another series or for a rendering (which reads each series once).
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

/// A gauge series: the value's bits in one atomic (a set is a store, a change a compare-and-exchange loop).
final class PrometheusGauge: ImageDownloaderMeterHandler, Sendable {
    private let bits = Atomic<UInt64>(0.0.bitPattern)

    func set(_ value: Double) {
        bits.store(value.bitPattern, ordering: .relaxed)
    }

    func increment(by amount: Double) {
        bits.add(amount)
    }

    func decrement(by amount: Double) {
        bits.add(-amount)
    }

    var current: Double { Double(bitPattern: bits.load(ordering: .relaxed)) }
}

/// A histogram series: an atomic count per bucket (not cumulative; the exposition adds them up) and the sum's
/// bits, so an observation takes no lock. The count is the buckets' total, so `_count` always equals the `+Inf`
/// bucket; a rendering during an observation may see its bucket without its sum (Prometheus' own clients read
/// their histograms the same way).
final class PrometheusHistogram: ImageDownloaderTimerHandler, @unchecked Sendable {  // `cells` are atomics
    struct Snapshot: Sendable {
        /// Observations per bucket of `upperBounds`, then one for `+Inf`.
        var counts: [UInt64]
        var sum: Double
        var count: UInt64
    }

    /// Finite, sorted upper bounds in seconds.
    let upperBounds: [Double]
    /// One count per bucket (`upperBounds.count + 1`), then the sum's bits.
    private let cells: UnsafeMutablePointer<Atomic<UInt64>>
    private var cellCount: Int { upperBounds.count + 2 }

    init(upperBounds: [Double]) {
        self.upperBounds = upperBounds
        cells = .allocate(capacity: upperBounds.count + 2)
        for i in 0..<(upperBounds.count + 2) { (cells + i).initialize(to: Atomic(0)) }
    }

    deinit {
        cells.deinitialize(count: cellCount)
        cells.deallocate()
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
        cells[index].wrappingAdd(1, ordering: .relaxed)
        cells[upperBounds.count + 1].add(seconds)
    }

    var snapshot: Snapshot {
        let counts = (0...upperBounds.count).map { cells[$0].load(ordering: .relaxed) }
        let sum = Double(bitPattern: cells[upperBounds.count + 1].load(ordering: .relaxed))
        return Snapshot(counts: counts, sum: sum, count: counts.reduce(0, &+))
    }
}

extension Atomic where Value == UInt64 {
    /// Adds `amount` to the `Double` whose bits this atomic holds: a compare-and-exchange loop, so concurrent
    /// additions are never lost (a gauge's value, a histogram's sum).
    func add(_ amount: Double) {
        var old = load(ordering: .relaxed)
        while true {
            let (exchanged, found) = compareExchange(
                expected: old, desired: (Double(bitPattern: old) + amount).bitPattern, ordering: .relaxed)
            if exchanged { return }
            old = found
        }
    }
}

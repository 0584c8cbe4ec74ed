/// Repeated measurements of one figure; the report gives min and median.
struct Samples {
    private(set) var values: [Double] = []

    init(_ values: [Double] = []) { self.values = values.filter(\.isFinite) }

    mutating func add(_ value: Double) {
        if value.isFinite { values.append(value) }
    }

    var count: Int { values.count }
    var min: Double? { values.min() }
    var max: Double? { values.max() }

    /// The middle value (mean of the two middle ones for an even count).
    var median: Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }

    /// Each value transformed (for example seconds to milliseconds).
    func map(_ transform: (Double) -> Double) -> Samples { Samples(values.map(transform)) }
}

/// Per-round ratios of two sample series measured in the same rounds (a[i] / b[i]).
func ratios(_ a: Samples, _ b: Samples) -> Samples {
    Samples(zip(a.values, b.values).compactMap { $1 != 0 ? $0 / $1 : nil })
}

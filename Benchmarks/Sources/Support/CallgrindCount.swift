import Foundation

/// The instruction count of one callgrind run, without the loops whose length depends on the clock.
///
/// Highway (libhwy, loaded with libjxl when the decoders probe their libraries) measures its timer's resolution
/// in a library initializer: 257 loops that spin until the clock ticks, 3.6 M to 6.2 M instructions depending on
/// the wall time callgrind's slowdown gives them. That scatter, divided by the 20 downloads the quick run's
/// instruction sections used to count, swung `instructions_ratio_vs_urlsession` from 0.73 to 1.28 between two
/// runs of one commit. The spin is start-up, the same in every process: its cost (inclusive, from the call
/// records in the output) is taken out of the total.
enum CallgrindCount {
    /// Functions whose cost depends on the clock, by the start of their demangled name.
    static let clockLoops = ["hwy::platform::TimerResolution"]

    /// The total Ir of all threads ("summary:" or "totals:"), less the inclusive cost of every call to a
    /// `clockLoops` function.
    static func instructions(_ file: URL) throws -> Int {
        let text = try String(contentsOf: file, encoding: .utf8)
        var total: Int?
        var excluded = 0
        var names: [Substring: Substring] = [:]  // callgrind's name compression: "(12) name" once, then "(12)"
        var callsClockLoop = false
        var costOfCallFollows = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if costOfCallFollows {
                // The line after "calls=": "<position> <inclusive Ir>".
                costOfCallFollows = false
                excluded += line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            } else if line.hasPrefix("calls=") {
                costOfCallFollows = callsClockLoop
                callsClockLoop = false
            } else if line.hasPrefix("cfn=") {
                let name = Self.name(line.dropFirst(4), names: &names)
                callsClockLoop = clockLoops.contains { name.hasPrefix($0) }
            } else if line.hasPrefix("fn=") {
                _ = Self.name(line.dropFirst(3), names: &names)
            } else if line.hasPrefix("summary:") || line.hasPrefix("totals:") {
                total = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? total
            }
        }
        guard let total else { throw BenchmarkError.failed("callgrind output without a summary line: \(file.path)") }
        return total - excluded
    }

    /// The function name of "(id) name", "(id)" (a name given before) or a plain "name".
    private static func name(_ field: Substring, names: inout [Substring: Substring]) -> Substring {
        guard field.hasPrefix("("), let close = field.firstIndex(of: ")") else { return field }
        let id = field[...close]
        let rest = field[field.index(after: close)...].drop { $0 == " " }
        if rest.isEmpty { return names[id] ?? "" }
        names[id] = rest
        return rest
    }
}

import Foundation
import Testing

/// The Prometheus text exposition format read back (what a scraper does): every line is a comment (`# HELP`,
/// `# TYPE`), or a sample `name{label="value",...} number`. Escapes are undone; a malformed line, a sample
/// before its family's TYPE, or a repeated series throws.
struct Exposition {
    struct Sample: Equatable {
        let name: String
        let labels: [String: String]
        let value: Double
    }

    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    private(set) var samples: [Sample] = []
    /// TYPE and HELP per family name.
    private(set) var types: [String: String] = [:]
    private(set) var helps: [String: String] = [:]

    init(_ text: String) throws {
        var seen = Set<String>()
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() where !line.isEmpty {
            if line.hasPrefix("# HELP ") {
                let rest = line.dropFirst(7)
                guard let space = rest.firstIndex(of: " ") else { throw Problem(description: "line \(number + 1): HELP without text") }
                helps[String(rest[..<space])] = Self.unescape(String(rest[rest.index(after: space)...]), quote: false)
            } else if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst(7).split(separator: " ")
                guard parts.count == 2 else { throw Problem(description: "line \(number + 1): bad TYPE") }
                types[String(parts[0])] = String(parts[1])
            } else if line.hasPrefix("#") {
                continue
            } else {
                let sample = try Self.sample(String(line), line: number + 1)
                let family = Self.family(of: sample.name, types: types)
                guard types[family] != nil else { throw Problem(description: "line \(number + 1): \(sample.name) before its TYPE") }
                let identity = sample.name + "|" + sample.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
                guard seen.insert(identity).inserted else { throw Problem(description: "line \(number + 1): repeated series \(identity)") }
                samples.append(sample)
            }
        }
    }

    /// The family a sample belongs to (`x_bucket`, `x_sum`, `x_count` of histogram `x`).
    static func family(of name: String, types: [String: String]) -> String {
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if types[base] == "histogram" { return base }
        }
        return name
    }

    /// The value of the one sample `name` with exactly `labels`; nil when absent.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    /// The sum over samples `name` whose labels include `matching`.
    func total(_ name: String, _ matching: [String: String] = [:]) -> Double {
        samples.filter { sample in sample.name == name && matching.allSatisfy { sample.labels[$0.key] == $0.value } }
            .reduce(0) { $0 + $1.value }
    }

    /// The distinct label sets of `name`.
    func series(_ name: String) -> [[String: String]] {
        samples.filter { $0.name == name }.map(\.labels)
    }

    private static func sample(_ line: String, line number: Int) throws -> Sample {
        var index = line.startIndex
        while index < line.endIndex, line[index] != "{", line[index] != " " { index = line.index(after: index) }
        let name = String(line[..<index])
        guard !name.isEmpty else { throw Problem(description: "line \(number): no metric name") }
        var labels: [String: String] = [:]
        if index < line.endIndex, line[index] == "{" {
            index = line.index(after: index)
            while index < line.endIndex, line[index] != "}" {
                guard let equals = line[index...].firstIndex(of: "=") else { throw Problem(description: "line \(number): label without =") }
                let label = String(line[index..<equals])
                var cursor = line.index(after: equals)
                guard cursor < line.endIndex, line[cursor] == "\"" else { throw Problem(description: "line \(number): unquoted value") }
                cursor = line.index(after: cursor)
                var raw = ""
                while cursor < line.endIndex, line[cursor] != "\"" {
                    if line[cursor] == "\\" {
                        raw.append(line[cursor])
                        cursor = line.index(after: cursor)
                        guard cursor < line.endIndex else { break }
                    }
                    raw.append(line[cursor])
                    cursor = line.index(after: cursor)
                }
                guard cursor < line.endIndex else { throw Problem(description: "line \(number): unterminated value") }
                labels[label] = unescape(raw, quote: true)
                index = line.index(after: cursor)
                if index < line.endIndex, line[index] == "," { index = line.index(after: index) }
            }
            guard index < line.endIndex else { throw Problem(description: "line \(number): unterminated labels") }
            index = line.index(after: index)
        }
        let rest = line[index...].trimmingCharacters(in: .whitespaces).split(separator: " ")
        guard let text = rest.first else { throw Problem(description: "line \(number): no value") }
        let value: Double
        switch text {
        case "+Inf": value = .infinity
        case "-Inf": value = -.infinity
        case "NaN": value = .nan
        default:
            guard let parsed = Double(text) else { throw Problem(description: "line \(number): bad value \(text)") }
            value = parsed
        }
        return Sample(name: name, labels: labels, value: value)
    }

    private static func unescape(_ text: String, quote: Bool) -> String {
        var result = ""
        var escaping = false
        for character in text {
            if escaping {
                switch character {
                case "n": result.append("\n")
                case "\\": result.append("\\")
                case "\"" where quote: result.append("\"")
                default: result.append("\\"); result.append(character)
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                result.append(character)
            }
        }
        return result
    }
}

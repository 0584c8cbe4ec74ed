import Foundation

/// `Benchmarks <command> [--name value]... [--flag]...`: the command and its options.
struct Arguments {
    let command: String
    let positional: [String]
    private let values: [String: String]
    private let flags: Set<String>

    static let flagNames: Set<String> = ["--quick", "--help"]

    init(_ raw: [String]) {
        var rest = raw.dropFirst()
        command = rest.popFirst() ?? "help"
        var values: [String: String] = [:]
        var flags: Set<String> = []
        var positional: [String] = []
        while let item = rest.popFirst() {
            if Self.flagNames.contains(item) {
                flags.insert(item)
            } else if item.hasPrefix("--") {
                values[item] = rest.popFirst() ?? ""
            } else {
                positional.append(item)
            }
        }
        self.values = values
        self.flags = flags
        self.positional = positional
    }

    func value(_ name: String) -> String? { values[name] }
    func has(_ flag: String) -> Bool { flags.contains(flag) }

    func required(_ name: String) throws -> String {
        guard let value = values[name], !value.isEmpty else { throw BenchmarkError.missing("option \(name)") }
        return value
    }

    static let usage = """
    usage (normally through Benchmarks/run.sh):
      Benchmarks prepare --dir DIR --corpus CORPUS [--quick]
      Benchmarks run --dir DIR --base-url URL --access-log FILE [--quick] [--results DIR] [--docs FILE] [--sections LIST]
                     [--tls-base-url URL --ca-file FILE --ca-bundle FILE] [--redis-url redis://HOST:PORT/DB]
      Benchmarks child WORKLOAD --dir DIR --base-url URL --count N
      Benchmarks transport-child WORKLOAD --dir DIR --base-url URL --count N [--ca-file FILE]
    sections: download, coalescing, decode, progressive, memory, instructions, thumbnail, transports, transport-instructions, fleet
    """
}

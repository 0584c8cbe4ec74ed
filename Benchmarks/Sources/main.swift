import Decoding
import Foundation

// The benchmark of issue 6. Benchmarks/run.sh installs the tools, builds this in release mode, generates the
// fixtures (`prepare`), starts nginx on 127.0.0.1 and runs every section (`run`). See Docs/Benchmarks.md.

let arguments = Arguments(CommandLine.arguments)

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("Benchmarks: \(message)\n".utf8))
    exit(1)
}

/// This executable's absolute path, for child processes.
func executablePath() -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
}

do {
    switch arguments.command {
    case "prepare":
        let fixtures = Fixtures(directory: URL(fileURLWithPath: try arguments.required("--dir")))
        let corpus = URL(fileURLWithPath: try arguments.required("--corpus"))
        let count = arguments.has("--quick") ? 200 : 1000
        try fixtures.prepare(corpus: corpus, smallCount: count) { FileHandle.standardError.write(Data("[prepare] \($0)\n".utf8)) }

    case "run":
        let quick = arguments.has("--quick")
        var context = RunContext(
            fixtures: Fixtures(directory: URL(fileURLWithPath: try arguments.required("--dir"))),
            baseURL: try arguments.required("--base-url"),
            accessLog: URL(fileURLWithPath: try arguments.required("--access-log")),
            quick: quick, report: BenchmarkReport(), executable: executablePath())
        context.tls = RunContext.TLSEndpoint(arguments)
        context.redisURL = arguments.value("--redis-url")
        let sections = arguments.value("--sections").map { Set($0.split(separator: ",").map(String.init)) }
        let runner = BenchmarkRunner(context: context, sections: sections)
        let ok = runner.run(
            resultsDirectory: arguments.value("--results").map { URL(fileURLWithPath: $0) },
            docs: arguments.value("--docs").map { URL(fileURLWithPath: $0) })
        exit(ok ? 0 : 1)

    case "child":
        guard let name = arguments.positional.first, let workload = ChildWorkload(rawValue: name) else {
            fail("unknown workload; one of \(ChildWorkload.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let count = Int(try arguments.required("--count")), count > 0 else { fail("--count must be positive") }
        let fixtures = Fixtures(directory: URL(fileURLWithPath: try arguments.required("--dir")))
        let format = RunContext.jpegCoderAvailable ? "jpg" : "png"
        exit(workload.run(
            baseURL: try arguments.required("--base-url"), count: count,
            smallAvailable: fixtures.smallCount(format: "jpg"), smallFormat: format))

    case "transport-child":
        guard let name = arguments.positional.first, let workload = TransportWorkload(rawValue: name) else {
            fail("unknown transport workload; one of \(TransportWorkload.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let count = Int(try arguments.required("--count")), count > 0 else { fail("--count must be positive") }
        let fixtures = Fixtures(directory: URL(fileURLWithPath: try arguments.required("--dir")))
        exit(workload.run(baseURL: try arguments.required("--base-url"), count: count,
                          smallAvailable: fixtures.smallCount(format: "jpg"), caFile: arguments.value("--ca-file")))

    default:
        print(Arguments.usage)
        exit(arguments.command == "help" || arguments.has("--help") ? 0 : 2)
    }
} catch {
    fail(String(describing: error))
}

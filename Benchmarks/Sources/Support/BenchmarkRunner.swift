import Decoding
import Foundation

/// Runs the sections in order, then writes latest.json (or quick.json), the Markdown table, the SVG chart
/// and, when asked, the results block of Docs/Benchmarks.md.
struct BenchmarkRunner {
    let context: RunContext
    /// nil runs every section.
    let sections: Set<String>?

    static let docsBegin = "<!-- benchmark-results:begin -->"
    static let docsEnd = "<!-- benchmark-results:end -->"

    /// Returns false when a measurement failed (not when a goal was missed).
    func run(resultsDirectory: URL?, docs: URL?) -> Bool {
        let report = context.report
        report.environment = environment()
        let all: [(String, () throws -> Void)] = [
            ("download", { try DownloadBenchmark(context: context).run() }),
            ("coalescing", { try CoalescingBenchmark(context: context).run() }),
            ("decode", { try DecodeBenchmark(context: context).run() }),
            ("progressive", { try ProgressiveBenchmark(context: context).run() }),
            ("memory", { try MemoryBenchmark(context: context).run() }),
            ("instructions", { try InstructionsBenchmark(context: context).run() }),
            ("thumbnail", { try ThumbnailBenchmark(context: context).run() }),
            ("transports", { try TransportBenchmark(context: context).run() }),
            ("transport-instructions", { try TransportInstructionsBenchmark(context: context).run() }),
            ("https-crashes", { try HTTPSCrashBenchmark(context: context).run() }),
            ("animation", { try AnimationBenchmark(context: context).run() }),
            ("fleet", { try FleetBenchmark(context: context).run(); try FleetFailoverBenchmark(context: context).run() }),
        ]
        let started = Clock.wall()
        for (name, body) in all where sections?.contains(name) ?? true {
            let t0 = Clock.wall()
            context.log("section \(name)")
            do {
                try body()
            } catch {
                report.error("\(name): \(error)")
            }
            context.log("section \(name) took \(String(format: "%.1f", Clock.wall() - t0)) s")
        }
        report.enforceGoals(sectionsRun: Set(all.map(\.0).filter { sections?.contains($0) ?? true }))
        report.environment.append(("benchmark_seconds", JSONValue.rounded(Clock.wall() - started, digits: 1)))
        report.environment.append(("load_average_end", .string(Self.loadAverage())))

        let table = MarkdownReport.render(report, quick: context.quick)
        print(table)
        if let resultsDirectory {
            do {
                try write(report: report, table: table, to: resultsDirectory)
                if let docs, !context.quick { try updateDocs(docs, table: table) }
            } catch {
                report.error("writing results: \(error)")
                FileHandle.standardError.write(Data("Benchmarks: writing results: \(error)\n".utf8))
            }
        }
        return report.errors.isEmpty
    }

    private func write(report: BenchmarkReport, table: String, to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // A run of some sections only must not replace the full run's results.
        let name = context.quick ? "quick" : sections == nil ? "latest" : "partial"
        try (report.json(quick: context.quick).serialized() + "\n")
            .write(to: directory.appendingPathComponent("\(name).json"), atomically: true, encoding: .utf8)
        try table.write(to: directory.appendingPathComponent("\(name).md"), atomically: true, encoding: .utf8)
        let title = context.quick ? "OperationDownloader benchmark (--quick run)" : "OperationDownloader benchmark"
        let chart = name == "latest" ? "chart.svg" : "\(name)-chart.svg"
        try SVGChart.render(report, title: title)
            .write(to: directory.appendingPathComponent(chart), atomically: true, encoding: .utf8)
        context.log("wrote \(directory.path)/\(name).json, \(name).md, \(chart)")
    }

    /// Replaces the text between the results markers of the docs page with this run's table.
    private func updateDocs(_ docs: URL, table: String) throws {
        let text = try String(contentsOf: docs, encoding: .utf8)
        guard let begin = text.range(of: Self.docsBegin), let end = text.range(of: Self.docsEnd),
              begin.upperBound <= end.lowerBound else {
            throw BenchmarkError.missing("results markers in \(docs.path)")
        }
        let date = ISO8601DateFormatter().string(from: Date())
        let environment = Dictionary(context.report.environment, uniquingKeysWith: { first, _ in first })
        var commit = ""
        if case .string(let sha)? = environment["commit"] {
            commit = " at commit \(sha.prefix(12))"
            if case .bool(let dirty)? = environment["dirty"] { commit += dirty ? " with uncommitted changes" : " (clean tree)" }
        }
        let block = "\n_Generated by `bash Benchmarks/run.sh` on \(date)\(commit)._\n\n" + table + "\n"
        try (text[..<begin.upperBound] + block + text[end.lowerBound...])
            .write(to: docs, atomically: true, encoding: .utf8)
        context.log("updated \(docs.path)")
    }

    /// The 1, 5 and 15 minute load averages.
    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    private func environment() -> [(String, JSONValue)] {
        let info = ProcessInfo.processInfo
        var pairs: [(String, JSONValue)] = [
            ("cores", .number(Double(info.activeProcessorCount))),
            ("memory_gb", JSONValue.rounded(Double(info.physicalMemory) / 1_073_741_824, digits: 1)),
            ("os", .string(info.operatingSystemVersionString)),
            ("libjpeg", .string(CodecLibraries.jpeg)),
            ("libpng", .string(CodecLibraries.png)),
            ("jpeg_coder_registered", .bool(RunContext.jpegCoderAvailable)),
            ("base_url", .string(context.baseURL)),
            // Other work on the machine skews wall-clock figures; the ratios are taken within a round.
            ("load_average_start", .string(Self.loadAverage())),
        ]
        // What was measured: the commit, and whether the tree differed from it (the files that did).
        let commit = (try? ChildProcess.run(["git", "rev-parse", "HEAD"], captureOutput: true))
            .flatMap { $0.status == 0 ? $0.output.trimmingCharacters(in: .whitespacesAndNewlines) : nil }
        let changed = (try? ChildProcess.run(["git", "status", "--porcelain", "--untracked-files=no"], captureOutput: true))
            .flatMap { $0.status == 0 ? $0.output.split(separator: "\n").map { String($0.dropFirst(3)) } : nil }
        pairs.append(("commit", commit.map(JSONValue.string) ?? .null))
        pairs.append(("dirty", changed.map { .bool(!$0.isEmpty) } ?? .null))
        if let changed, !changed.isEmpty { pairs.append(("dirty_files", .array(changed.prefix(40).map(JSONValue.string)))) }
        if let cpu = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
           let line = cpu.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
           let name = line.split(separator: ":", maxSplits: 1).last {
            pairs.append(("cpu", .string(name.trimmingCharacters(in: .whitespaces))))
        }
        return pairs
    }
}

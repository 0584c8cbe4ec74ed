import Foundation

/// Issue 17's thumbnail pipeline: the 12 MP JPEG (`sdwebimage/TestJFIF.jpg`, 4032×3024) to 256 px JPEG q80
/// files — decode with shrink-on-load, resize, encode, write — by `imagedl thumbnail`, `vipsthumbnail` and
/// Pillow, each a child process over many copies of the file.
///
/// Per-image CPU is a slope: the same tool over `large` and over `small` files in one round, and
/// (CPU(large) − CPU(small)) ÷ (large − small), which removes process start-up (Python's import of PIL, the
/// Swift runtime) and first-use costs alike for every tool. CPU is the child's user + system time from
/// wait4 (all its threads and processes). Wall per image is the large run's elapsed time ÷ its file count
/// (start-up included: a slope of wall times is too noisy on a shared machine). "1 core": one thread or process;
/// "all cores": one per core (imagedl's threads; vips and Pillow as that many processes sharing the files).
/// Peak RSS is the largest process of the large run. Tools take turns in rotating order within each round.
struct ThumbnailBenchmark {
    let context: RunContext
    static let section = "Thumbnail"

    private struct Figures {
        var cpu = Samples(), wall = Samples(), rss = Samples()
        var cpuAll = Samples(), wallAll = Samples(), rssAll = Samples()
    }

    func run() throws {
        let report = context.report
        let s = Self.section
        let imagedl = URL(fileURLWithPath: context.executable).deletingLastPathComponent().appendingPathComponent("imagedl").path
        let tools = ThumbnailTool.Kind.allCases.map { ThumbnailTool(kind: $0, imagedl: imagedl) }.filter(\.isAvailable)
        guard tools.contains(where: { $0.kind == .ours }) else {
            for key in Self.keys { report.skip(key, reason: "imagedl not built next to the Benchmarks executable (run.sh builds it)") }
            return
        }
        for tool in ThumbnailTool.Kind.allCases where !tools.contains(where: { $0.kind == tool }) {
            report.note(s, "\(ThumbnailTool(kind: tool, imagedl: imagedl).label) not installed: no comparison with it")
        }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let small = context.quick ? 2 : 4, large = context.quick ? 6 : 24
        let smallAll = max(small, 2 * cores), largeAll = smallAll + (large - small)
        let inputs = try prepareInputs(count: max(large, largeAll))

        var figures: [ThumbnailTool.Kind: Figures] = [:]
        for round in 0...context.rounds {
            // Round 0 warms the page cache and the tools up; it is not counted.
            for offset in tools.indices {
                let tool = tools[(offset + round) % tools.count]
                let one = try slope(tool, inputs: inputs, small: small, large: large, workers: 1)
                let all = try slope(tool, inputs: inputs, small: smallAll, large: largeAll, workers: cores)
                guard round > 0 else { continue }
                var f = figures[tool.kind] ?? Figures()
                f.cpu.add(one.cpu); f.wall.add(one.wall); f.rss.add(one.rss)
                f.cpuAll.add(all.cpu); f.wallAll.add(all.wall); f.rssAll.add(all.rss)
                figures[tool.kind] = f
            }
            context.log("thumbnail: round \(round) of \(context.rounds)")
        }
        publish(figures, cores: cores)
        try quality(tools: tools, source: inputs[0])
    }

    static let keys = ["thumbnail_pipeline_ms", "thumbnail_pipeline_ratio_vs_vips", "thumbnail_pipeline_ratio_vs_pillow",
                       "thumbnail_pipeline_ratio_vs_fastest", "thumbnail_pipeline_peak_rss_mb"]

    private func publish(_ figures: [ThumbnailTool.Kind: Figures], cores: Int) {
        let report = context.report
        let s = Self.section
        guard let ours = figures[.ours] else { return }
        report.headline("thumbnail_pipeline_ms", section: s, label: "12 MP JPEG → 256 px JPEG q80 file, imagedl thumbnail, CPU per image (1 core)", unit: "ms", ours.cpu)
        report.headline("thumbnail_pipeline_peak_rss_mb", section: s, label: "imagedl thumbnail peak RSS (\(cores) threads)", unit: "MB", ours.rssAll)
        var fastest: Samples?
        for (kind, key) in [(ThumbnailTool.Kind.vips, "thumbnail_pipeline_ratio_vs_vips"), (.pillow, "thumbnail_pipeline_ratio_vs_pillow")] {
            guard let theirs = figures[kind] else {
                report.skip(key, reason: "\(kind == .vips ? "vipsthumbnail (libvips-tools)" : "Pillow") not installed")
                continue
            }
            let name = kind == .vips ? "vipsthumbnail" : "Pillow"
            report.headline(key, section: s, label: "CPU per image ÷ \(name) (1 core)", unit: "×", ratios(ours.cpu, theirs.cpu))
            // Per round, the faster of the two references.
            fastest = fastest.map { Samples(zip($0.values, theirs.cpu.values).map { Swift.min($0, $1) }) } ?? theirs.cpu
        }
        if let fastest {
            report.headline("thumbnail_pipeline_ratio_vs_fastest", section: s, label: "CPU per image ÷ the faster of vipsthumbnail and Pillow (1 core)", unit: "×", ratios(ours.cpu, fastest))
        } else {
            report.skip("thumbnail_pipeline_ratio_vs_fastest", reason: "neither vipsthumbnail nor Pillow installed")
        }
        for (kind, f) in figures.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let name = ThumbnailTool(kind: kind, imagedl: "").label, key = "thumbnail_\(kind.rawValue)"
            if kind != .ours { report.detail("\(key)_cpu_ms", section: s, label: "\(name), CPU per image (1 core)", unit: "ms", f.cpu) }
            report.detail("\(key)_wall_ms", section: s, label: "\(name), wall per image (1 core)", unit: "ms", f.wall)
            report.detail("\(key)_cpu_ms_all_cores", section: s, label: "\(name), CPU per image (\(cores) workers)", unit: "ms", f.cpuAll)
            report.detail("\(key)_wall_ms_all_cores", section: s, label: "\(name), wall per image (\(cores) workers)", unit: "ms", f.wallAll)
            report.detail("\(key)_peak_rss_mb", section: s, label: "\(name), peak RSS (1 core)", unit: "MB", f.rss)
            if kind != .ours { report.detail("\(key)_peak_rss_mb_all_cores", section: s, label: "\(name), peak RSS (\(cores) workers, largest process)", unit: "MB", f.rssAll) }
        }
    }

    /// Per-image CPU (ms) by the slope between `small` and `large` files; the large run's wall per file (ms)
    /// and peak RSS (MB).
    private func slope(_ tool: ThumbnailTool, inputs: [URL], small: Int, large: Int, workers: Int) throws -> (cpu: Double, wall: Double, rss: Double) {
        let few = try once(tool, files: Array(inputs.prefix(small)), workers: workers)
        let many = try once(tool, files: Array(inputs.prefix(large)), workers: workers)
        let n = Double(large - small)
        return ((many.cost.cpu - few.cost.cpu) * 1000 / n, many.cost.wall * 1000 / Double(large),
                Double(many.peakRSS) / 1_048_576)
    }

    private func once(_ tool: ThumbnailTool, files: [URL], workers: Int, format: String = "jpg",
                      output: URL? = nil) throws -> ChildProcess.Outcome {
        let folder = output ?? context.fixtures.directory.appendingPathComponent("thumbnail/out-\(tool.kind.rawValue)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let outcome = try ChildProcess.run(tool.command(files: files, output: folder, format: format, workers: workers), measurePeakRSS: true)
        guard outcome.status == 0 else { throw BenchmarkError.tool("\(tool.label) exited with \(outcome.status)") }
        return outcome
    }

    /// `count` names for the 12 MP photo (symbolic links: every tool reads the same cached bytes).
    private func prepareInputs(count: Int) throws -> [URL] {
        let folder = context.fixtures.directory.appendingPathComponent("thumbnail/in")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try (0..<count).map { i in
            let link = folder.appendingPathComponent(String(format: "photo-%02d.jpg", i))
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: context.fixtures.largeBaseline)
            return link
        }
    }

    /// PSNR/SSIM of each tool's thumbnail of the photo against the reference, before (PNG) and after
    /// (q80 JPEG) encoding; a full run also renders the side-by-side crop shown in Docs/Processing.md.
    private func quality(tools: [ThumbnailTool], source: URL) throws {
        let report = context.report
        let s = Self.section
        guard ThumbnailQuality.isAvailable else {
            report.note(s, "numpy or Pillow missing: no quality comparison")
            return
        }
        var files: [(label: String, path: String, kind: ThumbnailTool.Kind, format: String)] = []
        for tool in tools {
            for format in ["png", "jpg"] {
                let folder = context.fixtures.directory.appendingPathComponent("thumbnail/quality-\(tool.kind.rawValue)")
                _ = try once(tool, files: [source], workers: 1, format: format, output: folder)
                let name = source.deletingPathExtension().lastPathComponent + "." + format
                files.append((tool.label + (format == "jpg" ? " q80" : ""), folder.appendingPathComponent(name).path, tool.kind, format))
            }
        }
        let crop: URL? = context.quick ? nil : URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            .appendingPathComponent("Benchmarks/results/thumbnail-crop.png")
        let cropFiles = files.filter { $0.format == "png" }.map { ($0.label, $0.path) }
        let pngScores = try ThumbnailQuality.measure(source: source, files: cropFiles, crop: crop)
        let jpgScores = try ThumbnailQuality.measure(source: source, files: files.filter { $0.format == "jpg" }.map { ($0.label, $0.path) }, crop: nil)
        for file in files {
            guard let score = pngScores[file.path] ?? jpgScores[file.path] else { continue }
            let suffix = file.format == "jpg" ? "_q80" : ""
            let what = file.format == "jpg" ? "the q80 JPEG" : "before encoding"
            report.detail("thumbnail_\(file.kind.rawValue)_psnr_db\(suffix)", section: s, label: "\(file.label): PSNR vs full-resolution Lanczos-3, \(what)", unit: "dB", Samples([score.psnr]))
            report.detail("thumbnail_\(file.kind.rawValue)_ssim\(suffix)", section: s, label: "\(file.label): SSIM (luma) vs the same reference, \(what)", unit: "", Samples([score.ssim]))
        }
        if let crop { context.log("thumbnail: wrote \(crop.path)") }
    }
}

import Decoding
import Foundation

/// AVIF through libavif (run with the animation section): a 12 MP still decoded by `imagedl decode` against
/// `avifdec` (whole processes, the same file, each one's start-up subtracted), and a 1000² × 120-frame sequence
/// (key frames every 30): the time to frame 100 on demand (from key frame 90) against decoding frames 0…100 from
/// the start, the poster and per-frame costs, and the peak RSS of 20 of them downloaded at concurrency 8.
struct AVIFBenchmark {
    let context: RunContext
    static let section = "AVIF"
    static let keys = ["avif_decode_ratio_vs_avifdec", "avif_frame_n_ratio", "avif_animation_peak_rss_mb"]
    /// The frame asked for: 10 frames after the key frame at 90.
    static let frameN = 100

    func run() throws {
        let report = context.report
        let s = Self.section
        guard ["avifenc", "avifdec"].allSatisfy(ChildProcess.exists) else {
            for key in Self.keys { report.skip(key, reason: "avifenc/avifdec not installed (libavif-bin)") }
            return
        }
        if let reason = AVIFCoder().unavailableReason {
            for key in Self.keys { report.skip(key, reason: reason) }
            return
        }
        let fixtures = try AVIFFixtures.prepare(context.fixtures)
        try still(fixtures)
        try sequence(fixtures.sequence)
        let rounds = context.quick ? 1 : 3
        report.headline("avif_animation_peak_rss_mb", section: s, label: "20 × 1000² × 120 AVIF downloaded at concurrency 8, one process",
                        unit: "MB", try MemoryBenchmark(context: context).peakRSS(.animationMemoryAVIF, count: 20, rounds: rounds))
        report.detail("avif_decode_budget_mb", section: s, label: "the decode memory budget of that process (ImageDecodingBudget.defaultLimitBytes)",
                      unit: "MB", Samples([Double(ImageDecodingBudget.defaultLimitBytes) / 1_048_576]))
    }

    /// The 12 MP still: process CPU of `imagedl decode FILE --rgba OUT` against `avifdec -d 8 --png-compress 0 FILE
    /// OUT.png` (both convert to 8-bit RGB and write it uncompressed), less each one's CPU on a 16×16 AVIF.
    private func still(_ fixtures: AVIFFixtures) throws {
        let report = context.report
        let s = Self.section
        let imagedl = URL(fileURLWithPath: context.executable).deletingLastPathComponent().appendingPathComponent("imagedl").path
        guard FileManager.default.isExecutableFile(atPath: imagedl) else {
            report.skip("avif_decode_ratio_vs_avifdec", reason: "imagedl not built next to the Benchmarks executable (run.sh builds it)")
            return
        }
        let output = context.fixtures.directory.appendingPathComponent("avif-out")
        func ours(_ file: URL) throws -> Double {
            let outcome = try ChildProcess.run([imagedl, "decode", file.path, "--rgba", output.path + ".rgba"])
            guard outcome.status == 0 else { throw BenchmarkError.tool("imagedl decode \(file.lastPathComponent) exited with \(outcome.status)") }
            return outcome.cost.cpu * 1000
        }
        func theirs(_ file: URL) throws -> Double {
            let outcome = try ChildProcess.run(["avifdec", "--jobs", "1", "-d", "8", "--png-compress", "0", file.path, output.path + ".png"])
            guard outcome.status == 0 else { throw BenchmarkError.tool("avifdec \(file.lastPathComponent) exited with \(outcome.status)") }
            return outcome.cost.cpu * 1000
        }
        var oursStart = Samples(), theirsStart = Samples()
        for _ in 0..<max(5, context.rounds) {
            oursStart.add(try ours(fixtures.tiny))
            theirsStart.add(try theirs(fixtures.tiny))
        }
        var mine = Samples(), other = Samples(), inProcess = Samples()
        let data = try Data(contentsOf: fixtures.still)
        // Alternating within each round, so drift on a shared machine hits both.
        for round in 0...DecodeBenchmark.ratioRounds(context) {
            let a = try ours(fixtures.still), b = try theirs(fixtures.still)
            let (_, cost) = try measureOnThread { try ImageCodersManager.shared.decode(data) }
            guard round > 0 else { continue }
            mine.add(max(0, a - (oursStart.median ?? 0)))
            other.add(max(0, b - (theirsStart.median ?? 0)))
            inProcess.add(cost.cpu * 1000)
        }
        try? FileManager.default.removeItem(atPath: output.path + ".rgba")
        try? FileManager.default.removeItem(atPath: output.path + ".png")
        report.detail("avif_decode_ms_12mp", section: s, label: "12 MP AVIF (8-bit 4:2:0), ImageCodersManager, thread CPU", unit: "ms", inProcess)
        report.detail("avif_imagedl_ms_12mp", section: s, label: "12 MP AVIF, imagedl decode --rgba (start-up subtracted)", unit: "ms", mine)
        report.detail("avif_avifdec_ms_12mp", section: s, label: "12 MP AVIF, avifdec -d 8 --png-compress 0 (start-up subtracted)", unit: "ms", other)
        report.headline("avif_decode_ratio_vs_avifdec", section: s, label: "12 MP AVIF decode, process CPU ÷ avifdec", unit: "×", ratios(mine, other))
    }

    /// The sequence in process: poster, each further frame in order, frame 100 on demand and from the start.
    private func sequence(_ file: URL) throws {
        let report = context.report
        let s = Self.section
        let data = try Data(contentsOf: file)
        var poster = Samples(), perFrame = Samples(), seek = Samples(), fromStart = Samples()
        for round in 0...context.rounds {
            let (image, posterCost) = try measureOnThread { try ImageCodersManager.shared.decode(data) }
            guard let animation = image.animation, animation.frameCount == AVIFFixtures.frames else {
                throw BenchmarkError.failed("\(file.lastPathComponent): \(image.frameCount) frames")
            }
            let (_, seekCost) = try measureOnThread { try animation.frame(at: Self.frameN) }
            let fresh = try ImageCodersManager.shared.decode(data)
            guard let playback = fresh.animation else { throw BenchmarkError.failed("no animation") }
            let (_, startCost) = try measureOnThread { for index in 1...Self.frameN { _ = try playback.frame(at: index) } }
            guard round > 0 else { continue }
            poster.add(posterCost.cpu * 1000)
            seek.add(seekCost.cpu * 1000)
            fromStart.add(startCost.cpu * 1000)
            perFrame.add(startCost.cpu * 1000 / Double(Self.frameN))
        }
        let label = "1000² × \(AVIFFixtures.frames) AVIF (key frames every 30)"
        report.detail("avif_poster_ms", section: s, label: "\(label): time to the poster (parse + frame 0)", unit: "ms", poster)
        report.detail("avif_frame_ms", section: s, label: "\(label): each further frame, in order", unit: "ms", perFrame)
        report.detail("avif_frame_n_ms", section: s, label: "\(label): frame \(Self.frameN) on demand (from key frame 90)", unit: "ms", seek)
        report.detail("avif_frame_n_from_start_ms", section: s, label: "\(label): frames 1…\(Self.frameN) decoded from the start", unit: "ms", fromStart)
        report.headline("avif_frame_n_ratio", section: s, label: "\(label): frame \(Self.frameN) on demand ÷ from the start", unit: "×", ratios(seek, fromStart))
    }
}

/// The AVIF section's files, made once per work directory with avifenc: the 12 MP photo (Display P3 profile
/// dropped, so that only decoding is measured), a 16×16 still for the start-up cost, and the 1000² × 120 sequence
/// (drawn here like the other formats' animation, through SVT-AV1: libaom 3.6 asserts on long real-time sequences).
struct AVIFFixtures {
    static let frames = 120
    static let side = 1000
    let still: URL
    let tiny: URL
    let sequence: URL

    /// Server path of the sequence (`www/anim/`, beside the GIF/APNG/WebP ones).
    static let sequencePath = "anim/anim-1000x120.avif"

    static func prepare(_ fixtures: Fixtures) throws -> AVIFFixtures {
        let folder = fixtures.www.appendingPathComponent("avif")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: fixtures.www.appendingPathComponent("anim"), withIntermediateDirectories: true)
        let made = AVIFFixtures(still: folder.appendingPathComponent("large.avif"), tiny: folder.appendingPathComponent("tiny.avif"),
                                sequence: fixtures.www.appendingPathComponent(sequencePath))
        let exists = { (url: URL) in FileManager.default.fileExists(atPath: url.path) }
        if !exists(made.still) {
            try encode(["-c", "svt", "-s", "8", "-y", "420", "--ignore-icc", fixtures.largeUntagged.path, made.still.path])
        }
        if !exists(made.tiny) {
            let png = folder.appendingPathComponent("tiny.png")
            try ImageCodersManager.shared.encode(squares(side: 16, frame: 0), format: .png).write(to: png)
            try encode(["-s", "10", png.path, made.tiny.path])
        }
        if !exists(made.sequence) {
            var inputs: [String] = []
            for index in 0..<frames {
                let png = folder.appendingPathComponent(String(format: "frame-%03d.png", index))
                try ImageCodersManager.shared.encode(squares(side: side, frame: index), format: .png).write(to: png)
                inputs.append(png.path)
            }
            try encode(["-c", "svt", "-s", "10", "-y", "420", "--fps", "25", "-k", "30"] + inputs + [made.sequence.path])
            for input in inputs { try? FileManager.default.removeItem(atPath: input) }
        }
        return made
    }

    private static func encode(_ arguments: [String]) throws {
        let outcome = try ChildProcess.run(["avifenc", "--jobs", "2"] + arguments, captureOutput: true)
        guard outcome.status == 0 else { throw BenchmarkError.tool("avifenc exited with \(outcome.status): \(outcome.output.suffix(300))") }
    }

    /// Six squares moving over a flat background, as the GIF/APNG/WebP animations' Pillow script draws them.
    static func squares(side: Int, frame: Int) -> DecodedImage {
        var pixels = [UInt8](repeating: 0, count: side * side * 4)
        for i in stride(from: 0, to: pixels.count, by: 4) { (pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3]) = (240, 240, 230, 255) }
        let square = max(1, side * 12 / 100)
        for k in 0..<6 {
            let x0 = (frame * 7 + k * side * 15 / 100) % max(1, side - square)
            let y0 = (frame * 5 + k * side * 9 / 100) % max(1, side - square)
            let colour: [UInt8] = [UInt8(k * 40 % 256), UInt8((255 - k * 30) % 256), UInt8(frame * 2 % 256), 255]
            for y in y0..<min(side, y0 + square) {
                for x in x0..<min(side, x0 + square) { pixels.replaceSubrange((y * side + x) * 4..<(y * side + x) * 4 + 4, with: colour) }
            }
        }
        return DecodedImage(width: side, height: side, pixels: pixels, format: .png)
    }
}

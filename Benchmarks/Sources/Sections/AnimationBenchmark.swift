import Decoding
import Foundation

/// Animated images on demand: the time to the first frame (the index pass plus the poster), the cost of each
/// further frame played in order, both against Pillow's `seek` + `load` on the same files, and the peak RSS
/// of one process downloading 20 of the 1000×1000 × 120-frame animations at concurrency 8 (the issue's
/// goal: ≤ 256 MiB; eager frames took 1003 MiB with 15 failures).
struct AnimationBenchmark {
    let context: RunContext
    static let section = "Animation"

    func run() throws {
        let report = context.report
        let s = Self.section
        // AVIF's files are made with avifenc rather than Pillow, so it runs whether or not Pillow is there.
        do {
            try AVIFBenchmark(context: context).run()
        } catch {
            report.error("AVIF: \(error)")
        }
        if let reason = AnimationFixtures.prepare(context.fixtures) {
            for key in ["animation_peak_rss_mb", "animation_poster_ms_gif", "animation_frame_ms_gif"] { report.skip(key, reason: reason) }
            return
        }
        for format in AnimationFixtures.formats {
            let file = AnimationFixtures.file(context.fixtures, format: format)
            let data = try Data(contentsOf: file)
            if format == "webp" && ImageCodersManager.shared.coders.contains(where: { ($0 as? WebPCoder)?.unavailableReason != nil }) {
                report.skip("animation_poster_ms_webp", reason: "libwebp not installed")
                continue
            }
            var poster = Samples(), perFrame = Samples()
            for round in 0...context.rounds {
                let (image, cost) = try measureOnThread { try ImageCodersManager.shared.decode(data) }
                guard let animation = image.animation, animation.frameCount == AnimationFixtures.frameCount else {
                    throw BenchmarkError.failed("\(file.lastPathComponent): \(image.frameCount) frames")
                }
                let (_, frames) = try measureOnThread {
                    for index in 1..<animation.frameCount { _ = try animation.frame(at: index) }
                }
                guard round > 0 else { continue }
                poster.add(cost.cpu * 1000)
                perFrame.add(frames.cpu * 1000 / Double(animation.frameCount - 1))
            }
            let label = "\(AnimationFixtures.side)² × \(AnimationFixtures.frameCount) \(format.uppercased())"
            report.headline("animation_poster_ms_\(format)", section: s, label: "\(label): time to the poster (index pass + frame 0)", unit: "ms", poster)
            report.headline("animation_frame_ms_\(format)", section: s, label: "\(label): each further frame, in order", unit: "ms", perFrame)
            if let pillow = PillowFrames.milliseconds(file, rounds: context.rounds) {
                report.detail("animation_pillow_poster_ms_\(format)", section: s, label: "\(label): Pillow open + load", unit: "ms", pillow.poster)
                report.detail("animation_pillow_frame_ms_\(format)", section: s, label: "\(label): Pillow seek + load per frame", unit: "ms", pillow.perFrame)
                report.headline("animation_poster_ratio_vs_pillow_\(format)", section: s, label: "\(label): poster CPU ÷ Pillow", unit: "×", ratios(poster, pillow.poster))
                report.headline("animation_frame_ratio_vs_pillow_\(format)", section: s, label: "\(label): per-frame CPU ÷ Pillow", unit: "×", ratios(perFrame, pillow.perFrame))
            } else {
                report.note(s, "Pillow not installed: no Pillow reference for \(label)")
            }
        }
        let memory = MemoryBenchmark(context: context)
        let rounds = context.quick ? 1 : 3
        report.headline("animation_peak_rss_mb", section: s, label: "20 × 1000² × 120 GIF downloaded at concurrency 8, one process", unit: "MB",
                        try memory.peakRSS(.animationMemory, count: 20, rounds: rounds))
        report.detail("animation_peak_rss_mb_mixed", section: s, label: "20 × 1000² × 120 GIF, APNG and WebP at concurrency 8, one process", unit: "MB",
                      try memory.peakRSS(.animationMemoryMixed, count: 20, rounds: rounds))
    }
}

/// Pillow's cost on the same files: `Image.open` + `load` of frame 0, then `seek(i)` + `load()` per frame, process
/// CPU after one warm-up pass.
enum PillowFrames {
    private static let script = """
    import sys, time, json
    from PIL import Image
    path, rounds = sys.argv[1], int(sys.argv[2])
    def once():
        t = time.process_time()
        im = Image.open(path)
        im.load()
        poster = time.process_time() - t
        t = time.process_time()
        n = im.n_frames
        for i in range(1, n):
            im.seek(i)
            im.load()
        return poster * 1000, (time.process_time() - t) * 1000 / (n - 1)
    once()
    print(json.dumps([once() for _ in range(rounds)]))
    """

    static func milliseconds(_ file: URL, rounds: Int) -> (poster: Samples, perFrame: Samples)? {
        guard PillowReference.isAvailable,
              let outcome = try? ChildProcess.run(["python3", "-c", script, file.path, String(rounds)], captureOutput: true),
              outcome.status == 0,
              let values = try? JSONDecoder().decode([[Double]].self, from: Data(outcome.output.utf8))
        else { return nil }
        return (Samples(values.map { $0[0] }), Samples(values.map { $0[1] }))
    }
}

import Decoding
import Foundation

/// One-shot decoding through `ImageCodersManager` (thread CPU of the decode call, file already in memory)
/// against `djpeg` (the child's CPU from wait4, less djpeg's start-up cost measured on an 8×8 file) and
/// Pillow where installed.
struct DecodeBenchmark {
    let context: RunContext
    static let section = "Decode"

    func run() throws {
        let fixtures = context.fixtures
        let report = context.report
        let s = Self.section
        let djpegAvailable = ChildProcess.exists("djpeg")
        let startup = djpegAvailable ? try djpegStartupMs() : nil
        if let startup {
            report.detail("djpeg_startup_ms", section: s, label: "djpeg start-up (8×8 file), subtracted", unit: "ms", startup)
        }

        if RunContext.jpegCoderAvailable {
            // The photo carries a Display P3 profile, so "baseline" and "progressive" include its conversion to
            // sRGB (djpeg converts nothing); "untagged" is the same photo without the profile.
            for (file, name, key) in [
                (fixtures.largeBaseline, "baseline", "decode_ratio_vs_djpeg_baseline"),
                (fixtures.largeUntagged, "untagged", "decode_ratio_vs_djpeg_untagged"),
                (fixtures.largeProgressive, "progressive", "decode_ratio_vs_djpeg_progressive"),
            ] {
                let data = try Data(contentsOf: file)
                var ours = Samples()
                var theirs = Samples()
                // Ours and djpeg alternate within each round, so drift on a shared machine hits both. More
                // rounds than elsewhere: on this VM one djpeg process of the same file costs anywhere from 42
                // to 60 ms of CPU (the two modes of the machine, not page faults), so a median of 7 ratios moved
                // by 0.1 between two runs of the same code (Docs/Benchmarks.md).
                for round in 0...Self.ratioRounds(context) {
                    let mine = try decodeOnceMs(data, name: file.lastPathComponent, options: ImageDecodingOptions())
                    let other = try djpegAvailable ? djpegOnceMs(file, startup: startup) : nil
                    guard round > 0 else { continue }
                    ours.add(mine)
                    if let other { theirs.add(other) }
                }
                report.detail("jpeg_\(name)_decode_ms", section: s, label: "12 MP \(name) JPEG, ImageCodersManager", unit: "ms", ours)
                if djpegAvailable {
                    report.detail("djpeg_\(name)_ms", section: s, label: "12 MP \(name) JPEG, djpeg (start-up subtracted)", unit: "ms", theirs)
                    report.headline(key, section: s, label: "12 MP \(name) JPEG decode CPU ÷ djpeg", unit: "×", ratios(ours, theirs))
                } else {
                    report.skip(key, reason: "djpeg not installed (libjpeg-turbo-progs)")
                }
                pillow(file, mode: .full, ours: ours, name: "jpeg_\(name)", label: "12 MP \(name) JPEG")
            }
            try thumbnails(djpegAvailable: djpegAvailable, startup: startup)
            try ColorConversionBenchmark(context: context).run()
        } else {
            for key in ["decode_ratio_vs_djpeg_baseline", "decode_ratio_vs_djpeg_untagged", "decode_ratio_vs_djpeg_progressive",
                        "thumbnail_speedup", "color_convert_ms_12mp", "color_convert_ratio_vs_lcms2"] {
                report.skip(key, reason: "no JPEG coder registered in ImageCodersManager yet")
            }
        }

        let png = try decodeMs(fixtures.png4MP, options: ImageDecodingOptions())
        report.headline("png_decode_ms", section: s, label: "4 MP PNG (2304×1728 RGB), ImageCodersManager", unit: "ms", png)
        pillow(fixtures.png4MP, mode: .full, ours: png, name: "png", label: "4 MP PNG")

        try JXLDecodeBenchmark(context: context).run()

        // Every frame composited up front (.preloadAllFrames), as Pillow's every-frame loop does.
        let gif = try decodeMs(fixtures.animatedGIF, options: ImageDecodingOptions(preloadAllFrames: true))
        report.detail("gif_decode_ms", section: s, label: "animated GIF (245×245, 42 frames), all frames", unit: "ms", gif)
        pillow(fixtures.animatedGIF, mode: .frames, ours: gif, name: "gif", label: "animated GIF, all frames")
    }

    /// 1/8 thumbnails: the JPEG coder's DCT scaling against the full decode, and against `djpeg -scale 1/8`.
    private func thumbnails(djpegAvailable: Bool, startup: Samples?) throws {
        let report = context.report
        let s = Self.section
        let file = context.fixtures.largeBaseline
        let data = try Data(contentsOf: file)
        let size = try ImageCodersManager.shared.decode(data)
        let options = ImageDecodingOptions(thumbnailPixelSize: CGSize(width: size.width / 8, height: size.height / 8))
        var full = Samples()
        var thumb = Samples()
        for _ in 0...context.rounds {
            let (_, fullCost) = try measureOnThread { try ImageCodersManager.shared.decode(data) }
            let (_, thumbCost) = try measureOnThread { try ImageCodersManager.shared.decode(data, options: options) }
            full.add(fullCost.cpu * 1000)
            thumb.add(thumbCost.cpu * 1000)
        }
        full = Samples(Array(full.values.dropFirst()))
        thumb = Samples(Array(thumb.values.dropFirst()))
        report.detail("thumbnail_ms", section: s, label: "12 MP baseline JPEG to 1/8 (\(size.width / 8)×\(size.height / 8))", unit: "ms", thumb)
        report.headline("thumbnail_speedup", section: s, label: "full decode CPU ÷ 1/8 thumbnail CPU (baseline JPEG)", unit: "×", ratios(full, thumb))
        if djpegAvailable {
            var theirs = Samples()
            for _ in 0..<context.rounds {
                if let ms = try djpegOnceMs(file, startup: startup, extra: ["-scale", "1/8"]) { theirs.add(ms) }
            }
            report.detail("thumbnail_ratio_vs_djpeg", section: s, label: "1/8 thumbnail CPU ÷ djpeg -scale 1/8", unit: "×", ratios(thumb, theirs))
        }
        pillow(file, mode: .thumb8, ours: thumb, name: "thumbnail", label: "1/8 thumbnail (draft)")
    }

    private func pillow(_ file: URL, mode: PillowReference.Mode, ours: Samples, name: String, label: String) {
        guard let theirs = PillowReference.decodeMilliseconds(file, mode: mode, rounds: context.rounds) else {
            context.report.note(Self.section, "Pillow not installed: no Pillow reference for \(label)")
            return
        }
        context.report.detail("pillow_\(name)_ms", section: Self.section, label: "\(label), Pillow", unit: "ms", theirs)
        context.report.detail("\(name)_ratio_vs_pillow", section: Self.section, label: "\(label) CPU ÷ Pillow", unit: "×", ratios(ours, theirs))
    }

    /// Rounds of the decode ratios to djpeg: 21 in a full run (a decode and a djpeg each, about 0.1 s).
    static func ratioRounds(_ context: RunContext) -> Int { context.quick ? context.rounds : 21 }

    /// Thread-CPU milliseconds of `ImageCodersManager.decode`, one warm-up then `rounds` measured decodes.
    private func decodeMs(_ file: URL, options: ImageDecodingOptions) throws -> Samples {
        let data = try Data(contentsOf: file)
        var samples = Samples()
        for round in 0...context.rounds {
            let ms = try decodeOnceMs(data, name: file.lastPathComponent, options: options)
            if round > 0 { samples.add(ms) }
        }
        return samples
    }

    private func decodeOnceMs(_ data: Data, name: String, options: ImageDecodingOptions) throws -> Double {
        let (image, cost) = try measureOnThread { try ImageCodersManager.shared.decode(data, options: options) }
        guard image.width > 0 else { throw BenchmarkError.failed("decode of \(name) gave no pixels") }
        return cost.cpu * 1000
    }

    /// djpeg's CPU for one decode to /dev/null, less its start-up cost (nil without a start-up measurement).
    private func djpegOnceMs(_ file: URL, startup: Samples?, extra: [String] = []) throws -> Double? {
        guard let base = startup?.median else { return nil }
        let outcome = try ChildProcess.run(["djpeg"] + extra + ["-outfile", "/dev/null", file.path])
        guard outcome.status == 0 else { throw BenchmarkError.tool("djpeg \(file.lastPathComponent) exited with \(outcome.status)") }
        return max(0, outcome.cost.cpu * 1000 - base)
    }

    private func djpegStartupMs() throws -> Samples {
        var samples = Samples()
        for _ in 0..<max(5, context.rounds) {
            let outcome = try ChildProcess.run(["djpeg", "-outfile", "/dev/null", context.fixtures.tinyJPEG.path])
            guard outcome.status == 0 else { throw BenchmarkError.tool("djpeg tiny.jpg exited with \(outcome.status)") }
            samples.add(outcome.cost.cpu * 1000)
        }
        return samples
    }
}

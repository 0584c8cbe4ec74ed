import Decoding
import Foundation

/// Issue 22's colour figures, part of the Decode section: `ColorManagement.convertToSRGB` of the 12 MP Display P3
/// photo decoded with `.keepOriginal` (the matrix/TRC fast path; process CPU, so the cores it may spread over
/// are all counted, and wall time), against Pillow's ImageCms (lcms2) applying a prebuilt transform from the
/// same embedded profile to sRGB on the same decoded pixels, RGBA to RGBA, under `time.process_time`.
struct ColorConversionBenchmark {
    let context: RunContext
    static let section = DecodeBenchmark.section

    func run() throws {
        let report = context.report
        let s = Self.section
        let file = context.fixtures.largeBaseline
        let data = try Data(contentsOf: file)
        let kept = try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(colorManagement: .keepOriginal))
        guard kept.iccProfile != nil else { throw BenchmarkError.failed("colour: \(file.lastPathComponent) has no ICC profile") }
        let megapixels = Double(kept.width * kept.height) / 1e6
        var cpu = Samples(), wall = Samples()
        for round in 0...context.rounds {
            var image = Self.uniqueCopy(kept)  // converted in place: the copy is made outside the timing
            let wall0 = Clock.wall(), cpu0 = Clock.processCPU()
            ColorManagement.convertToSRGB(&image)
            let cpu1 = Clock.processCPU(), wall1 = Clock.wall()
            guard case .convertedToSRGB = image.colorState else { throw BenchmarkError.failed("colour: not converted (\(image.colorState))") }
            guard round > 0 else { continue }
            cpu.add((cpu1 - cpu0) * 1000)
            wall.add((wall1 - wall0) * 1000)
        }
        report.headline("color_convert_ms_12mp", section: s, label: "Display P3 → sRGB of the 12 MP photo, CPU (all threads)", unit: "ms", cpu)
        report.detail("color_convert_wall_ms_12mp", section: s, label: "Display P3 → sRGB of the 12 MP photo, wall", unit: "ms", wall)
        report.detail("color_convert_ms_per_mp", section: s, label: "Display P3 → sRGB, CPU per megapixel", unit: "ms", cpu.map { $0 / megapixels })
        guard let theirs = Self.pillowMilliseconds(file, rounds: context.rounds) else {
            report.skip("color_convert_ratio_vs_lcms2", reason: "Pillow (with ImageCms) not installed")
            return
        }
        report.detail("pillow_color_convert_ms_12mp", section: s, label: "the same conversion, Pillow ImageCms (lcms2)", unit: "ms", theirs)
        report.headline("color_convert_ratio_vs_lcms2", section: s, label: "12 MP Display P3 → sRGB CPU ÷ Pillow ImageCms (lcms2)", unit: "×", ratios(cpu, theirs))
    }

    /// `image` with a pixel buffer of its own.
    static func uniqueCopy(_ image: DecodedImage) -> DecodedImage {
        let pixels = [UInt8](unsafeUninitializedCapacity: image.pixels.count) { buffer, count in
            _ = image.pixels.withUnsafeBufferPointer { buffer.initialize(fromContentsOf: $0) }
            count = image.pixels.count
        }
        return DecodedImage(width: image.width, height: image.height, pixels: pixels, format: image.format,
                            iccProfile: image.iccProfile, colorState: image.colorState)
    }

    private static let script = """
    import sys, time, json, io
    from PIL import Image, ImageCms
    path, n = sys.argv[1], int(sys.argv[2])
    im = Image.open(path)
    profile = ImageCms.ImageCmsProfile(io.BytesIO(im.info["icc_profile"]))
    rgba = im.convert("RGBA")
    transform = ImageCms.buildTransform(profile, ImageCms.createProfile("sRGB"), "RGBA", "RGBA")
    ImageCms.applyTransform(rgba, transform)
    times = []
    for _ in range(n):
        t = time.process_time()
        ImageCms.applyTransform(rgba, transform)
        times.append((time.process_time() - t) * 1000)
    print(json.dumps(times))
    """

    /// Pillow's per-round milliseconds, or nil without Pillow.
    static func pillowMilliseconds(_ file: URL, rounds: Int) -> Samples? {
        guard PillowReference.isAvailable,
              let outcome = try? ChildProcess.run(["python3", "-c", script, file.path, String(rounds)], captureOutput: true),
              outcome.status == 0,
              let values = try? JSONDecoder().decode([Double].self, from: Data(outcome.output.utf8))
        else { return nil }
        return Samples(values)
    }
}

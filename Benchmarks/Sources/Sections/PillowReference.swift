import Foundation

/// Decode times of Pillow (where installed), as an independent reference: Python's `time.process_time`
/// around `Image.open(...).convert("RGBA")` (every frame for animations, `draft` to 1/8 for thumbnails),
/// after one warm-up decode.
enum PillowReference {
    enum Mode: String {
        case full, frames, thumb8
    }

    static let isAvailable: Bool = {
        (try? ChildProcess.run(["python3", "-c", "import PIL"]))?.status == 0
    }()

    private static let script = """
    import sys, time, json
    from PIL import Image
    path, mode, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    def once():
        im = Image.open(path)
        if mode == "frames":
            for i in range(getattr(im, "n_frames", 1)):
                im.seek(i)
                im.convert("RGBA")
        elif mode == "thumb8":
            im.draft("RGB", (im.width // 8, im.height // 8))
            im.convert("RGBA")
        else:
            im.convert("RGBA")
    once()
    times = []
    for _ in range(n):
        t = time.process_time()
        once()
        times.append((time.process_time() - t) * 1000)
    print(json.dumps(times))
    """

    /// Milliseconds per decode, one value per round; nil when Pillow is missing or failed.
    static func decodeMilliseconds(_ file: URL, mode: Mode, rounds: Int) -> Samples? {
        guard isAvailable,
              let outcome = try? ChildProcess.run(["python3", "-c", script, file.path, mode.rawValue, String(rounds)], captureOutput: true),
              outcome.status == 0,
              let values = try? JSONDecoder().decode([Double].self, from: Data(outcome.output.utf8))
        else { return nil }
        return Samples(values)
    }
}

import Foundation

/// Quality of the three thumbnailers' output, by Pillow + numpy in a child process: PSNR (RGB) and SSIM
/// (luma, Gaussian window σ 1.5) of each 256 px thumbnail against a high-quality reference — the full
/// 12 MP decode resized with Lanczos-3 straight to the thumbnail size (no shrink-on-load) — both before
/// encoding (PNG output) and as the q80 JPEG files. Optionally renders a side-by-side crop for the docs.
enum ThumbnailQuality {
    struct Score: Decodable {
        let psnr: Double
        let ssim: Double
    }

    static let isAvailable: Bool = {
        (try? ChildProcess.run(["python3", "-c", "import numpy, PIL"]))?.status == 0
    }()

    /// Scores by file path; `crop` (when given) is written as a PNG of reference | files, 4× enlarged.
    static func measure(source: URL, files: [(label: String, path: String)], crop: URL?) throws -> [String: Score] {
        var arguments = ["python3", "-c", script, source.path, crop?.path ?? "-"]
        for file in files { arguments += [file.label, file.path] }
        let outcome = try ChildProcess.run(arguments, captureOutput: true)
        guard outcome.status == 0 else { throw BenchmarkError.tool("quality script exited with \(outcome.status)") }
        return try JSONDecoder().decode([String: Score].self, from: Data(outcome.output.utf8))
    }

    private static let script = """
    import json, sys
    import numpy as np
    from PIL import Image, ImageDraw

    source, crop_path, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    files = list(zip(rest[0::2], rest[1::2]))

    def rgb(im):
        return np.asarray(im.convert("RGB"), dtype=np.float64)

    first = Image.open(files[0][1])
    full = Image.open(source)
    full.load()
    reference_image = full.convert("RGB").resize(first.size, Image.LANCZOS, reducing_gap=None)
    reference = rgb(reference_image)

    def gaussian(sigma=1.5, radius=5):
        x = np.arange(-radius, radius + 1)
        k = np.exp(-x * x / (2 * sigma * sigma))
        return k / k.sum()

    def blur(a):
        k = gaussian()
        a = np.apply_along_axis(lambda r: np.convolve(r, k, "valid"), 0, a)
        return np.apply_along_axis(lambda r: np.convolve(r, k, "valid"), 1, a)

    def ssim(a, b):
        w = np.array([0.299, 0.587, 0.114])
        x, y = a @ w, b @ w
        c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
        mx, my = blur(x), blur(y)
        sxx, syy, sxy = blur(x * x) - mx * mx, blur(y * y) - my * my, blur(x * y) - mx * my
        return float(np.mean(((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx * mx + my * my + c1) * (sxx + syy + c2))))

    def psnr(a, b):
        mse = float(np.mean((a - b) ** 2))
        return 99.0 if mse == 0 else 10 * np.log10(255 ** 2 / mse)

    scores = {}
    for label, path in files:
        image = rgb(Image.open(path))
        if image.shape != reference.shape:
            raise SystemExit(f"{path}: {image.shape} differs from the reference {reference.shape}")
        scores[path] = {"psnr": psnr(reference, image), "ssim": ssim(reference, image)}
    print(json.dumps(scores))

    if crop_path != "-":
        box, scale, header = (136, 48, 200, 96), 3, 14
        panels = [("reference", reference_image)] + [(label, Image.open(path).convert("RGB")) for label, path in files]
        w, h = (box[2] - box[0]) * scale, (box[3] - box[1]) * scale
        sheet = Image.new("RGB", (w * len(panels) + 4 * (len(panels) - 1), h + header), "white")
        draw = ImageDraw.Draw(sheet)
        for i, (label, im) in enumerate(panels):
            x = i * (w + 4)
            sheet.paste(im.crop(box).resize((w, h), Image.NEAREST), (x, header))
            draw.text((x + 2, 1), label, fill="black")
        sheet.save(crop_path, optimize=True)
    """
}

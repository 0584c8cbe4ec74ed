import Foundation

/// The big animations of the animation section, made with Pillow (as the were) into `www/anim/`:
/// 1000×1000, 120 frames of squares moving over a flat background, as GIF, APNG and animated WebP. Made
/// once per work directory; nil (with the reason) without Pillow.
enum AnimationFixtures {
    static let side = 1000
    static let frameCount = 120

    static let formats = ["gif", "png", "webp"]

    static func file(_ fixtures: Fixtures, format: String) -> URL {
        fixtures.www.appendingPathComponent("anim/anim-\(side)x\(frameCount).\(format)")
    }

    /// Server path of format `format`.
    static func path(format: String) -> String { "anim/anim-\(side)x\(frameCount).\(format)" }

    private static let script = """
    import sys
    from PIL import Image, ImageDraw
    folder, side, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    frames = []
    for i in range(count):
        im = Image.new("RGBA", (side, side), (240, 240, 230, 255))
        d = ImageDraw.Draw(im)
        for k in range(6):
            x = (i * 7 + k * 150) % (side - 120)
            y = (i * 5 + k * 90) % (side - 120)
            d.rectangle([x, y, x + 120, y + 120], fill=((k * 40) % 256, (255 - k * 30) % 256, (i * 2) % 256, 255))
        frames.append(im)
    first, rest = frames[0], frames[1:]
    first.save(folder + "/anim-%dx%d.png" % (side, count), save_all=True, append_images=rest, duration=40, loop=0)
    first.save(folder + "/anim-%dx%d.webp" % (side, count), save_all=True, append_images=rest, duration=40, loop=0,
               quality=80, method=0)
    pal = [f.convert("RGB").quantize(colors=16, method=Image.Quantize.MEDIANCUT) for f in frames]
    pal[0].save(folder + "/anim-%dx%d.gif" % (side, count), save_all=True, append_images=pal[1:], duration=40, loop=0)
    """

    /// Makes the files unless they exist; returns why not when Pillow cannot.
    static func prepare(_ fixtures: Fixtures) -> String? {
        if formats.allSatisfy({ FileManager.default.fileExists(atPath: file(fixtures, format: $0).path) }) { return nil }
        guard PillowReference.isAvailable else { return "Pillow not installed: the animation files are made with it" }
        let folder = fixtures.www.appendingPathComponent("anim")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let outcome = try ChildProcess.run(["python3", "-c", script, folder.path, String(side), String(frameCount)], captureOutput: true)
            guard outcome.status == 0 else { return "Pillow could not write the animations: \(outcome.output.suffix(300))" }
        } catch {
            return "Pillow could not write the animations: \(error)"
        }
        return nil
    }
}

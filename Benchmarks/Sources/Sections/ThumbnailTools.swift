import Foundation

/// The three thumbnailers the Thumbnail section compares, each run as a child process over a list of files:
/// `imagedl thumbnail` (this package), `vipsthumbnail` (libvips, Debian's libvips-tools) and a Pillow script
/// (`draft` + `thumbnail(LANCZOS)` + `save`, as the issue measured it). All write a 256 px thumbnail per
/// file: JPEG quality 80 (4:2:0, no metadata) or PNG for the quality comparison.
struct ThumbnailTool {
    enum Kind: String, CaseIterable { case ours, vips, pillow }

    let kind: Kind
    /// `imagedl`, built by run.sh next to the Benchmarks executable.
    let imagedl: String

    var label: String {
        switch kind {
        case .ours: return "imagedl thumbnail"
        case .vips: return "vipsthumbnail"
        case .pillow: return "Pillow"
        }
    }

    /// Whether the tool can run here.
    var isAvailable: Bool {
        switch kind {
        case .ours: return FileManager.default.isExecutableFile(atPath: imagedl)
        case .vips: return ChildProcess.exists("vipsthumbnail")
        case .pillow: return PillowReference.isAvailable
        }
    }

    static let box = 256

    /// The command that thumbnails `files` into `output` as `format` ("jpg" or "png") with `workers`
    /// processes (vips, Pillow: one single-threaded process per worker, each given its share of the files,
    /// as `xargs -P` would) or threads (imagedl's `--concurrency`).
    func command(files: [URL], output: URL, format: String, workers: Int) -> [String] {
        switch kind {
        case .ours:
            return [imagedl, "thumbnail"] + files.map(\.path) + [
                "--size", "\(Self.box)x\(Self.box)", "--quality", "80", "--format", format == "jpg" ? "jpeg" : "png",
                "--output", output.path, "--concurrency", String(workers)]
        case .vips, .pillow:
            let shares = (0..<workers).map { w in stride(from: w, to: files.count, by: workers).map { files[$0] } }
                .filter { !$0.isEmpty }
            let commands = shares.map { single($0, output: output, format: format) }
            if commands.count == 1, let only = commands.first { return only }
            let script = commands.map { $0.map(Self.quoted).joined(separator: " ") + " &" }.joined(separator: " ") + " wait"
            return ["sh", "-c", script]
        }
    }

    /// One single-threaded process over `files`.
    private func single(_ files: [URL], output: URL, format: String) -> [String] {
        switch kind {
        case .vips:
            let pattern = format == "jpg" ? "%s.jpg[Q=80,strip]" : "%s.png[strip]"
            return ["env", "VIPS_CONCURRENCY=1", "vipsthumbnail", "--size", String(Self.box),
                    "-o", output.appendingPathComponent(pattern).path] + files.map(\.path)
        default:
            return ["python3", "-c", Self.pillowScript, output.path, format] + files.map(\.path)
        }
    }

    private static func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// Pillow's recipe: shrink-on-load with draft(), Lanczos thumbnail(), save at quality 80 (4:2:0).
    private static let pillowScript = """
    import os, sys
    from PIL import Image
    out, fmt = sys.argv[1], sys.argv[2]
    for path in sys.argv[3:]:
        im = Image.open(path)
        im.draft("RGB", (\(box), \(box)))
        im.thumbnail((\(box), \(box)), Image.LANCZOS)
        name = os.path.splitext(os.path.basename(path))[0] + "." + fmt
        if fmt == "jpg":
            im.save(os.path.join(out, name), quality=80)
        else:
            im.save(os.path.join(out, name))
    """
}

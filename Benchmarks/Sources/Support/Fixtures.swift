import Decoding
import Foundation

/// The files the benchmark serves and decodes, generated into a work directory by `prepare` (run.sh then
/// points nginx at `<dir>/www`).
///
/// - `large-baseline.jpg`: the corpus' 12 MP photo (sdwebimage/TestJFIF.jpg, Display P3 profile), unchanged.
/// - `large-untagged.jpg`: the same photo without its profile and other markers (`jpegtran -copy none`).
/// - `large-progressive.jpg`: the same photo made progressive by `jpegtran` (same pixels, 10 scans).
/// - `photo-4mp.png`: a 2304×1728 crop of the photo, written by the package's PNG encoder.
/// - `animated.gif`: the corpus' pillow/iss634.gif (245×245, 42 frames).
/// - `small/jpg/NNNN.jpg`, `small/png/NNNN.png`: about 30 KB each, crops of the photo (50 distinct crops,
///   repeated under distinct names).
/// - `tiny.jpg`: 8×8, to measure `djpeg`'s process start-up cost.
/// - `large.jxl`: the photo as a lossy JPEG XL (`cjxl -d 1` from its pixels, not a JPEG transcode), when cjxl is
///   installed.
struct Fixtures {
    static let smallTargetBytes = 30 * 1024
    static let distinctSmallImages = 50

    let directory: URL
    var www: URL { directory.appendingPathComponent("www") }
    var largeBaseline: URL { www.appendingPathComponent("large-baseline.jpg") }
    var largeProgressive: URL { www.appendingPathComponent("large-progressive.jpg") }
    var largeUntagged: URL { www.appendingPathComponent("large-untagged.jpg") }
    var png4MP: URL { www.appendingPathComponent("photo-4mp.png") }
    var animatedGIF: URL { www.appendingPathComponent("animated.gif") }
    var tinyJPEG: URL { directory.appendingPathComponent("tiny.jpg") }
    var largeJXL: URL { directory.appendingPathComponent("large.jxl") }

    /// Server path of small image `index` in `format` ("jpg" or "png").
    /// Zero-padded without `String(format:)`: the Swift clients build every URL with this, and under callgrind
    /// corelibs' formatting (about 14 k instructions) was counted as each download's cost, which curl does not pay.
    static func smallPath(_ index: Int, format: String) -> String {
        let digits = String(index)
        return "small/\(format)/\(String(repeating: "0", count: max(0, 4 - digits.count)))\(digits).\(format)"
    }

    /// How many small images of `format` exist.
    func smallCount(format: String) -> Int {
        let folder = www.appendingPathComponent("small/\(format)")
        return (try? FileManager.default.contentsOfDirectory(atPath: folder.path).count) ?? 0
    }

    /// Mean size in bytes of the small images of `format`.
    func smallMeanBytes(format: String) -> Int {
        let count = smallCount(format: format)
        guard count > 0 else { return 0 }
        var total = 0
        for i in 0..<min(count, Self.distinctSmallImages) {
            let path = www.appendingPathComponent(Self.smallPath(i, format: format)).path
            total += ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
        }
        return total / min(count, Self.distinctSmallImages)
    }

    // MARK: - Generation

    /// Writes every fixture; `smallCount` small images per format.
    func prepare(corpus: URL, smallCount: Int, log: (String) -> Void) throws {
        let fm = FileManager.default
        try fm.createDirectory(at: www.appendingPathComponent("small/jpg"), withIntermediateDirectories: true)
        try fm.createDirectory(at: www.appendingPathComponent("small/png"), withIntermediateDirectories: true)

        let photo = corpus.appendingPathComponent("sdwebimage/TestJFIF.jpg")
        let gif = corpus.appendingPathComponent("pillow/iss634.gif")
        guard fm.fileExists(atPath: photo.path), fm.fileExists(atPath: gif.path) else {
            throw BenchmarkError.missing("corpus files sdwebimage/TestJFIF.jpg and pillow/iss634.gif under \(corpus.path)")
        }
        try replace(largeBaseline, with: Data(contentsOf: photo))
        try replace(animatedGIF, with: Data(contentsOf: gif))
        try run(["jpegtran", "-progressive", "-copy", "all", "-outfile", largeProgressive.path, photo.path])
        try run(["jpegtran", "-copy", "none", "-outfile", largeUntagged.path, photo.path])

        log("decoding the photo with djpeg for crops")
        let ppmPath = directory.appendingPathComponent("photo.ppm")
        try run(["djpeg", "-pnm", "-outfile", ppmPath.path, photo.path])
        let full = try PPMImage(data: Data(contentsOf: ppmPath))
        try? fm.removeItem(at: ppmPath)

        log("writing the 4 MP PNG")
        let crop = full.crop(x: (full.width - 2304) / 2, y: (full.height - 1728) / 2, width: 2304, height: 1728)
        try replace(png4MP, with: encodePNG(crop))

        try writeTinyJPEG()
        if ChildProcess.exists("cjxl") {
            log("encoding the photo as JPEG XL")
            try run(["cjxl", "--lossless_jpeg=0", "-d", "1", "--quiet", photo.path, largeJXL.path])
        }
        try writeSmallImages(from: full, count: max(1, smallCount), log: log)
    }

    private func writeTinyJPEG() throws {
        let ppm = directory.appendingPathComponent("tiny.ppm")
        try replace(ppm, with: PPMImage(width: 8, height: 8, rgb: [UInt8](repeating: 128, count: 8 * 8 * 3)).data)
        try run(["cjpeg", "-outfile", tinyJPEG.path, ppm.path])
        try? FileManager.default.removeItem(at: ppm)
    }

    /// Small JPEGs (cjpeg, quality 85) and PNGs (the package's encoder), each crop size chosen so the files
    /// come out near 30 KB.
    private func writeSmallImages(from photo: PPMImage, count: Int, log: (String) -> Void) throws {
        let scratch = directory.appendingPathComponent("scratch.ppm")
        defer { try? FileManager.default.removeItem(at: scratch) }
        func jpeg(_ image: PPMImage) throws -> Data {
            try replace(scratch, with: image.data)
            let out = directory.appendingPathComponent("scratch.jpg")
            defer { try? FileManager.default.removeItem(at: out) }
            try run(["cjpeg", "-quality", "85", "-outfile", out.path, scratch.path])
            return try Data(contentsOf: out)
        }
        func crop(_ i: Int, _ size: (Int, Int)) -> PPMImage {
            // Spread the crops over the photo so they differ.
            let x = (i * 797) % Swift.max(1, photo.width - size.0)
            let y = (i * 383) % Swift.max(1, photo.height - size.1)
            return photo.crop(x: x, y: y, width: size.0, height: size.1)
        }
        func pick(_ sizes: [(Int, Int)], _ encode: (PPMImage) throws -> Data) throws -> (Int, Int) {
            var best = sizes[0]
            var bestDistance = Int.max
            for size in sizes {
                var total = 0
                for i in 0..<4 { total += try encode(crop(i, size)).count }
                let distance = abs(total / 4 - Self.smallTargetBytes)
                if distance < bestDistance { (best, bestDistance) = (size, distance) }
            }
            return best
        }
        let jpegSize = try pick([(256, 192), (320, 240), (384, 288), (448, 336), (512, 384), (576, 432)], jpeg)
        let pngSize = try pick([(128, 96), (144, 108), (160, 120), (176, 132), (192, 144), (208, 156), (224, 168)], encodePNG)
        log("small images: JPEG \(jpegSize.0)x\(jpegSize.1), PNG \(pngSize.0)x\(pngSize.1), \(count) of each")
        let distinct = Swift.min(count, Self.distinctSmallImages)
        let jpegs = try (0..<distinct).map { try jpeg(crop($0, jpegSize)) }
        let pngs = try (0..<distinct).map { try encodePNG(crop($0, pngSize)) }
        for i in 0..<count {
            try replace(www.appendingPathComponent(Self.smallPath(i, format: "jpg")), with: jpegs[i % distinct])
            try replace(www.appendingPathComponent(Self.smallPath(i, format: "png")), with: pngs[i % distinct])
        }
    }

    private func encodePNG(_ image: PPMImage) throws -> Data {
        let decoded = DecodedImage(width: image.width, height: image.height, pixels: image.rgba, format: .png)
        return try ImageCodersManager.shared.encode(decoded, format: .png)
    }

    private func replace(_ url: URL, with data: Data) throws {
        try data.write(to: url, options: .atomic)
    }

    private func run(_ arguments: [String]) throws {
        let outcome = try ChildProcess.run(arguments)
        guard outcome.status == 0 else {
            throw BenchmarkError.tool("\(arguments.joined(separator: " ")) exited with \(outcome.status)")
        }
    }
}

/// Why the benchmark could not measure something.
enum BenchmarkError: Error, CustomStringConvertible {
    case missing(String)
    case tool(String)
    case failed(String)

    var description: String {
        switch self {
        case .missing(let what): return "missing: \(what)"
        case .tool(let what): return "tool failed: \(what)"
        case .failed(let what): return what
        }
    }
}

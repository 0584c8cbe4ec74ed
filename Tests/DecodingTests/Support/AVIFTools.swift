import Foundation
import TestImages
import TestRequirements
@testable import Decoding

/// libavif's command-line tools driven by the AVIF tests: `avifenc` makes test files from generated PNGs
/// (`AVIFFiles`), and `avifdec` makes the reference every decoded frame is compared with: its 8-bit PNG, with what
/// avifdec leaves to the application done here independently of the coder (the clean-aperture crop, rotation and
/// mirror, read from `avifdec --info`, applied with the package's Swift geometry; the colour converted to sRGB from
/// the PNG's ICC profile or the file's nclx code points).
enum AVIFTools {
    static func scratch() throws -> URL { try AVIFFiles.scratch() }

    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> String { try AVIFFiles.run(tool, arguments) }

    static func encode(_ frames: [DecodedImage], _ arguments: [String], perFrame: [[String]] = [], in folder: URL,
                       name: String) throws -> URL {
        try AVIFFiles.encode(frames, arguments, perFrame: perFrame, in: folder, name: name)
    }

    static func pattern(width: Int, height: Int, frame: Int = 0, alpha: Bool = false) -> DecodedImage {
        AVIFFiles.pattern(width: width, height: height, frame: frame, alpha: alpha)
    }

    /// What `avifdec --info` (libavif's own parse and decode) says about a file.
    struct Info {
        var frames = 1
        var depth = 8
        var monochrome = false
        var colorPrimaries = 2
        var transfer = 2
        /// clap as (widthN, widthD, heightN, heightD, hOffN, hOffD, vOffN, vOffD), irot angle, imir mode.
        var clap: [Int]?
        var irot: Int?
        var imir: Int?
        var durations: [Double] = []
    }

    static func info(_ file: URL) throws -> Info {
        let text = try run("avifdec", ["--no-strict", "--info", file.path])
        var info = Info()
        var timescale = 1.0
        for line in text.split(separator: "\n").map(String.init) {
            func value(_ label: String) -> Int? {
                guard line.contains(label), let colon = line.lastIndex(of: ":") else { return nil }
                return Int(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            if let v = value("Bit Depth") { info.depth = v }
            if line.contains("* Format") { info.monochrome = line.contains("YUV400") }
            if let v = value("Color Primaries") { info.colorPrimaries = v }
            if let v = value("Transfer Char.") { info.transfer = v }
            if line.contains("irot (Rotation)"), let v = value("irot") { info.irot = v }
            if line.contains("imir (Mirror)") { info.imir = line.contains("Mode 0") ? 0 : 1 }
            if line.contains("clap (Clean Aperture)") { info.clap = fractions(line) }
            if line.contains("timescales per second"), let first = line.split(separator: " ").dropFirst().first {
                timescale = Double(first) ?? 1
            }
            // "Decoded frame [0] [pts 0.00 (0 timescales)] [duration 1.00 (30 timescales)] [64x64]": exact units.
            if line.contains("Decoded frame ["), let range = line.range(of: "[duration ") {
                let units = line[range.upperBound...].split(separator: "(").dropFirst().first?.split(separator: " ").first
                info.durations.append((units.flatMap { Double($0) } ?? 0) / timescale)
            }
        }
        info.frames = max(1, info.durations.count)
        return info
    }

    /// "W: 385/1, H: 330/1, hOff: 207/2, vOff: -616/2 (-308/1)" → [385, 1, 330, 1, 207, 2, -616, 2].
    private static func fractions(_ line: String) -> [Int]? {
        var values: [Int] = []
        for key in ["W:", "H:", "hOff:", "vOff:"] {
            guard let range = line.range(of: " \(key) ") else { return nil }
            let token = line[range.upperBound...].prefix { $0 != "," && $0 != " " }
            let parts = token.split(separator: "/").compactMap { Int($0) }
            guard parts.count == 2 else { return nil }
            values += parts
        }
        return values
    }

    /// The reference RGBA of frame `index`, after the geometry and colour an application applies.
    static func reference(_ file: URL, frame index: Int, info: Info, in folder: URL) throws -> DecodedImage {
        let png = folder.appendingPathComponent("\(file.deletingPathExtension().lastPathComponent)-ref\(index).png")
        // avifdec's default depth: 16-bit PNGs for 10- and 12-bit files (its 8-bit RGBA output of 12-bit 4:2:0
        // goes through libyuv's I012ToARGBMatrix, up to 214 levels off the source here; the 16-bit output takes
        // libavif's own conversion). An 8-bit monochrome image's 8-bit PNG is its luma plane as is, without the
        // range expansion, so it is asked for at 16 bits too. The PNG decoder keeps a 16-bit sample's high byte.
        let depth = info.depth > 8 || info.monochrome ? "16" : "8"
        try run("avifdec", ["--no-strict", "--jobs", "1", "-d", depth, "--index", String(index), file.path, png.path])
        var image = try PNGCoder().decode(try Data(contentsOf: png), options: ImageDecodingOptions(colorManagement: .keepOriginal))
        if let clap = info.clap, let rect = cropRect(clap, width: image.width, height: image.height) {
            image = try image.cropped(to: rect)
        }
        if let angle = info.irot { image = try image.rotated(quarterTurns: -angle) }  // irot turns anticlockwise
        if let mode = info.imir { image = try image.flipped(horizontally: mode == 1, vertically: mode == 0) }
        if image.iccProfile == nil {
            HEIFCoder.tag(&image, with: NCLXColor(primaries: info.colorPrimaries, transfer: info.transfer))
        }
        ColorManagement.convertToSRGB(&image)
        return image
    }

    /// The clap rectangle (ISO/IEC 14496-12 12.1.4: centre at size/2 plus the offset), or nil when it is not
    /// whole pixels inside the image: then it is ignored, as the coder does.
    static func cropRect(_ c: [Int], width: Int, height: Int) -> PixelRect? {
        guard c.count == 8, c[1] > 0, c[3] > 0, c[5] > 0, c[7] > 0, c[0] % c[1] == 0, c[2] % c[3] == 0 else { return nil }
        let w = c[0] / c[1], h = c[2] / c[3]
        // x = width/2 + hOff - w/2, in halves of hOffD.
        let xNumerator = width * c[5] + 2 * c[4] - w * c[5], yNumerator = height * c[7] + 2 * c[6] - h * c[7]
        guard xNumerator % (2 * c[5]) == 0, yNumerator % (2 * c[7]) == 0 else { return nil }
        let x = xNumerator / (2 * c[5]), y = yNumerator / (2 * c[7])
        guard w > 0, h > 0, x >= 0, y >= 0, x + w <= width, y + h <= height else { return nil }
        return PixelRect(x: x, y: y, width: w, height: h)
    }

    /// Mean absolute difference and its 99.9th percentile over every byte (RGBA) of two same-size images.
    static func difference(_ a: [UInt8], _ b: [UInt8]) -> (mean: Double, p999: Int) {
        guard a.count == b.count, !a.isEmpty else { return (.infinity, 255) }
        var histogram = [Int](repeating: 0, count: 256)
        var sum = 0
        for i in a.indices {
            let d = abs(Int(a[i]) - Int(b[i]))
            histogram[d] += 1
            sum += d
        }
        let threshold = Int((Double(a.count) * 0.999).rounded(.up))
        var seen = 0, p999 = 0
        for (value, count) in histogram.enumerated() {
            seen += count
            if seen >= threshold {
                p999 = value
                break
            }
        }
        return (Double(sum) / Double(a.count), p999)
    }
}


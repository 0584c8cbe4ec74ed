import Decoding
import Foundation
import TestRequirements

/// AVIF test files made with libavif's `avifenc` (from libavif-bin, which `.ci/run` installs) from pictures drawn
/// here. libaom 3.6 (Debian 12) asserts in its real-time rate control on sequences of more than about ten frames
/// at the fast speeds, so long sequences go through SVT-AV1 (4:2:0 only), which libavif also has.
public enum AVIFFiles {
    /// A new folder for one test's files; the caller removes it.
    public static func scratch() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("avif-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    public struct ToolFailure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `tool` (found on PATH, or a path) with `arguments`; its output, or a thrown `ToolFailure` with it.
    @discardableResult
    public static func run(_ tool: String, _ arguments: [String]) throws -> String {
        guard let path = tool.hasPrefix("/") ? tool : Executables.find(tool) else {
            throw ToolFailure(description: "\(tool) is not on PATH")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try ChildProcesses.run(process)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw ToolFailure(description: "\(tool) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(text.suffix(2000))")
        }
        return text
    }

    /// `avifenc arguments frames… NAME.avif` in `folder`: one input PNG per frame (a sequence when there are
    /// several), each after its `perFrame` arguments (a duration).
    public static func encode(_ frames: [DecodedImage], _ arguments: [String], perFrame: [[String]] = [], in folder: URL,
                              name: String) throws -> URL {
        var inputs: [String] = []
        for (index, frame) in frames.enumerated() {
            let png = folder.appendingPathComponent("\(name)-\(index).png")
            try ImageCodersManager().encode(frame, format: .png).write(to: png)
            inputs += (index < perFrame.count ? perFrame[index] : []) + [png.path]
        }
        let output = folder.appendingPathComponent("\(name).avif")
        try run("avifenc", ["--jobs", "1"] + arguments + inputs + [output.path])
        return output
    }

    /// The bytes of `encode` for one test, its folder removed.
    public static func data(_ frames: [DecodedImage], _ arguments: [String], perFrame: [[String]] = []) throws -> Data {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        return try Data(contentsOf: try encode(frames, arguments, perFrame: perFrame, in: folder, name: "file"))
    }

    /// A test picture: smooth gradients, hard-edged bars and a disc that moves with `frame` (so frames differ and
    /// inter prediction has work), with an alpha ramp (all four corners different) when `alpha` is true.
    public static func pattern(width: Int, height: Int, frame: Int = 0, alpha: Bool = false) -> DecodedImage {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        let cx = Double(width) * (0.3 + 0.08 * Double(frame % 5)), cy = Double(height) * 0.5
        let radius = Double(min(width, height)) * 0.25
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                var r = x * 255 / max(1, width - 1), g = y * 255 / max(1, height - 1), b = (x + y + frame * 9) * 3 % 256
                if (x / 7 + frame) % 4 == 0 { (r, g, b) = (250, 30, 40) }
                let dx = Double(x) - cx, dy = Double(y) - cy
                if dx * dx + dy * dy < radius * radius { (r, g, b) = (20, 60 + frame * 30 % 190, 220) }
                pixels[i] = UInt8(r)
                pixels[i + 1] = UInt8(g)
                pixels[i + 2] = UInt8(b)
                if alpha { pixels[i + 3] = UInt8(clamping: 40 + (x * 160 / max(1, width)) + (y * 55 / max(1, height))) }
            }
        }
        return DecodedImage(width: width, height: height, pixels: pixels, format: .png)
    }

    /// A `side`×`side` sequence of `frames` frames at 25 fps with a key frame every 30, through SVT-AV1 (fastest
    /// speed): six squares moving over a flat background, as the benchmark's GIF/APNG/WebP animations. Made once
    /// per process and size.
    public static func largeSequence(side: Int, frames: Int) throws -> Data {
        let key = "\(side)x\(frames)"
        if let made = largeLock.withLock({ large[key] }) { return made }
        let images = (0..<frames).map { movingSquares(side: side, frame: $0) }
        let data = try data(images, ["-c", "svt", "-s", "10", "-y", "420", "--fps", "25", "-k", "30"])
        largeLock.withLock { large[key] = data }
        return data
    }

    /// Frame `frame` of `largeSequence`.
    public static func movingSquares(side: Int, frame: Int) -> DecodedImage {
        var pixels = [UInt8](repeating: 0, count: side * side * 4)
        for i in stride(from: 0, to: pixels.count, by: 4) { (pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3]) = (240, 240, 230, 255) }
        let square = max(1, side * 12 / 100)
        for k in 0..<6 {
            let x0 = (frame * 7 + k * side * 15 / 100) % max(1, side - square)
            let y0 = (frame * 5 + k * side * 9 / 100) % max(1, side - square)
            let colour: [UInt8] = [UInt8(k * 40 % 256), UInt8((255 - k * 30) % 256), UInt8(frame * 2 % 256), 255]
            for y in y0..<min(side, y0 + square) {
                for x in x0..<min(side, x0 + square) {
                    let i = (y * side + x) * 4
                    pixels.replaceSubrange(i..<i + 4, with: colour)
                }
            }
        }
        return DecodedImage(width: side, height: side, pixels: pixels, format: .png)
    }

    nonisolated(unsafe) private static var large: [String: Data] = [:]
    private static let largeLock = NSLock()
}

import Decoding
import Foundation
import TestImages
import TestRequirements

/// JPEG XL test files made by `cjxl` from inputs written here (PNG of any colour type and depth, PFM, APNG, GIF,
/// or a fixture), and their references from `djxl`: every frame as djxl decodes it, converted to sRGB.
enum JXLTestFiles {
    /// A source image for cjxl, written into the case's folder.
    enum Input: Sendable {
        /// `channels` 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA) at 8 or 16 bits, the test pattern.
        case png(width: Int, height: Int, channels: Int, bitDepth: Int, exifOrientation: Int? = nil)
        /// 32-bit float RGB in 0...1 (PFM), the test pattern.
        case pfm(width: Int, height: Int)
        /// An animation: frames of RGBA8 with offsets, blend and dispose operations.
        case apng(loopCount: Int)
        case gif(loopCount: Int)
        /// A file of Tests/Support/DecoderFixtures.
        case fixture(String)
    }

    /// How the reference is made from djxl's output.
    enum Reference: Sendable {
        /// djxl to an 8-bit PNG (APNG for animations), decoded by the package's PNG coder and converted to sRGB
        /// from the profile djxl writes into it (lcms2 or the matrix/TRC fast path, both checked against lcms2).
        case png
        /// djxl to PFM (linear float), converted here: `matrix` (row-major 3×3, linear RGB to linear sRGB, nil
        /// for sRGB primaries), clipped to 0...1, the sRGB curve, rounded.
        case linearPFM(matrix: [Double]?)
    }

    struct Case: Sendable, CustomStringConvertible {
        let name: String
        let input: Input
        let cjxl: [String]
        var reference = Reference.png
        var description: String { name }
    }

    /// A new empty folder under the system's temporary directory (the caller removes it), or under
    /// `$OD_JXL_TEST_FILES` to keep the files for a look.
    static func temporaryFolder() throws -> URL {
        let base = ProcessInfo.processInfo.environment["OD_JXL_TEST_FILES"].map { URL(fileURLWithPath: $0) }
        let folder = (base ?? FileManager.default.temporaryDirectory).appendingPathComponent("jxl-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Removes a folder of `temporaryFolder()`, unless `$OD_JXL_TEST_FILES` asked to keep them.
    static func remove(_ folder: URL) {
        if ProcessInfo.processInfo.environment["OD_JXL_TEST_FILES"] == nil { try? FileManager.default.removeItem(at: folder) }
    }

    /// The case's JPEG XL file, made in `folder`.
    static func make(_ testCase: Case, in folder: URL) throws -> URL {
        let source: URL
        switch testCase.input {
        case .png(let width, let height, let channels, let bitDepth, let orientation):
            source = folder.appendingPathComponent("\(testCase.name).png")
            let samples = pattern(width: width, height: height, channels: channels, maximum: bitDepth == 16 ? 65535 : 255)
            try RawPNG.encode(width: width, height: height, channels: channels, bitDepth: bitDepth, samples: samples,
                              exifOrientation: orientation).write(to: source)
        case .pfm(let width, let height):
            source = folder.appendingPathComponent("\(testCase.name).pfm")
            try pfm(width: width, height: height).write(to: source)
        case .apng(let loopCount):
            source = folder.appendingPathComponent("\(testCase.name).png")
            try animationAPNG(loopCount: loopCount).write(to: source)
        case .gif(let loopCount):
            source = folder.appendingPathComponent("\(testCase.name).gif")
            try animationGIF(loopCount: loopCount).write(to: source)
        case .fixture(let name):
            source = DecoderFixtures.directory.appendingPathComponent(name)
        }
        let output = folder.appendingPathComponent("\(testCase.name).jxl")
        try Tool.run(["cjxl", source.path, output.path, "--quiet"] + testCase.cjxl)
        return output
    }

    /// What djxl decodes from `file`: every frame, RGBA8 in sRGB, with durations and the loop count.
    struct Decoded {
        let width: Int
        let height: Int
        let frames: [[UInt8]]
        let durations: [TimeInterval]
        let loopCount: Int
    }

    static func reference(_ file: URL, _ reference: Reference, in folder: URL) throws -> Decoded {
        switch reference {
        case .png:
            let png = folder.appendingPathComponent(file.deletingPathExtension().lastPathComponent + ".djxl.png")
            try Tool.run(["djxl", file.path, png.path, "--quiet"])
            let image = try ImageCodersManager.shared.decode(try Data(contentsOf: png))
            guard let animation = image.animation else {
                return Decoded(width: image.width, height: image.height, frames: [image.pixels], durations: [0], loopCount: 0)
            }
            let frames = try (0..<animation.frameCount).map { try animation.frame(at: $0) }
            return Decoded(width: image.width, height: image.height, frames: frames,
                           durations: (0..<animation.frameCount).map { animation.duration(at: $0) }, loopCount: animation.loopCount)
        case .linearPFM(let matrix):
            let pfm = folder.appendingPathComponent(file.deletingPathExtension().lastPathComponent + ".djxl.pfm")
            try Tool.run(["djxl", file.path, pfm.path, "--quiet"])
            let (width, height, samples) = try readPFM(try Data(contentsOf: pfm))
            var rgba = [UInt8](repeating: 255, count: width * height * 4)
            for pixel in 0..<width * height {
                var rgb = (0..<3).map { Double(samples[pixel * 3 + $0]) }
                if let m = matrix {
                    rgb = (0..<3).map { row in (0..<3).reduce(0) { $0 + m[row * 3 + $1] * rgb[$1] } }
                }
                for c in 0..<3 {
                    let v = min(max(rgb[c], 0), 1)
                    let encoded = v <= 0.0031308 ? 12.92 * v : 1.055 * pow(v, 1 / 2.4) - 0.055
                    rgba[pixel * 4 + c] = UInt8((encoded * 255).rounded())
                }
            }
            return Decoded(width: width, height: height, frames: [rgba], durations: [0], loopCount: 0)
        }
    }

    /// Linear BT.2020 to linear sRGB (both D65), rows of the matrix.
    static let bt2020ToSRGB: [Double] = [1.660491, -0.587641, -0.072850, -0.124550, 1.132900, -0.008349, -0.018151, -0.100579, 1.118730]

    // MARK: - Inputs

    /// A deterministic picture: gradients, a ripple and noise (so lossy modes have texture), alpha as a ramp.
    static func pattern(width: Int, height: Int, channels: Int, maximum: Int) -> [UInt16] {
        var random = SeededRandom(seed: UInt64(width * 7919 + height * 31 + channels))
        var out = [UInt16](repeating: 0, count: width * height * channels)
        for y in 0..<height {
            for x in 0..<width {
                let fx = Double(x) / Double(max(1, width - 1)), fy = Double(y) / Double(max(1, height - 1))
                let ripple = 0.5 + 0.5 * sin(Double(x + 2 * y) / 5)
                let noise = Double(Int(random.next() % 17) - 8) / 255
                let colour = [fx, fy, ripple].map { min(max($0 * 0.9 + noise, 0), 1) }
                let values: [Double]
                switch channels {
                case 1: values = [(colour[0] + colour[1] + colour[2]) / 3]
                case 2: values = [(colour[0] + colour[1]) / 2, 1 - fx * 0.8]
                case 3: values = colour
                default: values = colour + [1 - fx * fy]
                }
                for (c, v) in values.enumerated() {
                    out[(y * width + x) * channels + c] = UInt16((v * Double(maximum)).rounded())
                }
            }
        }
        return out
    }

    /// Float RGB in 0...1, little-endian, rows bottom-up (PFM's order).
    static func pfm(width: Int, height: Int) -> Data {
        let samples = pattern(width: width, height: height, channels: 3, maximum: 65535)
        var out = Data("PF\n\(width) \(height)\n-1.0\n".utf8)
        for y in (0..<height).reversed() {
            for i in 0..<width * 3 {
                withUnsafeBytes(of: (Float(samples[y * width * 3 + i]) / 65535).bitPattern.littleEndian) { out.append(contentsOf: $0) }
            }
        }
        return out
    }

    static func readPFM(_ data: Data) throws -> (Int, Int, [Float]) {
        let bytes = [UInt8](data)
        var fields: [String] = []
        var offset = 0
        while fields.count < 4, offset < bytes.count {  // "PF", width, height, scale, separated by whitespace
            while offset < bytes.count, bytes[offset] == 0x0A || bytes[offset] == 0x20 { offset += 1 }
            let start = offset
            while offset < bytes.count, bytes[offset] != 0x0A, bytes[offset] != 0x20 { offset += 1 }
            fields.append(String(decoding: bytes[start..<offset], as: UTF8.self))
        }
        offset += 1
        guard fields.count == 4, fields[0] == "PF", let width = Int(fields[1]), let height = Int(fields[2]),
              let scale = Double(fields[3]), bytes.count - offset >= width * height * 12 else {
            throw ToolFailure(message: "djxl wrote an unexpected PFM")
        }
        var samples = [Float](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for i in 0..<width * 3 {
                let at = offset + ((height - 1 - y) * width * 3 + i) * 4
                let raw = UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
                samples[y * width * 3 + i] = Float(bitPattern: scale < 0 ? raw : raw.byteSwapped)
            }
        }
        return (width, height, samples)
    }

    /// Four frames on a 40×30 canvas: a full opaque one, a translucent one blended over it at an offset, one
    /// disposed to background, a translucent one inside that one's rectangle; delays 100, 50, 200 and 30 ms.
    /// (cjxl 0.7's APNG reader fails on a frame after a disposed one that it does not lie inside.)
    static func animationAPNG(loopCount: Int) -> Data {
        func frame(_ w: Int, _ h: Int, _ rgba: (Int, Int) -> [UInt8]) -> [UInt8] {
            (0..<h).flatMap { y in (0..<w).flatMap { x in rgba(x, y) } }
        }
        return RawPNG.apng(width: 40, height: 30, loopCount: loopCount, frames: [
            .init(x: 0, y: 0, width: 40, height: 30, rgba: frame(40, 30) { x, y in [UInt8(x * 6), UInt8(y * 8), 90, 255] },
                  delayMilliseconds: 100, dispose: 0, blend: 0),
            .init(x: 5, y: 4, width: 20, height: 12, rgba: frame(20, 12) { x, _ in [250, 20, UInt8(x * 12), 128] },
                  delayMilliseconds: 50, dispose: 0, blend: 1),
            .init(x: 12, y: 10, width: 16, height: 16, rgba: frame(16, 16) { _, y in [10, 200, UInt8(y * 15), 255] },
                  delayMilliseconds: 200, dispose: 1, blend: 0),
            .init(x: 14, y: 12, width: 10, height: 10, rgba: frame(10, 10) { x, y in [UInt8(x * 25), UInt8(y * 25), 255, 200] },
                  delayMilliseconds: 30, dispose: 0, blend: 0),
        ])
    }

    /// Five frames on a 24×18 screen: full, partial with transparency, disposal to background and to previous.
    /// (cjxl 0.7 reads disposal 0 as "to background" and then refuses a partial frame: the others keep theirs.)
    static func animationGIF(loopCount: Int) -> Data {
        func indices(_ w: Int, _ h: Int, _ pick: (Int, Int) -> UInt8) -> [UInt8] {
            (0..<h).flatMap { y in (0..<w).map { x in pick(x, y) } }
        }
        return AnimationBuilders.gif(width: 24, height: 18, loopCount: loopCount, frames: [
            .init(width: 24, height: 18, indices: indices(24, 18) { x, y in UInt8((x / 6 + y / 6) % 4) }, disposal: 1,
                  delayCentiseconds: 10),
            .init(x: 3, y: 2, width: 10, height: 8, indices: indices(10, 8) { x, _ in UInt8(x % 3) }, disposal: 1,
                  transparentIndex: 0, delayCentiseconds: 20),
            .init(x: 8, y: 6, width: 12, height: 9, indices: indices(12, 9) { _, y in UInt8(1 + y % 3) }, disposal: 2,
                  delayCentiseconds: 5),
            .init(x: 0, y: 0, width: 6, height: 6, indices: indices(6, 6) { _, _ in 3 }, disposal: 3, delayCentiseconds: 15),
            .init(x: 14, y: 10, width: 10, height: 8, indices: indices(10, 8) { x, y in UInt8((x + y) % 4) }, disposal: 1,
                  delayCentiseconds: 40),
        ])
    }
}

/// Runs the test tools (cjxl, djxl): one line of their error output when they fail.
enum Tool {
    /// `arguments[0]` is a path or a name found on PATH.
    static func run(_ arguments: [String]) throws {
        let executable = arguments[0].hasPrefix("/") ? arguments[0] : Executables.find(arguments[0])
        guard let executable else { throw ToolFailure(message: "no \(arguments[0]) on PATH") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(arguments.dropFirst())
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try ChildProcesses.run(process)
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ToolFailure(message: "\(arguments.joined(separator: " ")) exited with \(process.terminationStatus): "
                + String(decoding: message.suffix(400), as: UTF8.self))
        }
    }
}

struct ToolFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// PNG files of any colour type and bit depth, with stored (uncompressed) deflate blocks, so the tests can
/// hand cjxl 16-bit and gray-alpha inputs the package's encoder does not write.
enum RawPNG {
    static func encode(width: Int, height: Int, channels: Int, bitDepth: Int, samples: [UInt16], exifOrientation: Int? = nil) -> Data {
        func u32(_ v: Int) -> [UInt8] { [UInt8((v >> 24) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        let colourType: UInt8 = [1: 0, 2: 4, 3: 2, 4: 6][channels] ?? 6
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        func chunk(_ type: String, _ body: [UInt8]) {
            let typed = Array(type.utf8) + body
            out += u32(body.count) + typed + u32(Int(crc32(typed)))
        }
        chunk("IHDR", u32(width) + u32(height) + [UInt8(bitDepth), colourType, 0, 0, 0])
        if let exifOrientation {
            // A big-endian TIFF header with one IFD entry: Orientation (0x0112), SHORT, 1.
            chunk("eXIf", [0x4D, 0x4D, 0, 0x2A, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, UInt8(exifOrientation), 0, 0, 0, 0, 0, 0])
        }
        var raw: [UInt8] = []
        raw.reserveCapacity(height * (1 + width * channels * bitDepth / 8))
        for y in 0..<height {
            raw.append(0)  // filter: none
            for i in 0..<width * channels {
                let v = samples[y * width * channels + i]
                if bitDepth == 16 { raw += [UInt8(v >> 8), UInt8(v & 0xFF)] } else { raw.append(UInt8(v)) }
            }
        }
        chunk("IDAT", zlibStored(raw))
        chunk("IEND", [])
        return Data(out)
    }

    struct Frame {
        let x: Int, y: Int, width: Int, height: Int
        let rgba: [UInt8]
        let delayMilliseconds: Int
        let dispose: UInt8, blend: UInt8
    }

    /// An RGBA8 APNG whose default image is its first frame (which must cover the canvas).
    static func apng(width: Int, height: Int, loopCount: Int, frames: [Frame]) -> Data {
        func u32(_ v: Int) -> [UInt8] { [UInt8((v >> 24) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        func chunk(_ type: String, _ body: [UInt8]) {
            let typed = Array(type.utf8) + body
            out += u32(body.count) + typed + u32(Int(crc32(typed)))
        }
        chunk("IHDR", u32(width) + u32(height) + [8, 6, 0, 0, 0])
        chunk("acTL", u32(frames.count) + u32(loopCount))
        var sequence = 0
        for (index, frame) in frames.enumerated() {
            let placement: [UInt8] = u32(sequence) + u32(frame.width) + u32(frame.height) + u32(frame.x) + u32(frame.y)
            let delay: [UInt8] = [UInt8(frame.delayMilliseconds >> 8), UInt8(frame.delayMilliseconds & 0xFF), 0x03, 0xE8]
            chunk("fcTL", placement + delay + [frame.dispose, frame.blend])
            sequence += 1
            var rows: [UInt8] = []
            for y in 0..<frame.height {
                rows.append(0)  // filter: none
                rows += frame.rgba[y * frame.width * 4..<(y + 1) * frame.width * 4]
            }
            if index == 0 {
                chunk("IDAT", zlibStored(rows))
            } else {
                chunk("fdAT", u32(sequence) + zlibStored(rows))
                sequence += 1
            }
        }
        chunk("IEND", [])
        return Data(out)
    }

    /// A zlib stream of stored blocks (no compression) with its Adler-32.
    static func zlibStored(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65535, bytes.count - offset)
            let final: UInt8 = offset + count == bytes.count ? 1 : 0
            out += [final, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += bytes[offset..<offset + count]
            offset += count
        } while offset < bytes.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        let adler = b << 16 | a
        return out + [UInt8(adler >> 24), UInt8((adler >> 16) & 0xFF), UInt8((adler >> 8) & 0xFF), UInt8(adler & 0xFF)]
    }
}

/// How far two RGBA8 buffers are apart, byte by byte.
struct PixelDifference: CustomStringConvertible {
    let mean: Double
    let p999: Int
    let max: Int

    init(_ a: [UInt8], _ b: [UInt8]) {
        // Through buffer pointers: zip over two arrays is unspecialised in debug builds and, under the address
        // sanitizer, allocated inside the loop (the progressive test's comparisons ran for many minutes there).
        var histogram = [Int](repeating: 0, count: 256)
        var sum = 0
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                histogram.withUnsafeMutableBufferPointer { histogram in
                    for i in 0..<Swift.min(a.count, b.count) {
                        let d = abs(Int(a[i]) - Int(b[i]))
                        histogram[d] += 1
                        sum += d
                    }
                }
            }
        }
        let count = Swift.max(1, Swift.min(a.count, b.count))
        mean = Double(sum) / Double(count)
        max = histogram.lastIndex { $0 > 0 } ?? 0
        var seen = 0
        var p = 0
        for (d, n) in histogram.enumerated() {
            seen += n
            if Double(seen) >= Double(count) * 0.999 { p = d; break }
        }
        p999 = p
    }

    /// The issue's tolerance: mean absolute difference ≤ 1, 99.9th percentile ≤ 8.
    var withinTolerance: Bool { mean <= 1 && p999 <= 8 }
    var description: String { String(format: "mean %.3f, p99.9 %d, max %d", mean, p999, max) }
}

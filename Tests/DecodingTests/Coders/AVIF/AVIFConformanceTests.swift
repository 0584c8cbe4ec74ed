import Foundation
import Testing
import TestRequirements
@testable import Decoding

/// Every AVIF still and sequence of the test set, each frame against `avifdec`'s output converted to sRGB
/// (`AVIFTools.reference`): mean absolute difference ≤ 1 and 99.9th percentile ≤ 8 over every RGBA byte. The set:
/// files `avifenc` writes here (every bit depth and subsampling, alpha straight and premultiplied, limited range,
/// nclx colour spaces, an ICC profile, odd sizes, transforms, grids, sequences) and libavif's own test files
/// (Tests/Support/DecoderFixtures/avif).
@Suite(.serialized, .offThePool) struct AVIFConformanceTests {
    /// One file `avifenc` makes from `AVIFTools.pattern` frames.
    struct Generated: CustomTestStringConvertible, Sendable {
        let name: String
        let arguments: [String]
        var width = 67
        var height = 45
        var frames = 1
        var alpha = false
        /// Tag the input with a Display P3 ICC profile (`--icc`).
        var icc = false
        /// Arguments given before each frame's input (frame durations).
        var perFrame: [[String]] = []
        var testDescription: String { name }
    }

    static let generated: [Generated] = {
        var cases: [Generated] = []
        for depth in ["8", "10", "12"] {
            for yuv in ["444", "422", "420", "400"] {
                cases.append(Generated(name: "\(depth)-bit \(yuv)", arguments: ["-d", depth, "-y", yuv]))
            }
        }
        cases += [
            Generated(name: "8-bit 420 alpha", arguments: ["-y", "420"], alpha: true),
            Generated(name: "10-bit 444 premultiplied alpha", arguments: ["-d", "10", "-y", "444", "-p"], alpha: true),
            Generated(name: "12-bit 420 alpha", arguments: ["-d", "12", "-y", "420"], alpha: true),
            Generated(name: "8-bit 420 premultiplied alpha", arguments: ["-y", "420", "--premultiply"], alpha: true),
            Generated(name: "8-bit 420 limited range", arguments: ["-y", "420", "-r", "limited"]),
            Generated(name: "10-bit 400 limited range", arguments: ["-d", "10", "-y", "400", "-r", "limited"]),
            Generated(name: "BT.2020 matrix, BT.2020 primaries, SDR", arguments: ["-d", "10", "-y", "420", "--cicp", "9/1/9"]),
            Generated(name: "BT.2020 matrix coefficients on sRGB", arguments: ["-y", "444", "--cicp", "1/13/9"]),
            Generated(name: "BT.2020 PQ (not tone-mapped)", arguments: ["-d", "10", "-y", "420", "--cicp", "9/16/9"]),
            Generated(name: "Display P3 nclx", arguments: ["-y", "420", "--cicp", "12/13/6"]),
            Generated(name: "identity matrix 444", arguments: ["-y", "444", "--cicp", "1/13/0"]),
            Generated(name: "lossless", arguments: ["--lossless"]),
            Generated(name: "8-bit 420 with an ICC profile", arguments: ["-y", "420"], icc: true),
            Generated(name: "10-bit 444 with an ICC profile and alpha", arguments: ["-d", "10", "-y", "444"], alpha: true, icc: true),
            Generated(name: "1x1", arguments: ["-y", "420"], width: 1, height: 1),
            Generated(name: "3x2 alpha", arguments: ["-y", "420"], width: 3, height: 2, alpha: true),
            Generated(name: "irot 1", arguments: ["--irot", "1"]),
            Generated(name: "irot 2, imir 0", arguments: ["--irot", "2", "--imir", "0"]),
            Generated(name: "irot 3, imir 1", arguments: ["--irot", "3", "--imir", "1"]),
            Generated(name: "imir 1 alpha", arguments: ["--imir", "1"], alpha: true),
            Generated(name: "clap at odd offsets 444", arguments: ["-y", "444", "--crop", "3,5,41,31"]),
            Generated(name: "clap, irot 1, imir 0, 420", arguments: ["-y", "420", "--crop", "4,6,40,30", "--irot", "1", "--imir", "0"]),
            Generated(name: "grid 2x2", arguments: ["-y", "420", "-g", "2x2"], width: 256, height: 192),
            Generated(name: "grid 2x2 with irot 1, imir 1", arguments: ["-y", "420", "-g", "2x2", "--irot", "1", "--imir", "1"],
                      width: 256, height: 192),
            Generated(name: "grid 3x1 10-bit alpha with clap", arguments: ["-d", "10", "-y", "444", "-g", "3x1", "--crop", "10,2,150,60"],
                      width: 192, height: 64, alpha: true),
            Generated(name: "sequence 8-bit 420", arguments: ["-y", "420"], frames: 5),
            Generated(name: "sequence key frame every 2, durations", arguments: ["-y", "420", "-k", "2", "--timescale", "100"], frames: 6,
                      perFrame: [["--duration", "5"], ["--duration", "50"], ["--duration", "1"], ["--duration", "17"], ["--duration", "40"], ["--duration", "40"]]),
            Generated(name: "sequence 10-bit 444 alpha", arguments: ["-d", "10", "-y", "444"], frames: 4, alpha: true),
            Generated(name: "sequence 12-bit 400", arguments: ["-d", "12", "-y", "400"], frames: 3),
            Generated(name: "sequence with irot 3 and odd size", arguments: ["-y", "420", "--irot", "3"], width: 33, height: 21, frames: 3),
        ]
        return cases
    }()

    @Test(.requires(.libavif, .avifTools), arguments: generated)
    func generatedFileMatchesAvifdec(_ spec: Generated) throws {
        let folder = try AVIFTools.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        var arguments = ["-s", "10"] + spec.arguments
        if spec.icc {
            let profile = folder.appendingPathComponent("p3.icc")
            try ICCProfileBuilder.rgb("Display P3 test", chromaticities: NCLXColor.chromaticities[12] ?? [], curve: .sRGB).data
                .write(to: profile)
            arguments += ["--icc", profile.path]
        }
        let frames = (0..<spec.frames).map { AVIFTools.pattern(width: spec.width, height: spec.height, frame: $0, alpha: spec.alpha) }
        let file = try AVIFTools.encode(frames, arguments, perFrame: spec.perFrame, in: folder, name: "case")
        let decoded = try Self.expectMatchesAvifdec(file, in: folder)
        #expect(decoded.frameCount == spec.frames, "\(spec.name)")
    }

    /// libavif's test files that libavif 0.11 and avifdec decode (the others are in the fallback tests).
    static let libavifFiles = [
        "colors-animated-8bpc.avif", "colors-animated-8bpc-alpha-exif-xmp.avif", "colors-animated-8bpc-depth-exif-xmp.avif",
        "colors-animated-12bpc-keyframes-0-2-3.avif", "abc_color_irot_alpha_irot.avif", "alpha_noispe.avif",
        "color_grid_alpha_nogrid.avif", "clap_irot_imir_non_essential.avif", "clop_irot_imor.avif",
        "circle_custom_properties.avif", "draw_points_idat.avif", "draw_points_idat_progressive.avif", "extended_pixi.avif",
        "white_1x1.avif", "sofa_grid1x5_420.avif", "paris_icc_exif_xmp.avif", "kodim03_yuv420_8bpc.avif",
        "colors_text_wcg_sdr_rec2020.avif",
    ]

    @Test(.requires(.libavif, .avifTools), arguments: libavifFiles)
    func libavifTestFileMatchesAvifdec(_ name: String) throws {
        let folder = try AVIFTools.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Self.expectMatchesAvifdec(AVIFFixtures.url("libavif/\(name)"), in: folder)
    }

    /// The layered image with an operating point and layer selection decodes its selected layer (layer 0,
    /// 360×182), not the full one (1436×730).
    @Test(.requires(.libavif, .avifTools))
    func layeredImageShowsItsSelectedLayer() throws {
        let folder = try AVIFTools.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let image = try Self.expectMatchesAvifdec(AVIFFixtures.url("av1-avif/quebec_3layer_op2.avif"), in: folder)
        #expect(image.width == 360 && image.height == 182)
    }

    /// A sequence with an audio track, which libavif 0.11 refuses as it stands: the audio track is hidden from it
    /// (renamed `free`), and every frame matches avifdec's decode of the same file without that track.
    @Test(.requires(.libavif, .avifTools))
    func sequenceWithAnAudioTrackDecodesEveryFrame() throws {
        let folder = try AVIFTools.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = try Data(contentsOf: AVIFFixtures.url("libavif/colors-animated-8bpc-audio.avif"))
        let pictures = try #require(AVIFForeignTracks.hidden(in: data))
        #expect(pictures.count == data.count)
        let withoutAudio = folder.appendingPathComponent("without-audio.avif")
        try pictures.write(to: withoutAudio)
        let image = try ImageCodersManager.shared.decode(data)
        #expect(image.frameCount == 5)
        let reference = try Self.expectMatchesAvifdec(withoutAudio, in: folder)
        for index in 0..<image.frameCount {
            #expect(try image.animation?.frame(at: index) == reference.animation?.frame(at: index), "frame \(index)")
        }
    }

    /// A sequence made by another encoder (link-u's star-8bpc.avifs), with its still primary image and with the
    /// meta box that holds it removed: every frame, not just the still image libheif shows.
    @Test(.requires(.libavif, .avifTools))
    func sequencesWithAndWithoutAStillPrimaryImage() throws {
        let folder = try AVIFTools.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = DecoderFixtures.directory.appendingPathComponent("star-8bpc.avifs")
        #expect(try Self.expectMatchesAvifdec(file, in: folder).frameCount == 5)
        var bytes = [UInt8](try Data(contentsOf: file))
        let meta = try #require(bytes.firstRange(of: Array("meta".utf8)))
        bytes.replaceSubrange(meta, with: Array("free".utf8))
        let sequenceOnly = folder.appendingPathComponent("sequence-only.avif")
        try Data(bytes).write(to: sequenceOnly)
        #expect(try Self.expectMatchesAvifdec(sequenceOnly, in: folder).frameCount == 5)
    }

    /// `OD_AVIF_CONFORMANCE_DIR=DIR swift test --filter folderReport`: every `.avif` under DIR (for example the AOM
    /// conformance files of github.com/AOMediaCodec/av1-avif `testFiles`, or libavif's whole `tests/data`) against
    /// avifdec, one line per file and a count, for Docs/Decoding.md. Files avifdec itself cannot decode are listed
    /// apart (no reference).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["OD_AVIF_CONFORMANCE_DIR"] != nil, "a report, on request"),
          .requires(.libavif, .avifTools))
    func folderReport() throws {
        let root = URL(fileURLWithPath: ProcessInfo.processInfo.environment["OD_AVIF_CONFORMANCE_DIR"] ?? "")
        let files = (FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? [])
            .filter { $0.pathExtension.lowercased() == "avif" || $0.pathExtension.lowercased() == "avifs" }
            .sorted { $0.path < $1.path }
        var passed = 0, failed: [String] = [], unreferenced: [String] = []
        for file in files {
            let folder = try AVIFTools.scratch()
            defer { try? FileManager.default.removeItem(at: folder) }
            let name = file.path.replacingOccurrences(of: root.path + "/", with: "")
            guard let info = try? AVIFTools.info(file) else {
                let ours = (try? ImageCodersManager.shared.decode(try Data(contentsOf: file))).map { "decodes \($0.width)x\($0.height), \($0.frameCount) frames" }
                unreferenced.append("\(name): avifdec cannot decode it; ours: \(ours ?? "refused")")
                continue
            }
            var worst = (mean: 0.0, p999: 0), problem: String?
            guard let firstReference = try? AVIFTools.reference(file, frame: 0, info: info, in: folder) else {
                let ours = (try? ImageCodersManager.shared.decode(try Data(contentsOf: file))).map { "decodes \($0.width)x\($0.height), \($0.frameCount) frames" }
                unreferenced.append("\(name): avifdec parses it but cannot convert it to RGB; ours: \(ours ?? "refused")")
                continue
            }
            do {
                let image = try ImageCodersManager.shared.decode(try Data(contentsOf: file))
                if image.frameCount != info.frames { problem = "\(image.frameCount) frames, avifdec \(info.frames)" }
                for index in 0..<min(image.frameCount, info.frames) where problem == nil {
                    let pixels: [UInt8]
                    let reference: DecodedImage
                    do {
                        reference = index == 0 ? firstReference : try AVIFTools.reference(file, frame: index, info: info, in: folder)
                    } catch {
                        // avifdec refuses this frame (damaged AV1 data): so must we.
                        if (try? image.animation?.frame(at: index)) != nil { problem = "frame \(index) decodes, avifdec refuses it" }
                        continue
                    }
                    pixels = index == 0 ? image.pixels : try image.animation?.frame(at: index) ?? []
                    guard image.width == reference.width, image.height == reference.height else {
                        problem = "\(image.width)x\(image.height), avifdec \(reference.width)x\(reference.height)"
                        break
                    }
                    let d = AVIFTools.difference(pixels, reference.pixels)
                    worst = (max(worst.mean, d.mean), max(worst.p999, d.p999))
                }
            } catch {
                problem = "\(error)"
            }
            if problem == nil && (worst.mean > 1 || worst.p999 > 8) { problem = "outside the tolerance" }
            let line = String(format: "%@: %d frame(s), worst mean %.3f, p99.9 %d%@", name, info.frames, worst.mean, worst.p999,
                              problem.map { " — FAIL: \($0)" } ?? "")
            print(line)
            if problem == nil { passed += 1 } else { failed.append(line) }
        }
        print("AVIF conformance: \(passed) of \(files.count - unreferenced.count) files within tolerance; failed: \(failed.count)")
        for line in unreferenced { print("no reference: \(line)") }
    }

    /// Decodes `file` through `ImageCodersManager.shared` (sRGB) and expects every frame within the tolerance of
    /// avifdec's, with avifdec's frame count and durations (the browser rule applied). Returns the decode.
    @discardableResult
    static func expectMatchesAvifdec(_ file: URL, in folder: URL, sourceLocation: SourceLocation = #_sourceLocation) throws -> DecodedImage {
        let info = try AVIFTools.info(file)
        let image = try ImageCodersManager.shared.decode(try Data(contentsOf: file))
        let name = file.lastPathComponent
        #expect(image.format == .avif, sourceLocation: sourceLocation)
        #expect(image.orientation == .up, sourceLocation: sourceLocation)
        #expect(image.frameCount == info.frames, "\(name): frames", sourceLocation: sourceLocation)
        for index in 0..<min(image.frameCount, info.frames) {
            let reference = try AVIFTools.reference(file, frame: index, info: info, in: folder)
            let pixels = index == 0 ? image.pixels : try #require(image.animation).frame(at: index)
            #expect(image.width == reference.width && image.height == reference.height,
                    "\(name): \(image.width)x\(image.height), avifdec \(reference.width)x\(reference.height)", sourceLocation: sourceLocation)
            let difference = AVIFTools.difference(pixels, reference.pixels)
            #expect(difference.mean <= 1 && difference.p999 <= 8,
                    "\(name) frame \(index): mean \(difference.mean), 99.9th percentile \(difference.p999)", sourceLocation: sourceLocation)
            if info.frames > 1, let animation = image.animation, index < info.durations.count {
                let expected = info.durations[index] > 0.010 ? info.durations[index] : 0.1
                #expect(abs(animation.duration(at: index) - expected) < 1e-9, "\(name) frame \(index) duration", sourceLocation: sourceLocation)
            }
        }
        return image
    }
}

/// Tests/Support/DecoderFixtures/avif.
enum AVIFFixtures {
    static let directory = DecoderFixtures.directory.appendingPathComponent("avif")

    static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }
    static func data(_ name: String) throws -> Data { try Data(contentsOf: url(name)) }
}

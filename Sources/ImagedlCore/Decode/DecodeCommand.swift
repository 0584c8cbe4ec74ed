import Decoding
import Foundation
import OperationDownloader

/// `imagedl decode FILE...`: offline inspection, one line (or JSON object) per file, and a raw RGBA8 dump.
struct DecodeCommand {
    let options: DecodeOptions
    var coders: ImageCodersManager = .shared
    /// Receives each output line (stdout in the tool; a collector in tests).
    var emit: (String) -> Void
    /// Receives error lines that are not part of the per-file output (stderr in the tool).
    var emitError: (String) -> Void

    /// Decodes every file; returns `.failure` when any file could not be read, decoded or dumped.
    func run() -> ExitCode {
        var failed = false
        let files = expandedFiles()
        if files.isEmpty {
            emitError("imagedl: no files to decode")
            return .failure
        }
        let rgbaTargets: [String: URL]
        do {
            rgbaTargets = try rgbaDestinations(for: files)
        } catch {
            emitError("imagedl: \(error)")
            return .failure
        }
        for file in files {
            let decoding = ImageDecodingOptions(colorManagement: options.keepColorProfile ? .keepOriginal : .convertToSRGB)
            var report = Self.inspect(file: file, coders: coders, options: decoding) { image, data in
                guard let destination = rgbaTargets[file] else { return nil }
                // Half an image is not the image: as a download of the same bytes, unless --allow-incomplete.
                if !options.allowIncomplete, let truncated = ImageDownloaderError.forIncompleteImage(image, data: data) {
                    return ErrorMessages.describe(truncated)
                }
                let pixels: [UInt8]
                do {
                    pixels = try Self.pixels(of: image, frame: options.frame)
                } catch {
                    return "\(error)"
                }
                do {
                    try Data(pixels).write(to: destination)
                    return nil
                } catch {
                    return "cannot write RGBA to \(destination.path): \(error.localizedDescription)"
                }
            }
            if report.error == nil, rgbaTargets[file] == nil, options.rgbaOutput != nil {
                report.error = "no RGBA destination"
            }
            if !report.succeeded { failed = true }
            emit(options.json ? report.json.serialized() : report.line)
        }
        return failed ? .failure : .success
    }

    /// The bytes of `path`. An empty regular file is answered without `Data(contentsOf:)`: this toolchain's
    /// FoundationEssentials loses a 4 KB read buffer for each one (LeakSanitizer reports it, and `imagedl decode`
    /// over a folder may meet many). Anything else, pipes and /proc files included, is read as usual.
    static func readFile(_ path: String) throws -> Data {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        if attributes?[.type] as? FileAttributeType == .typeRegular, (attributes?[.size] as? NSNumber)?.intValue == 0 {
            return Data()
        }
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// Reads and decodes one file. `afterDecode` may do more with the image (and its bytes) and returns an error
    /// line or nil. Inspecting alone reports a truncated file as `incomplete`; writing its pixels fails.
    static func inspect(file: String, coders: ImageCodersManager, options: ImageDecodingOptions = ImageDecodingOptions(),
                        afterDecode: (DecodedImage, Data) -> String? = { _, _ in nil }) -> DecodeReport {
        var report = DecodeReport(file: file, format: .undefined)
        let data: Data
        do {
            data = try readFile(file)
        } catch {
            report.error = "cannot read file: \(Self.readFailureReason(file))"
            return report
        }
        report.format = ImageFormat(sniffing: data)
        if data.isEmpty {
            report.error = "empty file"
            return report
        }
        let start = DispatchTime.now().uptimeNanoseconds
        do {
            let image = try coders.decode(data, options: options)
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds &- start) / 1e9
            report.format = image.format
            report.width = image.width
            report.height = image.height
            report.frames = image.frameCount
            report.duration = image.animation?.totalDuration
            report.loopCount = image.loopCount
            report.orientation = image.orientation
            report.decodeSeconds = elapsed
            report.isIncomplete = image.isIncomplete
            report.color = DecodeReport.ColorReport(image)
            report.error = afterDecode(image, data)
        } catch let error as ImageDecodingError where error == .unsupportedFormat && report.format != .undefined {
            report.error = "no \(report.format.rawValue) decoder in this build (is its system library installed?)"
        } catch {
            // The words a download of the same bytes gets ("not an image: an HTML page", "truncated: ...").
            report.error = ErrorMessages.describeDecoding(error, data: data)
        }
        return report
    }

    /// The RGBA8 of frame `frame` (composited on demand; nil: the first frame). Throws
    /// `.frameIndexOutOfRange` past the last frame (a still image has one).
    static func pixels(of image: DecodedImage, frame: Int?) throws -> [UInt8] {
        guard let frame, frame != 0 else { return image.pixels }
        guard let animation = image.animation else {
            throw ImageDecodingError.frameIndexOutOfRange(index: frame, frameCount: 1)
        }
        return try animation.frame(at: frame)
    }

    private static func readFailureReason(_ file: String) -> String {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) { return "no such file" }
        return isDirectory.boolValue ? "is a folder" : "permission denied or unreadable"
    }

    /// The operands with folders replaced by every regular file inside them (recursively, sorted by path);
    /// hidden files inside folders are skipped.
    func expandedFiles() -> [String] {
        var files: [String] = []
        let fm = FileManager.default
        for path in options.paths {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                files.append(path)
                continue
            }
            let base = URL(fileURLWithPath: path)
            guard let walker = fm.enumerator(at: base, includingPropertiesForKeys: [.isRegularFileKey],
                                             options: [.skipsHiddenFiles]) else {
                files.append(path)
                continue
            }
            var found: [String] = []
            for case let url as URL in walker {
                guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
                let relative = url.path.hasPrefix(base.path + "/") ? String(url.path.dropFirst(base.path.count + 1)) : url.lastPathComponent
                found.append((path.hasSuffix("/") ? path : path + "/") + relative)
            }
            files.append(contentsOf: found.sorted())
        }
        return files
    }

    /// Where each file's RGBA goes: `--rgba OUT` is the file itself for one input, a folder (created) of
    /// `<name>.rgba` files for several.
    private func rgbaDestinations(for files: [String]) throws -> [String: URL] {
        guard let output = options.rgbaOutput else { return [:] }
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: output, isDirectory: &isDirectory)
        if files.count == 1 && !(exists && isDirectory.boolValue) {
            return [files[0]: URL(fileURLWithPath: output)]
        }
        let folder = URL(fileURLWithPath: output, isDirectory: true)
        if !exists {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } else if !isDirectory.boolValue {
            throw UsageError("--rgba \(output) must be a folder when decoding several files")
        }
        var result: [String: URL] = [:]
        var used: Set<String> = []
        for file in files {
            let name = OutputNaming.uniqueName(base: URL(fileURLWithPath: file).lastPathComponent, extension: "rgba", used: &used)
            result[file] = folder.appendingPathComponent(name)
        }
        return result
    }
}

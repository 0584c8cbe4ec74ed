import Foundation

/// Parses `imagedl thumbnail ...`. Its own options are handled here; every other option of the download
/// command (`--timeout`, `--header`, `--http-cache`, transport and retry flags, ...) is handed to the download
/// parser, so URL inputs are fetched exactly as `imagedl URL...` would fetch them.
enum ThumbnailArguments {
    private static let valueOptions: Set<String> = ["--size", "--format", "--quality", "--output", "--concurrency", "--input"]
    private static let flags: Set<String> = ["--fill", "--json", "--help", "-h"]
    /// Download options that make no sense for thumbnails.
    private static let rejected: Set<String> = ["--thumbnail", "--png", "--progressive", "--preview", "--lifo", "--demo"]

    static func parse(_ arguments: [String]) throws(UsageError) -> Command {
        var options = ThumbnailOptions()
        var sawSize = false, sawOutput = false
        var network: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                options.inputs.append(contentsOf: arguments[index...])
                break
            }
            guard argument.hasPrefix("-"), argument != "-" else {
                options.inputs.append(argument)
                continue
            }
            var name = argument, inline: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            if flags.contains(name) {
                guard inline == nil else { throw UsageError("\(name) takes no value") }
                switch name {
                case "--fill": options.fill = true
                case "--json": options.json = true
                default: return .help
                }
                continue
            }
            let takesValue = valueOptions.contains(name) || ArgumentParser.downloadValueOptions.contains(name)
            var value: String?
            if takesValue {
                if let inline {
                    value = inline
                } else {
                    guard index < arguments.count else { throw UsageError("\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
            }
            guard valueOptions.contains(name), let value else {
                guard !rejected.contains(name) else { throw UsageError("\(name) does not apply to thumbnail") }
                network.append(argument)
                if takesValue, inline == nil, let value { network.append(value) }
                continue
            }
            switch name {
            case "--size":
                options.size = try parseBox(value)
                sawSize = true
            case "--format":
                guard let format = ThumbnailOptions.Format(rawValue: value.lowercased() == "jpg" ? "jpeg" : value.lowercased()) else {
                    throw UsageError("--format needs jpeg, png, webp or avif, not '\(value)'")
                }
                options.format = format
            case "--quality":
                guard let q = Int(value), (1...100).contains(q) else {
                    throw UsageError("--quality needs a whole number from 1 to 100, not '\(value)'")
                }
                options.quality = q
            case "--output":
                guard !value.isEmpty else { throw UsageError("--output needs a folder") }
                options.outputDirectory = value
                sawOutput = true
            case "--concurrency":
                guard let n = Int(value), (1...64).contains(n) else {
                    throw UsageError("--concurrency needs a whole number from 1 to 64, not '\(value)'")
                }
                options.concurrency = n
            default:   // --input
                options.inputs.append(contentsOf: try readInputList(value))
            }
        }
        guard sawSize else { throw UsageError("thumbnail needs --size WxH") }
        guard sawOutput else { throw UsageError("thumbnail needs --output DIR") }
        guard !options.inputs.isEmpty else { throw UsageError("thumbnail needs at least one FILE or URL") }
        options.network = try networkOptions(network)
        return .thumbnail(options)
    }

    /// "WxH" or "N" (a square), each side 1...16383.
    static func parseBox(_ text: String) throws(UsageError) -> PixelSize {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        let sides = parts.map { Int($0) }
        let w = sides.first ?? nil, h = sides.count == 2 ? sides[1] : (sides.count == 1 ? w : nil)
        guard let w, let h, (1...16_383).contains(w), (1...16_383).contains(h) else {
            throw UsageError("--size needs WxH in pixels (1-16383), like 256x256, not '\(text)'")
        }
        return PixelSize(width: w, height: h)
    }

    /// The download options the remaining arguments describe (validated by the download parser).
    private static func networkOptions(_ arguments: [String]) throws(UsageError) -> DownloadOptions {
        guard case .download(var options) = try ArgumentParser.parse(arguments + ["--", "http://127.0.0.1/"]) else {
            throw UsageError("thumbnail: unexpected option among \(arguments.joined(separator: " "))")
        }
        options.urls = []
        return options
    }

    /// `--input FILE`: one file or URL a line (`-` reads standard input); blank lines and `#` comments skipped.
    private static func readInputList(_ path: String) throws(UsageError) -> [String] {
        let text: String
        if path == "-" {
            text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        } else {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw UsageError("--input: cannot read '\(path)'")
            }
            text = String(decoding: data, as: UTF8.self)
        }
        return text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }
}

import Foundation

/// Turns `imagedl`'s arguments into a `Command`, without third-party packages.
///
/// Accepted forms: `--name value`, `--name=value`, flags without values, `-h`, and `--` to end options
/// (everything after it is a URL or file). Options may come before or after the operands.
public enum ArgumentParser {
    /// Parses `arguments` (without the program name); `environment` may name the shared cache (`OD_REDIS_URL`).
    public static func parse(_ arguments: [String],
                             environment: [String: String] = ProcessInfo.processInfo.environment) throws(UsageError) -> Command {
        guard let first = arguments.first else {
            throw UsageError("no URLs given (try 'imagedl --demo', or 'imagedl --help')")
        }
        if first == "decode" {
            return try parseDecode(Array(arguments.dropFirst()))
        }
        if first == "thumbnail" {
            return try ThumbnailArguments.parse(Array(arguments.dropFirst()))
        }
        return try parseDownload(arguments, environment: environment)
    }

    // MARK: - download and --demo

    /// Download options that take a value (`imagedl thumbnail` passes these through for its URL inputs).
    static let downloadValueOptions: Set<String> = [
        "--concurrency", "--output", "--thumbnail", "--timeout", "--max-time", "--header", "--user", "--password",
        "--http-cache", "--http-cache-url-file", "--http-cache-size", "--retry", "--input", "--transport", "--cacert",
        "--proxy", "--metrics",
    ]
    private static let downloadFlags: Set<String> = [
        "--lifo", "--progressive", "--png", "--json", "--preview", "--demo", "--help", "-h", "--version",
        "--insecure", "--allow-incomplete", "--verbose",
    ]

    private static func parseDownload(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
        var options = DownloadOptions()
        var demo = false
        var operands: [String] = []
        var reader = Reader(arguments, valueOptions: downloadValueOptions, flags: downloadFlags)
        while let token = try reader.next() {
            switch token {
            case .operand(let text):
                operands.append(text)
            case .flag(let name):
                switch name {
                case "--help", "-h": return .help
                case "--version": return .version
                case "--demo": demo = true
                case "--lifo": options.lifo = true
                case "--progressive": options.progressive = true
                case "--png": options.writePNG = true
                case "--json": options.json = true
                case "--preview": options.preview = true
                case "--insecure": options.insecure = true
                case "--allow-incomplete": options.allowIncomplete = true
                case "--verbose": options.verbose = true
                default: throw UsageError("unknown option '\(name)'")
                }
            case .option(let name, let value):
                switch name {
                case "--concurrency":
                    guard let n = Int(value), (1...64).contains(n) else {
                        throw UsageError("--concurrency needs a whole number from 1 to 64, not '\(value)'")
                    }
                    options.concurrency = n
                case "--output":
                    guard !value.isEmpty else { throw UsageError("--output needs a folder") }
                    options.outputDirectory = value
                case "--thumbnail":
                    options.thumbnail = try parsePixelSize(value)
                case "--timeout":
                    guard let seconds = Double(value), seconds.isFinite, seconds > 0, seconds <= 86_400 else {
                        throw UsageError("--timeout needs a number of seconds above 0, not '\(value)'")
                    }
                    options.timeout = seconds
                case "--max-time":
                    guard let seconds = Double(value), seconds.isFinite, seconds > 0, seconds <= 7 * 86_400 else {
                        throw UsageError("--max-time needs a number of seconds above 0, not '\(value)'")
                    }
                    options.maxTime = seconds
                case "--header":
                    options.headers.append(try parseHeader(value))
                case "--user":
                    options.user = value
                case "--password":
                    options.password = value
                case "--http-cache":
                    try HTTPCacheOption.parse(value, into: &options)
                case "--http-cache-url-file":
                    try HTTPCacheOption.parseURLFile(value, into: &options)
                case "--http-cache-size":
                    options.httpCacheSize = try HTTPCacheOption.parseSize(value)
                case "--retry":
                    guard let n = Int(value), (0...100).contains(n) else {
                        throw UsageError("--retry needs a whole number of retries from 0 to 100, not '\(value)'")
                    }
                    options.retry = n
                case "--input":
                    guard !value.isEmpty else { throw UsageError("--input needs a file of URLs, or - for stdin") }
                    options.inputFile = value
                case "--transport": options.transport = try TransportOptions.parseTransport(value)
                case "--cacert": options.caFile = try TransportOptions.parseCACert(value)
                case "--proxy": options.proxy = try TransportOptions.parseProxy(value)
                case "--metrics":
                    guard !value.isEmpty else { throw UsageError("--metrics needs a file, or - for stderr") }
                    options.metricsFile = value
                default:
                    throw UsageError("unknown option '\(name)'")
                }
            }
        }
        try HTTPCacheOption.applyEnvironment(environment, to: &options)
        if options.writePNG && options.outputDirectory == nil {
            throw UsageError("--png needs --output DIR")
        }
        try TransportOptions.validate(options)
        if options.httpCacheSize != nil && options.httpCacheDirectory == nil {
            throw UsageError("--http-cache-size needs --http-cache DIR")
        }
        if (options.user == nil) != (options.password == nil) {
            throw UsageError(options.user == nil ? "--password needs --user" : "--user needs --password")
        }
        if demo {
            guard operands.isEmpty else { throw UsageError("--demo takes no URLs (it serves its own samples)") }
            guard options.inputFile == nil else { throw UsageError("--demo takes no --input (it serves its own samples)") }
            return .demo(options)
        }
        guard !operands.isEmpty || options.inputFile != nil else {
            throw UsageError("no URLs given (try 'imagedl --demo', or 'imagedl --help')")
        }
        options.urls = try operands.map { (text: String) throws(UsageError) -> URL in try parseURL(text) }
        return .download(options)
    }

    /// An absolute http or https URL with a host.
    static func parseURL(_ text: String) throws(UsageError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else {
            throw UsageError("'\(text)' is not an http:// or https:// URL")
        }
        return url
    }

    /// "WxH" with both sides from 1 to 65535 ("x" or "X").
    static func parsePixelSize(_ text: String) throws(UsageError) -> PixelSize {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]),
              (1...65_535).contains(w), (1...65_535).contains(h) else {
            throw UsageError("--thumbnail needs WxH in pixels, like 320x240, not '\(text)'")
        }
        return PixelSize(width: w, height: h)
    }

    /// "Name: value": a token name (no spaces or separators) and a value without line breaks.
    static func parseHeader(_ text: String) throws(UsageError) -> HTTPHeader {
        guard let colon = text.firstIndex(of: ":") else {
            throw UsageError("--header needs 'Name: value', not '\(text)'")
        }
        let name = text[..<colon].trimmingCharacters(in: .whitespaces)
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        let separators = CharacterSet(charactersIn: "()<>@,;:\\\"/[]?={} \t")
        guard !name.isEmpty, name.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 32 && $0.value < 127 }),
              name.rangeOfCharacter(from: separators) == nil else {
            throw UsageError("--header has an invalid name in '\(text)'")
        }
        guard value.rangeOfCharacter(from: .newlines) == nil else {
            throw UsageError("--header value must be on one line")
        }
        return HTTPHeader(name: name, value: value)
    }

    // MARK: - decode

    private static func parseDecode(_ arguments: [String]) throws(UsageError) -> Command {
        var options = DecodeOptions()
        var reader = Reader(
            arguments, valueOptions: ["--rgba", "--frame"],
            flags: ["--json", "--keep-color-profile", "--allow-incomplete", "--help", "-h"])
        while let token = try reader.next() {
            switch token {
            case .operand(let path):
                options.paths.append(path)
            case .flag(let name):
                switch name {
                case "--json": options.json = true
                case "--keep-color-profile": options.keepColorProfile = true
                case "--allow-incomplete": options.allowIncomplete = true
                default: return .help
                }
            case .option("--frame", let value):
                guard let index = Int(value), index >= 0 else { throw UsageError("--frame needs a frame number (0 or more)") }
                options.frame = index
            case .option(_, let value):
                guard !value.isEmpty else { throw UsageError("--rgba needs a file or folder") }
                options.rgbaOutput = value
            }
        }
        guard !options.paths.isEmpty else { throw UsageError("decode needs at least one FILE") }
        if options.frame != nil && options.rgbaOutput == nil { throw UsageError("--frame needs --rgba OUT") }
        return .decode(options)
    }
}

/// Splits arguments into flags, options with values and operands.
private struct Reader {
    enum Token {
        case flag(String)
        case option(String, String)
        case operand(String)
    }

    private let arguments: [String]
    private let valueOptions: Set<String>
    private let flags: Set<String>
    private var index = 0
    private var onlyOperands = false

    init(_ arguments: [String], valueOptions: Set<String>, flags: Set<String>) {
        self.arguments = arguments
        self.valueOptions = valueOptions
        self.flags = flags
    }

    mutating func next() throws(UsageError) -> Token? {
        guard index < arguments.count else { return nil }
        let argument = arguments[index]
        index += 1
        if onlyOperands || !argument.hasPrefix("-") || argument == "-" {
            return .operand(argument)
        }
        if argument == "--" {
            onlyOperands = true
            return try next()
        }
        var name = argument
        var inlineValue: String?
        if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
            name = String(argument[..<equals])
            inlineValue = String(argument[argument.index(after: equals)...])
        }
        if valueOptions.contains(name) {
            if let inlineValue { return .option(name, inlineValue) }
            guard index < arguments.count else { throw UsageError("\(name) needs a value") }
            let value = arguments[index]
            index += 1
            return .option(name, value)
        }
        if flags.contains(name) {
            guard inlineValue == nil else { throw UsageError("\(name) takes no value") }
            return .flag(name)
        }
        throw UsageError("unknown option '\(name)'")
    }
}

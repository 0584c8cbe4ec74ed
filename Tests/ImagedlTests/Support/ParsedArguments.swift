import Testing
@testable import ImagedlCore

/// What the argument-parser suites ask of `ArgumentParser` (with an empty environment: no `OD_REDIS_URL`): the download options a command line gives, or the
/// usage error it is refused with.
enum ParsedArguments {
    /// The options of a download command; records an issue (and returns the defaults) for any other command.
    static func download(_ args: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> DownloadOptions {
        guard case .download(let options) = try ArgumentParser.parse(args, environment: [:]) else {
            Issue.record("expected a download command for \(args)", sourceLocation: sourceLocation)
            return DownloadOptions()
        }
        return options
    }

    /// The usage error's message, or nil when `args` parse.
    static func usageError(_ args: [String]) -> String? {
        do {
            _ = try ArgumentParser.parse(args, environment: [:])
            return nil
        } catch {
            return error.message
        }
    }
}

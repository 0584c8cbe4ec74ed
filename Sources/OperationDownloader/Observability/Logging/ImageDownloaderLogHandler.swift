import Foundation

/// Severity of a log message (swift-log's `Logger.Level`, same names and raw values).
public enum ImageDownloaderLogLevel: String, Sendable, CaseIterable, Comparable {
    case trace, debug, info, notice, warning, error, critical

    private var rank: Int {
        switch self {
        case .trace: 0
        case .debug: 1
        case .info: 2
        case .notice: 3
        case .warning: 4
        case .error: 5
        case .critical: 6
        }
    }

    public static func < (a: ImageDownloaderLogLevel, b: ImageDownloaderLogLevel) -> Bool { a.rank < b.rank }
}

/// The one place the package's log messages go (set it on `ImageDownloaderConfiguration.logHandler` and, for
/// the HTTP cache's own messages, `HTTPImageCache.logHandler`): Redis outages and recoveries, its breaker,
/// cache write failures, decode budget refusals and waits, retries, invalid trace context. Docs/Observability.md
/// lists each message with its level and metadata.
///
/// Shaped like swift-log's `LogHandler.log(level:message:metadata:source:file:function:line:)`, so an adapter
/// forwards to a `Logger` in a few lines. Messages below `logLevel` are not even built.
public protocol ImageDownloaderLogHandler: Sendable {
    /// The lowest level this handler wants.
    var logLevel: ImageDownloaderLogLevel { get }
    /// `metadata`: bounded facts about the event (`redis.endpoint`, `error`, `url` ...); `source` is
    /// `"OperationDownloader"`; `file`, `function`, `line` are where the package logged it.
    func log(
        level: ImageDownloaderLogLevel, message: String, metadata: [String: String], source: String, file: String,
        function: String, line: UInt)
}

/// The package's side of the log hook: one value that checks the level before the message is built, and where
/// no handler is set, keeps today's behaviour (warnings to the cache's `warningHandler` or standard error).
struct PackageLogger: Sendable {
    let handler: (any ImageDownloaderLogHandler)?
    /// Where warnings go without a handler (the HTTP cache's `warningHandler`); nil: standard error.
    var fallback: (@Sendable (String) -> Void)?

    static let source = "OperationDownloader"

    /// Whether a message at `level` goes anywhere: a handler that wants it, or a warning for the fallback.
    func wants(_ level: ImageDownloaderLogLevel) -> Bool {
        if let handler { return level >= handler.logLevel }
        return level >= .warning
    }

    func log(
        _ level: ImageDownloaderLogLevel, _ message: @autoclosure () -> String, metadata: @autoclosure () -> [String: String] = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        guard wants(level) else { return }
        if let handler {
            handler.log(level: level, message: message(), metadata: metadata(), source: Self.source, file: file,
                        function: function, line: line)
        } else if let fallback {
            fallback(message())
        } else {
            FileHandle.standardError.write(Data((message() + "\n").utf8))
        }
    }
}

import Foundation
import Testing
@testable import OperationDownloader

/// A log handler that keeps every message, and lets a test await one (no polling).
final class RecordingLogHandler: ImageDownloaderLogHandler {
    struct Entry: Sendable {
        let level: ImageDownloaderLogLevel
        let message: String
        let metadata: [String: String]
        let source: String
    }

    let logLevel: ImageDownloaderLogLevel
    let entries = Watched<[Entry]>([])

    init(logLevel: ImageDownloaderLogLevel = .trace) {
        self.logLevel = logLevel
    }

    func log(
        level: ImageDownloaderLogLevel, message: String, metadata: [String: String], source: String, file: String,
        function: String, line: UInt
    ) {
        entries.withLock { $0.append(Entry(level: level, message: message, metadata: metadata, source: source)) }
    }

    var all: [Entry] { entries.current }

    /// Waits (bounded against hangs) until `count` messages containing `text` were logged.
    @discardableResult
    func wait(for text: String, count: Int = 1) async -> Bool {
        await entries.wait(describe: { $0.map(\.message).joined(separator: "\n") }) { entries in
            entries.filter { $0.message.contains(text) }.count >= count
        }
    }
}

/// A tracer that records every span (its name, kind, parent, links, attributes, status, whether it ended) and
/// gives each a context of its own under its parent's trace (a fresh trace without a parent).
final class RecordingTracer: ImageDownloaderTracer {
    final class Span: ImageDownloaderSpan, @unchecked Sendable {  // `lock` guards every var
        let name: String
        let kind: ImageDownloaderSpanKind
        let parent: ImageDownloaderTraceContext?
        let context: ImageDownloaderTraceContext?
        private let lock = NSLock()
        private var _links: [ImageDownloaderTraceContext]
        private var _attributes: [String: ImageDownloaderSpanAttribute] = [:]
        private var _status: ImageDownloaderSpanStatus?
        private var _errors: [String] = []
        private var _ended = 0

        init(name: String, kind: ImageDownloaderSpanKind, parent: ImageDownloaderTraceContext?, links: [ImageDownloaderTraceContext]) {
            self.name = name
            self.kind = kind
            self.parent = parent
            self._links = links
            let trace = parent?.traceID ?? String(repeating: "ab", count: 16)
            context = ImageDownloaderTraceContext(traceID: trace, spanID: ImageDownloaderTraceContext.randomSpanID(), flags: parent?.flags ?? 1)
        }

        func setAttribute(_ value: ImageDownloaderSpanAttribute, forKey key: String) { lock.withLock { _attributes[key] = value } }
        func addLink(_ context: ImageDownloaderTraceContext) { lock.withLock { _links.append(context) } }
        func recordError(_ error: any Error) { lock.withLock { _errors.append(String(describing: error)) } }
        func setStatus(_ status: ImageDownloaderSpanStatus) { lock.withLock { _status = status } }
        func end() { lock.withLock { _ended += 1 } }

        var links: [ImageDownloaderTraceContext] { lock.withLock { _links } }
        var attributes: [String: ImageDownloaderSpanAttribute] { lock.withLock { _attributes } }
        var status: ImageDownloaderSpanStatus? { lock.withLock { _status } }
        var endCount: Int { lock.withLock { _ended } }
    }

    let spans = Watched<[Span]>([])

    func startSpan(
        _ operationName: String, parent: ImageDownloaderTraceContext?, ofKind kind: ImageDownloaderSpanKind,
        links: [ImageDownloaderTraceContext]
    ) -> any ImageDownloaderSpan {
        let span = Span(name: operationName, kind: kind, parent: parent, links: links)
        spans.withLock { $0.append(span) }
        return span
    }

    var all: [Span] { spans.current }
}

import Foundation

/// Starts spans for the package (set one on `ImageDownloaderConfiguration.tracer`): one per download operation
/// (`image.download`), one per HTTP request it sends (named by the method, kind `.client`, with OpenTelemetry's
/// HTTP client attributes), one per final decode (`image.decode`). Docs/Observability.md lists the attributes.
///
/// Shaped like swift-distributed-tracing's `Tracer.startSpan(_:context:ofKind:)` and `Span`, so an adapter over
/// `InstrumentationSystem.tracer` is a few lines: it extracts the parent from `parent.traceParent` with the
/// tracer's W3C propagator and reads the new span's back the same way (Docs/Observability.md has one).
public protocol ImageDownloaderTracer: Sendable {
    /// A started span. `parent`: the caller's trace (`ImageDownloaderContext.traceParent`) for a download, the
    /// download's span for a request or decode; nil starts a trace. `links`: other traces the span serves
    /// (the callers that joined a download already in flight).
    func startSpan(
        _ operationName: String, parent: ImageDownloaderTraceContext?, ofKind kind: ImageDownloaderSpanKind,
        links: [ImageDownloaderTraceContext]
    ) -> any ImageDownloaderSpan
}

/// A span in progress. Every method may be called from any thread; nothing is called after `end()`.
public protocol ImageDownloaderSpan: AnyObject, Sendable {
    /// The span's own context (its trace id and span id): a request's is sent as its `traceparent`. nil when the
    /// tracer does not propagate (a request then carries the caller's trace with a random span id).
    var context: ImageDownloaderTraceContext? { get }
    func setAttribute(_ value: ImageDownloaderSpanAttribute, forKey key: String)
    /// Another trace this span serves (a caller that joined the download later).
    func addLink(_ context: ImageDownloaderTraceContext)
    func recordError(_ error: any Error)
    func setStatus(_ status: ImageDownloaderSpanStatus)
    func end()
}

/// OpenTelemetry's span kinds.
public enum ImageDownloaderSpanKind: Sendable {
    case server, client, producer, consumer, `internal`
}

/// A span's status (OpenTelemetry: unset unless an error ended it).
public enum ImageDownloaderSpanStatus: Sendable, Equatable {
    case ok
    case error(description: String)
}

/// An attribute value (OpenTelemetry's scalar types).
public enum ImageDownloaderSpanAttribute: Sendable, Equatable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
}

// The examples of Docs/Observability.md (see AsyncExamples.swift for how the doc quotes them).
import Foundation
import OperationDownloader
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// snippet: observability-sink
/// A downloader that reports to `metrics` (requests, downloads, the HTTP cache, retries, decodes, the queue) and
/// sends its log messages to `log`. The same `PrometheusMetrics` may serve several downloaders.
public func makeObservedDownloader(metrics: PrometheusMetrics, log: (any ImageDownloaderLogHandler)? = nil) -> ImageDownloader {
    var configuration = ImageDownloaderConfiguration()
    configuration.metricsSink = metrics
    configuration.logHandler = log
    return ImageDownloader(configuration: configuration)
}
// end snippet

// snippet: observability-handler
/// The `/metrics` handler: plug it into the HTTP server the program already has (a route of Vapor, Hummingbird,
/// SwiftNIO...), or into `MetricsEndpoint` below.
public func metricsResponse(method: String, path: String, metrics: PrometheusMetrics) -> (status: Int, contentType: String, body: String) {
    guard method == "GET", path == "/metrics" else { return (404, "text/plain", "not found\n") }
    return (200, "text/plain; version=0.0.4; charset=utf-8", metrics.exposition())
}

/// A program with no HTTP server: a one-connection-at-a-time endpoint on a loopback port of its own, enough
/// for Prometheus to scrape every few seconds.
public final class MetricsEndpoint: Sendable {
    public let port: Int
    private let listener: Int32

    /// Listens on 127.0.0.1:`port` (0: a free port, then in `port`) and answers on a thread of its own.
    public init(metrics: PrometheusMetrics, port: Int = 0) throws {
        #if canImport(Glibc)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let listener = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard listener >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 16) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else {
            close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        self.listener = listener
        Thread.detachNewThread { [listener] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }  // closed by `stop()`
                Self.answer(client, metrics: metrics)
            }
        }
    }

    /// Stops listening (the thread ends).
    public func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Reads the request head (at most 8 KiB), answers it, closes the connection.
    private static func answer(_ client: Int32, metrics: PrometheusMetrics) {
        defer { close(client) }
        var head = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 1024)
        while head.count < 8192, !head.ends(with: Array("\r\n\r\n".utf8)) {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return }
            head += buffer[0..<count]
        }
        let words = String(decoding: head, as: UTF8.self).split(separator: " ", maxSplits: 2)
        guard words.count >= 2 else { return }
        let (status, type, body) = metricsResponse(method: String(words[0]), path: String(words[1]), metrics: metrics)
        let bytes = Array(body.utf8)
        let response = "HTTP/1.1 \(status) \(status == 200 ? "OK" : "Not Found")\r\nContent-Type: \(type)\r\n"
            + "Content-Length: \(bytes.count)\r\nConnection: close\r\n\r\n"
        for part in [Array(response.utf8), bytes] {
            var offset = 0
            while offset < part.count {
                let written = part[offset...].withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
// end snippet

// snippet: observability-trace
/// A request handler's download under the trace of the request it serves: every request the download sends
/// carries `traceparent` with the same trace id and a span id of its own.
public func thumbnail(of url: URL, tracedBy traceParent: String?, traceState: String?, with downloader: ImageDownloader) async throws -> ImageDownloadResult {
    var context = ImageDownloaderContext.thumbnail(maxPixelSize: 256)
    context.traceParent = traceParent
    context.traceState = traceState
    return try await downloader.image(for: url, context: context)
}
// end snippet

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}

import Foundation

extension ImageDownloadMetrics.Source: CustomStringConvertible {
    /// "network", "HTTP cache", or "HTTP cache, revalidated (304)".
    public var description: String {
        switch self {
        case .network: return "network"
        case .httpCache: return "HTTP cache"
        case .revalidatedHTTPCache: return "HTTP cache, revalidated (304)"
        case .memoryCache: return "memory cache"
        }
    }
}

extension ImageDownloadMetrics: CustomStringConvertible {
    /// One line for logs, naming only what was measured, e.g.
    /// "network, status 200, HTTP/1.1, 30512 bytes in 12.4 ms (queued 0.2 ms, response after 3.1 ms),
    /// 127.0.0.1, new connection (connect 0.2 ms)", or "network, status 503, 0 bytes in 1.31 s, 3 attempts".
    public var description: String {
        var parts = [servedStale ? "\(source) (stale)" : source.description]
        if let statusCode { parts.append("status \(statusCode)") }
        if let httpVersion { parts.append("HTTP/\(httpVersion)") }
        var size = expectedBytes >= 0 && expectedBytes != receivedBytes
            ? "\(receivedBytes) of \(expectedBytes) bytes" : "\(receivedBytes) bytes"
        if let total = totalDuration {
            size += " in \(Self.format(total))"
            var phases: [String] = []
            if let queued = queueDuration { phases.append("queued \(Self.format(queued))") }
            if let response = timeToResponse { phases.append("response after \(Self.format(response))") }
            if !phases.isEmpty { size += " (\(phases.joined(separator: ", ")))" }
        }
        parts.append(size)
        if let resumedFromByte { parts.append("resumed at byte \(resumedFromByte)") }
        if attemptCount > 1 { parts.append("\(attemptCount) attempts") }
        if redirectCount > 0 { parts.append(redirectCount == 1 ? "1 redirect" : "\(redirectCount) redirects") }
        if let remoteAddress { parts.append(remoteAddress) }
        if let connectionReused {
            var connection = connectionReused ? "reused connection" : "new connection"
            let steps = [("DNS", domainLookupDuration), ("connect", connectDuration), ("TLS", secureConnectionDuration)]
                .compactMap { name, duration in duration.map { "\(name) \(Self.format($0))" } }
            if !connectionReused && !steps.isEmpty { connection += " (\(steps.joined(separator: ", ")))" }
            parts.append(connection)
        }
        return parts.joined(separator: ", ")
    }

    /// Milliseconds below a second ("12.4 ms"), seconds above ("1.31 s").
    static func format(_ seconds: TimeInterval) -> String {
        seconds < 1 ? String(format: "%.1f ms", seconds * 1000) : String(format: "%.2f s", seconds)
    }
}

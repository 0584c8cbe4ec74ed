import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The requests of a download, one at a time (a "hop": the first request of an attempt, each redirect's, a
/// refetch's): each is stamped with its own `traceparent` under the caller's trace, counted in
/// `http_client_active_requests` while it runs, observed once in `http_client_request_duration_seconds` when it
/// ends, and (with a tracer) has its own client span.
extension DownloadObservation {
    struct Hop {
        let began: UInt64
        /// Its method, host and port (and the host's `server_address`, `_other` past the downloader's limit), with
        /// their gauge and histograms; nil without a metrics sink. (Its span is in `State.spans`, its status in
        /// `hopStatus`.)
        let endpoint: RequestEndpoint?
    }

    /// A request is about to be sent (the first of an attempt: the download's first, a retry's, a refetch's):
    /// the request to send, with its `traceparent` when the download has a trace. A request still open ends
    /// first, with the status it got. `url`: the request's, read once by the caller.
    func requestBegins(_ request: URLRequest, url: URL?) -> URLRequest {
        begin(request, url: url)
    }

    /// A redirect with `status` is followed: that request ends, and `request` (the redirect's) begins.
    func redirected(status: Int, to request: URLRequest) -> URLRequest {
        hopStatus.store(status, ordering: .relaxed)
        return begin(request, url: request.url)
    }

    /// The server's response to the request in flight (an authentication retry's replaces the 401's).
    func responseReceived(status: Int?) {
        guard let status else { return }
        hopStatus.store(status, ordering: .relaxed)
    }

    /// The request in flight ended (completed, failed, timed out, rejected, cancelled): observed once; later
    /// calls do nothing until the next request begins. Without `error`, a status of 400 or more is the error
    /// type (OpenTelemetry's rule).
    func requestEnded(error: (any Error)?, httpVersion: String?) {
        let (taken, status, span) = state.withLock { state -> (Hop?, Int, (any ImageDownloaderSpan)?) in
            (state.hop.take(), hopStatus.exchange(0, ordering: .relaxed), state.spans?.request.take())
        }
        guard let hop = taken else { return }
        report(hop, status: status, span, error: error, httpVersion: httpVersion, now: Monotonic.now())
    }

    /// Observes the end of `hop`, which got `status` (0: none), at `now` (`Monotonic`).
    func report(_ hop: Hop, status: Int, _ span: (any ImageDownloaderSpan)?, error: (any Error)?, httpVersion: String?, now: UInt64) {
        let seconds = now > hop.began ? Double(now - hop.began) / 1e9 : 0
        var errorType = error.flatMap(MetricLabels.requestErrorType) ?? ""
        if errorType.isEmpty, status >= 400 { errorType = String(status) }
        let version = MetricLabels.protocolVersion(httpVersion) ?? ""
        if let endpoint = hop.endpoint {
            endpoint.active.decrement(by: 1)
            let outcome = RequestOutcome(status: status, errorType: errorType, protocolVersion: version)
            endpoint.timer(outcome).record(seconds: seconds)
        }
        guard let span else { return }
        if status > 0 { span.setAttribute(.int(Int64(status)), forKey: "http.response.status_code") }
        if !version.isEmpty { span.setAttribute(.string(version), forKey: "network.protocol.version") }
        if !errorType.isEmpty {
            span.setAttribute(.string(errorType), forKey: "error.type")
            span.setStatus(.error(description: error.map { String(describing: $0) } ?? "HTTP \(errorType)"))
            if let error, MetricLabels.requestErrorType(error) != nil { span.recordError(error) }
        }
        span.end()
    }

    /// The request still open (if any) ends, and `request` begins: one entry into the state without a tracer.
    /// With one, the open request's span ends before the new one starts, as spans nest.
    private func begin(_ request: URLRequest, url: URL?) -> URLRequest {
        let tracer = telemetry?.tracer
        if tracer != nil { requestEnded(error: nil, httpVersion: nil) }
        let endpoint = telemetry?.metrics?.endpoints.endpoint(for: request, url: url)
        endpoint?.active.increment(by: 1)
        var span: (any ImageDownloaderSpan)?
        var downloadSpan: (any ImageDownloaderSpan)?
        if let tracer {
            let target = RequestTarget(request, url: url)
            let index: Int
            (downloadSpan, index) = state.withLock { ($0.spans?.download, $0.requestsBegun) }
            let made = tracer.startSpan(target.method, parent: downloadSpan?.context ?? trace, ofKind: .client, links: [])
            made.setAttribute(.string(target.method), forKey: "http.request.method")
            made.setAttribute(.string(target.host), forKey: "server.address")
            made.setAttribute(.int(Int64(target.port)), forKey: "server.port")
            if let url { made.setAttribute(.string(url.absoluteString), forKey: "url.full") }
            if index > 0 { made.setAttribute(.int(Int64(index)), forKey: "http.request.resend_count") }
            span = made
        }
        let now = Monotonic.now()
        let hop = Hop(began: now, endpoint: endpoint)
        let (open, openStatus) = state.withLock { state -> (Hop?, Int) in
            let open = state.hop.take()
            state.hop = hop
            state.requestsBegun += 1
            if let span { state.spans?.request = span }
            return (open, hopStatus.exchange(0, ordering: .relaxed))
        }
        // Without a tracer the open request (with no span) ends here, after the swap.
        if let open { report(open, status: openStatus, nil, error: nil, httpVersion: nil, now: now) }
        // The request's own span id, under the caller's trace (or the tracer's, when it propagates).
        guard let context = span?.context ?? (downloadSpan?.context ?? trace)?.withNewSpanID() else { return request }
        var stamped = request
        stamped.setValue(context.traceParent, forHTTPHeaderField: "traceparent")
        stamped.setValue(context.traceState, forHTTPHeaderField: "tracestate")
        return stamped
    }
}

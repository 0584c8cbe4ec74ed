import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The requests of a download, one at a time (a "hop": the first request of an attempt, each redirect's, a
/// refetch's): each is stamped with its own `traceparent` under the caller's trace, counted in
/// `http_client_active_requests` while it runs, observed once in `http_client_request_duration_seconds` when it
/// ends, and (with a tracer) has its own client span.
extension DownloadObservation {
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
        let span = spans?.withLock { $0.request.take() }
        endHop(span, error: error, httpVersion: httpVersion, now: Monotonic.now())
    }

    /// Takes the request in flight out of the atomics (nothing when another end took it first) and observes its
    /// end at `now` (`Monotonic`) with `span`, its span (taken by the caller from `spans`).
    func endHop(_ span: (any ImageDownloaderSpan)?, error: (any Error)?, httpVersion: String?, now: UInt64) {
        let open = swapHop(endpoint: 0, began: nil)
        guard open.endpoint != 0 || span != nil else { return }
        report(endpoint: open.endpoint, began: open.began, status: open.status, span, error: error, httpVersion: httpVersion, now: now)
    }

    /// Puts a request in flight (`endpoint` 0: none) and returns the one it replaces, whose status is taken with it.
    /// An end (`began` nil) leaves the start time alone: a begin racing it then still reads its own open request's.
    private func swapHop(endpoint: UInt, began: UInt64?) -> (endpoint: UInt, began: UInt64, status: Int) {
        let open = hopEndpoint.exchange(endpoint, ordering: .acquiringAndReleasing)
        let openBegan = began.map { hopBegan.exchange($0, ordering: .relaxed) } ?? hopBegan.load(ordering: .relaxed)
        return (open, openBegan, hopStatus.exchange(0, ordering: .relaxed))
    }

    /// Observes the end of a request to `endpoint` (an unretained `RequestEndpoint`, 0: none) that began at `began`
    /// and got `status` (0: none).
    private func report(
        endpoint address: UInt, began: UInt64, status: Int, _ span: (any ImageDownloaderSpan)?, error: (any Error)?,
        httpVersion: String?, now: UInt64
    ) {
        var errorType = error.flatMap(MetricLabels.requestErrorType) ?? ""
        if errorType.isEmpty, status >= 400 { errorType = String(status) }
        let version = MetricLabels.protocolVersion(httpVersion) ?? ""
        if let pointer = UnsafeRawPointer(bitPattern: address) {
            let endpoint = Unmanaged<RequestEndpoint>.fromOpaque(pointer).takeUnretainedValue()
            endpoint.active.decrement(by: 1)
            let outcome = RequestOutcome(status: status, errorType: errorType, protocolVersion: version)
            endpoint.timer(outcome).record(seconds: Monotonic.seconds(from: began, to: now))
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

    /// The request still open (if any) ends, and `request` begins. With a tracer the open request's span ends
    /// before the new one starts, as spans nest.
    private func begin(_ request: URLRequest, url: URL?) -> URLRequest {
        if spans != nil { requestEnded(error: nil, httpVersion: nil) }
        let endpoint = metrics?.endpoints.endpoint(for: request, url: url)
        endpoint?.active.increment(by: 1)
        var span: (any ImageDownloaderSpan)?
        var downloadSpan: (any ImageDownloaderSpan)?
        if let tracer, let spans {
            let target = RequestTarget(request, url: url)
            let index: Int
            (downloadSpan, index) = spans.withLock { ($0.download, $0.requestsBegun) }
            let made = tracer.startSpan(target.method, parent: downloadSpan?.context ?? trace, ofKind: .client, links: [])
            made.setAttribute(.string(target.method), forKey: "http.request.method")
            made.setAttribute(.string(target.host), forKey: "server.address")
            made.setAttribute(.int(Int64(target.port)), forKey: "server.port")
            if let url { made.setAttribute(.string(url.absoluteString), forKey: "url.full") }
            if index > 0 { made.setAttribute(.int(Int64(index)), forKey: "http.request.resend_count") }
            span = made
            spans.withLock { spans in
                spans.request = made
                spans.requestsBegun += 1
            }
        }
        // The new request in, the open one (without a tracer: ended here) out. A cancel's end racing a redirect
        // between these swaps can time one request from the other's start; the active count stays exact.
        let now = Monotonic.now()
        let address = endpoint.map { UInt(bitPattern: Unmanaged.passUnretained($0).toOpaque()) } ?? 0
        let open = swapHop(endpoint: address, began: now)
        if open.endpoint != 0 { report(endpoint: open.endpoint, began: open.began, status: open.status, nil, error: nil, httpVersion: nil, now: now) }
        // The request's own span id, under the caller's trace (or the tracer's, when it propagates).
        guard let context = span?.context ?? (downloadSpan?.context ?? trace)?.withNewSpanID() else { return request }
        var stamped = request
        stamped.setValue(context.traceParent, forHTTPHeaderField: "traceparent")
        stamped.setValue(context.traceState, forHTTPHeaderField: "tracestate")
        return stamped
    }
}

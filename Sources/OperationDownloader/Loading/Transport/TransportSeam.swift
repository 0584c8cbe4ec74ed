import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The seam between an operation and whatever carries its HTTP exchange (issue 14).
//
// The operation owns the download's rules: validation, redirect policy, credentials, the HTTP cache, cookies,
// timeouts, decoding, callers. A transport only moves bytes: it sends one request at a time for a transfer,
// reports what came back, and asks the client whenever the rules decide (redirects, challenges). Transports:
// the URLSession adapter (the corelibs workarounds live there), the libcurl transport, and the scripted
// transport of the tests, which releases each event when the test says so.
//
// Threading contract, for every transport:
// - Events of one transfer are delivered one at a time, in order, never two at once, on a thread of the
//   transport's choosing (the session's delegate queue, the curl thread, the test's thread).
// - After `cancel()` returns, no event of that transfer begins (completion included). An event already running
//   on another thread may still finish: clients check their own state under their lock.
// - Methods of `TransportTransfer` may be called from any thread, also from inside an event.
// - A transfer holds its client at most until it ends (completes or is cancelled), never longer: the operation
//   holds the transfer, so the cycle lasts only while the transfer runs. The curl transfer holds it strongly
//   until then (a client may have no other owner: the probe's); the others (URLSession, data URLs, the failed
//   transfer, the tests' scripted one) weakly. Either way the transfer never keeps a finished operation alive,
//   and once the client is gone or the transfer ended, its remaining events go nowhere.

/// Creates transfers. One per downloader (a URLSession and its router; a curl multi handle and its thread).
protocol DownloadTransport: AnyObject, Sendable {
    /// A new transfer of `request`, not started: events go to `client` once `resume()` is called.
    /// Never fails: a transfer that cannot run (say, libcurl missing) reports it as its completion error.
    func makeTransfer(_ request: TransferRequest, client: any TransferClient) -> any TransportTransfer

    /// Ends the transport once no transfer needs it: with `cancellingTransfers`, running transfers end at once
    /// (their clients get no further event); otherwise they finish first. No transfer is made afterwards.
    func invalidate(cancellingTransfers: Bool)

    /// Why this transport cannot load `url` at all on this platform (say, URLSession on Linux and an IPv6
    /// literal host), so the download fails at once, before anything is queued; nil when it can try.
    func unsupportedReason(for url: URL) -> String?
}

extension DownloadTransport {
    func unsupportedReason(for url: URL) -> String? { nil }
}

/// What to send and how.
struct TransferRequest: Sendable {
    /// Method, URL, headers (the downloader's, the modifier's, the HTTP cache's validators, cookies).
    var urlRequest: URLRequest
    /// `.allowInvalidSSLCertificates`: skip certificate verification for this transfer only.
    var allowsInvalidCertificates: Bool = false
    /// 0 (lowest) ... 1 (highest); 0.5 is normal (URLSessionTask's scale: `.lowPriority` 0.25,
    /// `.highPriority` 0.75).
    var priority: Float = 0.5
    /// Seconds without any byte after which the transport may give up by itself. The operation enforces the
    /// idle timeout and `maximumDownloadDuration` precisely; this is the transport's own backstop.
    var idleTimeout: TimeInterval = 15
    /// Bodies larger than this end the transfer; a transport that sees the announced length may stop at the
    /// header. The operation checks it too.
    var maximumResponseSize: Int = .max
    /// `urlRequest.timeoutInterval` was never assigned (the request was made with
    /// `URLRequest(url:cachePolicy:timeoutInterval:)`): corelibs then applies the session's request timeout
    /// instead of the request's, which the URLSession transport uses to skip a copy (URLSessionTransfer.swift).
    var timeoutIntervalIsUnset = false
}

/// One HTTP exchange in flight (one or more requests: redirects and authentication retries continue it).
protocol TransportTransfer: AnyObject, Sendable {
    /// Sends the request. Call once.
    func resume()
    /// Stops the transfer at once; see the threading contract above.
    func cancel()
    /// Backpressure: stop taking body bytes until `resumeReading()` (a transport without backpressure, such as
    /// URLSession on Linux, ignores both; the operation's size limit still bounds memory).
    func suspendReading()
    func resumeReading()
    /// Changes the priority (a caller with a higher priority joined).
    func setPriority(_ priority: Float)
}

/// The operation side of the seam. Every method is called per the threading contract above.
protocol TransferClient: AnyObject, Sendable {
    /// Headers of a response to the current request. With URLSession a 401 that carries a challenge arrives
    /// here (and may send its body) before `didReceive challenge`. The package's own value: a Foundation
    /// response is made from it only when someone asks (TransportResponse.swift).
    func transfer(_ transfer: any TransportTransfer, didReceive response: TransportResponse)

    /// Body bytes: new ones only, decoded (gzip/deflate/br) where the transport decodes.
    func transfer(_ transfer: any TransportTransfer, didReceive data: Data)

    /// The same, as the transport's own buffer, valid only during the call: a client copies what it keeps
    /// (straight into its buffer, without the intermediate `Data`). The curl transport delivers body bytes
    /// this way; the default (TransportSeam+Bytes.swift) wraps them in a `Data` for the method above.
    func transfer(_ transfer: any TransportTransfer, didReceiveBytes bytes: UnsafeRawBufferPointer)

    /// A 3xx with a usable Location: the request to send next (the client applies the redirect policy:
    /// hop count, schemes, headers, credentials, cookies), or nil to stop following. After nil the 3xx is
    /// the final response, unless the client cancelled the transfer meanwhile.
    func transfer(
        _ transfer: any TransportTransfer, willRedirect response: HTTPURLResponse, to request: URLRequest
    ) -> URLRequest?

    /// The server asked for credentials: a credential to retry with, or nil to refuse (the 401 or 407 is then
    /// the final response).
    func transfer(_ transfer: any TransportTransfer, didReceive challenge: TransferChallenge) -> URLCredential?

    /// The end, with nil or the error (a `URLError`: timeouts, resets, refused, TLS failures with their codes;
    /// or an `ImageDownloaderError` the transport chose itself, such as `.unsupportedOnPlatform` when it cannot
    /// run here, which the operation passes on as it is) and what the transport measured.
    func transfer(_ transfer: any TransportTransfer, didCompleteWith error: (any Error)?, metrics: TransferMetrics)
}

/// An authentication request from the server, in transport-neutral form.
struct TransferChallenge: Sendable, Equatable {
    var host: String
    var port: Int
    /// `NSURLAuthenticationMethodHTTPBasic`, `...HTTPDigest`, `...Default` (unknown scheme) ...
    var authenticationMethod: String
    var realm: String?
    /// How many credentials were already refused for this transfer (0 on the first challenge).
    var previousFailureCount: Int
    /// A 407 from a proxy rather than a 401 from the server.
    var isProxy: Bool = false
}

/// What a transport measured about one transfer (nil where it cannot tell; URLSession on Linux tells nothing).
struct TransferMetrics: Sendable, Equatable {
    /// "1.0", "1.1", "2", "3".
    var httpVersion: String?
    /// The peer's address ("127.0.0.1", "::1") and port as connected.
    var remoteAddress: String?
    var remotePort: Int?
    /// The request went over a connection an earlier transfer had opened.
    var connectionReused: Bool?
    var domainLookupDuration: TimeInterval?
    var connectDuration: TimeInterval?
    var secureConnectionDuration: TimeInterval?
    /// From sending the request to the first response byte.
    var timeToFirstByte: TimeInterval?
    var totalDuration: TimeInterval?
    /// Requests the transport sent on its own for the last hop: 1, or 2 when libcurl re-sent a request on a
    /// fresh connection after a reused one turned out dead (the server then saw a request the package did not
    /// send). Retries and `attemptCount` must count these honestly.
    var requestsSent: Int = 1
    var bytesReceived: Int?
    var bytesSent: Int?

    init() {}
}

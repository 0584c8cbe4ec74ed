import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one "connection lost" (`URLError.networkConnectionLost`, -1005) of every transport: a transfer whose
/// connection ended before the response was complete, told apart from other failures the same way whichever
/// transport carried it, and worded the same ("connection lost (the connection closed after 27958 of 55916
/// body bytes)"). The retry policy retries it (Retrying/RetryClassification.swift), and a retry may resume the
/// body (Operation/StateMachine/ResumePoint.swift).
///
/// What counts: a body that ends before its `Content-Length` or its chunked terminator, a reset (RST), an HTTP/2
/// stream reset, a TLS connection closed without close_notify mid-body, and a connection that closed inside the
/// response head. Transports report these differently: the curl transport as -1005 already (CurlErrorMapping),
/// corelibs' URLSession as -1 ("unknown") with libcurl's message, and libcurl accepts a head cut before its end
/// as a complete response without body. The operation passes every transfer's end through `classify`.
enum ConnectionLoss {
    /// What the operation knows of the attempt's body when its transfer ended.
    struct Body {
        /// A response (head) arrived.
        var responded: Bool
        /// Body bytes held (a resumed attempt's include the bytes kept from before).
        var received: Int
        /// The announced length (the whole representation's for a resumed attempt), or -1.
        var expected: Int
        /// The server's response, for its `Content-Encoding` (the announced length counts encoded bytes).
        var response: TransportResponse?
    }

    /// libcurl's words for a transfer that ended early (CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING, CURLE_RECV_ERROR,
    /// CURLE_HTTP2(_STREAM), OpenSSL's unexpected EOF), lower-cased, as corelibs hands them on in a -1 error.
    static let cutShortMessages = [
        "transfer closed", "end of response", "empty reply", "unexpected eof", "connection died",
        "connection reset", "recv failure", "stream", "http/2", "http2", "ssl_read",
    ]

    /// `error` as a `.networkConnectionLost` with the package's words when it is a connection cut short; else
    /// `error` as it is. A transfer that ended without error but without a response was cut inside its head.
    static func classify(_ error: (any Error)?, body: Body, url: URL?) -> (any Error)? {
        guard let error else { return body.responded ? nil : lost(body, url: url) }
        guard let urlError = error as? URLError else { return error }
        switch urlError.code {
        case .networkConnectionLost:
            return lost(body, url: url)
        case .unknown, .badServerResponse:
            // corelibs' -1 carries libcurl's message; a body shorter than announced is cut whatever it says.
            let message = (urlError.userInfo[NSLocalizedDescriptionKey] as? String ?? "").lowercased()
            let saysCut = cutShortMessages.contains { message.contains($0) }
            let short = body.responded && body.expected > 0 && body.received < body.expected
                && (body.response.map(ResumePoint.isIdentityCoded) ?? true)
            if urlError.code == .badServerResponse && !short { return error }  // broken framing: not a cut
            return saysCut || short ? lost(body, url: url) : error
        default:
            return error
        }
    }

    /// The one `.networkConnectionLost` error: how far the body got, in the same words on every transport.
    static func lost(_ body: Body, url: URL?) -> URLError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: describe(body)]
        if let url { info[NSURLErrorFailingURLErrorKey] = url }
        return URLError(.networkConnectionLost, userInfo: info)
    }

    /// "the connection closed after 27958 of 55916 body bytes", "... before the response was complete".
    static func describe(_ body: Body) -> String {
        guard body.responded else { return "the connection closed before the response was complete" }
        let of = body.expected > 0 ? " of \(body.expected)" : ""
        return "the connection closed after \(body.received)\(of) body bytes"
    }
}

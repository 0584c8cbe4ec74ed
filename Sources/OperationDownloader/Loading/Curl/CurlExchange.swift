import CCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request of a transfer, on one easy handle: the first request, a redirect's, or an authentication
/// retry. Curl thread only.
final class CurlExchange {
    /// Why the transfer's callbacks stopped libcurl (its result code is then CURLE_WRITE_ERROR).
    enum Abort {
        /// The announced or received body exceeds `TransferRequest.maximumResponseSize`.
        case tooLarge(Int)
        /// Body bytes without a response head.
        case noResponse
    }

    let request: URLRequest
    let url: URL
    let easy: CurlEasyHandle
    /// The request's header list: libcurl reads it until the request ends.
    var headers: UnsafeMutablePointer<ccurl_slist>?
    var head = CurlResponseHead()
    /// The head ended: later header lines are chunked trailers.
    var headComplete = false
    /// Delivered to the client.
    var response: TransportResponse?
    /// The client follows this redirect: the 3xx body is read and dropped, then this request is sent.
    var redirect: URLRequest?
    var discardedBytes = 0
    /// A Basic challenge of a delivered 401/407, asked once the response ended.
    var challenge: TransferChallenge?
    /// Body bytes delivered to the client.
    var receivedBytes = 0
    /// The write callback returned CURL_WRITEFUNC_PAUSE: libcurl holds that chunk until curl_easy_pause(CONT).
    var paused = false
    /// Requests sent for this exchange (the pre-request callback): 2 when libcurl re-sent it by itself.
    var requestsSent = 0
    var abort: Abort?

    init(request: URLRequest, url: URL, easy: CurlEasyHandle) {
        self.request = request
        self.url = url
        self.easy = easy
    }

    /// Frees the header list (the handle left the multi handle).
    func releaseHeaders() {
        if let headers { ccurl_slist_free_all(headers) }
        headers = nil
    }

    /// The error for an abort of ours.
    func abortError(_ abort: Abort) -> URLError {
        switch abort {
        case .tooLarge(let limit):
            return CurlErrorMapping.urlError(
                .dataLengthExceedsMaximum, "the response is larger than the limit of \(limit) bytes", url: url)
        case .noResponse:
            return CurlErrorMapping.urlError(.badServerResponse, "body bytes without an HTTP response", url: url)
        }
    }
}

import CCurl
import Foundation

/// `TransferMetrics` read from an easy handle once its request ended (curl thread).
enum CurlMetrics {
    /// libcurl's times are microseconds from the start of the request (CURLINFO_*_TIME_T); durations of
    /// steps that did not happen (DNS, connect and TLS on a reused connection) are nil, as in
    /// URLSessionTaskMetrics.
    static func read(_ easy: CurlEasyHandle, requestsSent: Int) -> TransferMetrics {
        var metrics = TransferMetrics()
        metrics.requestsSent = max(1, requestsSent)
        switch easy.long(CCURLINFO_HTTP_VERSION) {
        case 1: metrics.httpVersion = "1.0"  // CURL_HTTP_VERSION_1_0
        case 2: metrics.httpVersion = "1.1"  // CURL_HTTP_VERSION_1_1
        case 3: metrics.httpVersion = "2"    // CURL_HTTP_VERSION_2_0
        case 30: metrics.httpVersion = "3"   // CURL_HTTP_VERSION_3
        default: break
        }
        if let ip = easy.string(CCURLINFO_PRIMARY_IP), !ip.isEmpty {
            metrics.remoteAddress = ip
            metrics.remotePort = easy.long(CCURLINFO_PRIMARY_PORT).flatMap { $0 > 0 ? $0 : nil }
        }
        let connects = easy.long(CCURLINFO_NUM_CONNECTS) ?? 0
        if requestsSent > 0 {
            metrics.connectionReused = connects == 0
        }
        func seconds(_ info: Int) -> TimeInterval? {
            easy.offset(info).map { TimeInterval($0) / 1_000_000 }
        }
        let lookup = seconds(CCURLINFO_NAMELOOKUP_TIME_T)
        let connect = seconds(CCURLINFO_CONNECT_TIME_T)
        let appConnect = seconds(CCURLINFO_APPCONNECT_TIME_T)
        let preTransfer = seconds(CCURLINFO_PRETRANSFER_TIME_T)
        let startTransfer = seconds(CCURLINFO_STARTTRANSFER_TIME_T)
        if connects > 0 {
            metrics.domainLookupDuration = lookup
            if let connect, let lookup, connect > 0 { metrics.connectDuration = max(0, connect - lookup) }
            if let appConnect, let connect, appConnect > 0 { metrics.secureConnectionDuration = max(0, appConnect - connect) }
        }
        if let startTransfer, let preTransfer, startTransfer > 0 {
            metrics.timeToFirstByte = max(0, startTransfer - preTransfer)
        }
        metrics.totalDuration = seconds(CCURLINFO_TOTAL_TIME_T)
        metrics.bytesReceived = easy.offset(CCURLINFO_SIZE_DOWNLOAD_T).map { Int($0) }
        let requestSize = easy.long(CCURLINFO_REQUEST_SIZE) ?? 0
        let uploaded = easy.offset(CCURLINFO_SIZE_UPLOAD_T) ?? 0
        metrics.bytesSent = requestSize + Int(uploaded)
        return metrics
    }
}

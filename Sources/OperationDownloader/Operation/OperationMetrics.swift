import Foundation

/// How the operation fills in `ImageDownloadMetrics` (Docs/Options.md): its own timestamps and counts, plus
/// what the transport measured about each transfer.
extension ImageDownloadMetrics {
    /// An attempt's transfer ended: the transport's figures (nil where it cannot tell). Its requests are counted
    /// by `DownloadStateMachine` (`attemptCount`).
    mutating func record(_ transfer: TransferMetrics) {
        httpVersion = transfer.httpVersion ?? httpVersion
        remoteAddress = transfer.remoteAddress ?? remoteAddress
        connectionReused = transfer.connectionReused ?? connectionReused
        domainLookupDuration = transfer.domainLookupDuration ?? domainLookupDuration
        connectDuration = transfer.connectDuration ?? connectDuration
        secureConnectionDuration = transfer.secureConnectionDuration ?? secureConnectionDuration
    }

    /// An attempt sends its request: what an earlier attempt measured no longer describes the download's last
    /// request (`keptBytes`: body bytes kept from a cut attempt, which the request asks to continue).
    mutating func recordRequestStarted(keptBytes: Int) {
        responseAt = nil
        firstByteAt = nil
        statusCode = nil
        receivedBytes = keptBytes
        expectedBytes = -1
        resumedFromByte = nil
        httpVersion = nil
        remoteAddress = nil
        connectionReused = nil
        domainLookupDuration = nil
        connectDuration = nil
        secureConnectionDuration = nil
    }

    /// A response arrived (an authentication retry or a redirect sends another one: the last one counts).
    /// `resumedFrom`: a `206` continuing the first bytes of a cut body, which count as received.
    mutating func recordResponse(status: Int?, resumedFrom: Int? = nil) {
        responseAt = Date()
        statusCode = status
        resumedFromByte = resumedFrom
        guard let resumedFrom else {
            receivedBytes = 0
            firstByteAt = nil
            return
        }
        receivedBytes = resumedFrom
    }

    /// The bytes came from the HTTP cache without any request.
    mutating func recordServedFromCache(status: Int, bytes: Int) {
        let now = Date()
        startedAt = now
        responseAt = now
        firstByteAt = now
        statusCode = status
        receivedBytes = bytes
        expectedBytes = bytes
        source = .httpCache
    }
}

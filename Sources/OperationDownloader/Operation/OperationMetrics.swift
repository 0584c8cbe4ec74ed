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

    /// A response arrived (an authentication retry or a redirect sends another one: the last one counts).
    mutating func recordResponse(status: Int?) {
        responseAt = Date()
        statusCode = status
        receivedBytes = 0
        firstByteAt = nil
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

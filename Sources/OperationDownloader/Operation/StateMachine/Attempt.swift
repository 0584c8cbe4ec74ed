import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One transfer and what it has received so far. A retry (ImageDownloaderOperation+Retry.swift) makes a new one,
/// which may continue the bytes of a cut one (`ResumePoint`).
///
/// A class, reached only through `DownloadStateMachine`'s `transferring` phase: its fields are read and written only inside the
/// operation's state lock (a struct payload would be copied out of the enum and back on every chunk).
/// Its fields skip the runtime's dynamic exclusivity checks: the lock already serializes every access.
final class Attempt: @unchecked Sendable {  // guarded by the owning operation's `state` lock
    let transfer: any TransportTransfer
    let timeouts: TransferTimeouts
    /// The clocks' registrations while they run; nil before they start and once stopped.
    @exclusivity(unchecked) var runningTimeouts: TransferTimeouts.Running?
    /// The clocks were stopped (the transfer ended): they must not start after that.
    @exclusivity(unchecked) var timeoutsStopped = false
    /// The monitor time of the latest event (the idle timeout counts from it).
    @exclusivity(unchecked) var lastActivity: UInt64
    @exclusivity(unchecked) var buffer = ReceiveBuffer()
    /// The announced body size (clamped later by what arrives), or -1.
    @exclusivity(unchecked) var expectedSize = -1
    @exclusivity(unchecked) var lastReportedSize = -1
    /// The current response is a 401 that an authentication retry should replace: its body is not kept.
    @exclusivity(unchecked) var awaitingAuthRetry = false
    @exclusivity(unchecked) var authAttempts = 0
    /// Checks the first body bytes for a non-image (nil once decided, or when not sniffing).
    @exclusivity(unchecked) var sniffer: BodySniffer?
    /// The server's response as received (before the response modifier), to store in the HTTP cache.
    @exclusivity(unchecked) var serverResponse: TransportResponse?
    /// A 304 answered from the HTTP cache: its stored response and body replace the (empty) 304.
    @exclusivity(unchecked) var revalidated: CachedHTTPResponse?
    /// A response arrived (a transfer that ends without one was cut inside the response head).
    @exclusivity(unchecked) var responded = false
    /// The request as the operation built it, before any `Range` asking for the rest of a cut body.
    let plainRequest: URLRequest
    /// [resume] The cut body this attempt asks to continue (its bytes are in `buffer` until the response says
    /// otherwise); nil once the response starts over.
    @exclusivity(unchecked) var resuming: ResumePoint?
    /// [resume] The first byte of the `206` that continued `resuming`.
    @exclusivity(unchecked) var resumedFrom: Int?

    init(
        transfer: any TransportTransfer, timeouts: TransferTimeouts, sniffs: Bool, request: URLRequest,
        resuming: ResumePoint? = nil
    ) {
        self.transfer = transfer
        self.timeouts = timeouts
        self.lastActivity = timeouts.monitor.now()
        self.plainRequest = request
        self.resuming = resuming
        if let resuming {
            // The bytes kept: a caller joining now gets partial images from them, and a cut before the response
            // keeps them for the next attempt.
            buffer = resuming.buffer
            sniffer = resuming.sniffer
        } else {
            sniffer = sniffs ? BodySniffer() : nil
        }
    }
}

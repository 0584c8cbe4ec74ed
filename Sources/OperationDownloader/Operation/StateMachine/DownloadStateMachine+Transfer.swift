import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The running transfer's events: response, body bytes, body sniffing, redirect, challenge, and the incremental
/// decoders fed with the body. Every event counts only while its transfer is the running one (`attempt(of:)`).
extension DownloadStateMachine {
    // MARK: - Response

    struct ResponseCheck {
        let validation: ResponseValidation
        let mayRetryAuthentication: Bool
        let reportsProgress: Bool
        /// The response to validate: the one that arrived, or for a `206` continuing a cut body the `200` it
        /// continues (its status and whole length).
        let judged: TransportResponse
        /// [resume] The bytes kept from the cut body (a `206` continues them): progress goes on from here.
        let resumedFrom: Int?
        /// [resume] The body starts over (a `200` answered the ranged request): the incremental decoders were
        /// dropped, and new ones must be made for the callers that want partial images.
        let restartsDecoding: Bool
    }

    /// What the operation does with a response.
    enum ResponseArrival {
        /// Validate it as `check` says.
        case validate(ResponseCheck)
        /// [resume] A `206` that does not continue the bytes kept (or a `416`): this transfer is dropped (its
        /// clocks stopped, back to `starting`) and `request`, without `Range`, is sent on a new one.
        case askAgain(URLRequest)
    }

    /// A response arrived (after the HTTP cache and the response modifier): everything about the body starts
    /// over (an authentication retry sends a second response), unless it is the rest of a cut body
    /// (`ResumePoint.judge`). Nil when stale.
    mutating func responseArrived(
        _ response: TransportResponse, server serverResponse: TransportResponse?, fromCache: CachedHTTPResponse?,
        from transfer: any TransportTransfer, maximumResponseSize: Int
    ) -> (Action, ResponseArrival?) {
        guard let attempt = attempt(of: transfer) else { return (.none, nil) }
        attempt.responded = true
        var verdict = ResumePoint.Verdict.startsOver
        var restartsDecoding = false
        if let point = attempt.resuming, fromCache == nil {
            verdict = point.judge(serverResponse ?? response)
            if verdict == .keeps, let status = response.statusCode,
               ResponseValidation.isAcceptable(status: status, codes: acceptableStatusCodes) {
                verdict = .startsOver  // an error status the caller accepts is a body of its own: never joined
            }
            switch verdict {
            case .discard:
                let clocks = stopClocks()
                dropIncremental()
                moveToStarting()
                return (clocks.map(Action.stopClocks) ?? .none, .askAgain(point.plainRequest))
            case .startsOver:
                attempt.resuming = nil
                dropIncremental()
                restartsDecoding = true
            case .continues:
                attempt.resumedFrom = point.from
            case .keeps:
                break
            }
        }
        if attempt.resuming == nil {
            attempt.buffer = ReceiveBuffer()
            if attempt.sniffer != nil { attempt.sniffer = BodySniffer() }
            attempt.lastReportedSize = -1
        }
        attempt.awaitingAuthRetry = false
        attempt.serverResponse = verdict == .continues ? attempt.resuming?.original : serverResponse
        attempt.revalidated = fromCache
        if fromCache != nil { attempt.sniffer = nil }  // [HTTP cache] the stored body is the one delivered
        setResponse(response)
        let resumedFrom = verdict == .continues ? attempt.resumedFrom : nil
        recordMetrics {
            $0.recordResponse(status: response.statusCode, resumedFrom: resumedFrom)
            if let fromCache {  // [HTTP cache]
                $0.source = fromCache.source
                $0.servedStale = fromCache.isStale
            }
        }
        let validation = ResponseValidation(
            acceptableStatusCodes: acceptableStatusCodes, acceptableContentTypes: acceptableContentTypes,
            maximumResponseSize: maximumResponseSize)
        return (.none, .validate(ResponseCheck(
            validation: validation, mayRetryAuthentication: credential != nil && attempt.authAttempts == 0,
            reportsProgress: hasProgressHandlers,
            judged: verdict == .continues ? attempt.resuming?.original ?? response : response,
            resumedFrom: resumedFrom, restartsDecoding: restartsDecoding)))
    }

    /// The response is a 401 that the challenge (and a retried request) follows on Linux: its body is not kept.
    mutating func awaitAuthenticationRetry(_ transfer: any TransportTransfer) {
        attempt(of: transfer)?.awaitingAuthRetry = true
    }

    /// The response is accepted: room for the announced body up front (SDWebImage's initWithCapacity: chunks are
    /// then copied once each), capped at `maximumReserved` since the header may lie.
    mutating func responseAccepted(_ transfer: any TransportTransfer, expected: Int, maximumReserved: Int) {
        if let attempt = attempt(of: transfer) {
            if expected > 0, attempt.buffer.isEmpty { attempt.buffer.reserve(min(expected, maximumReserved)) }
            attempt.expectedSize = expected
            // [resume] Progress goes on from the bytes kept.
            attempt.lastReportedSize = attempt.resumedFrom ?? 0
        }
        recordMetrics { $0.expectedBytes = expected }
    }

    // MARK: - Body

    enum BodyVerdict {
        /// Stale transfer, a 401 awaiting its retry, or a 5xx answered from the HTTP cache: not kept.
        case drop
        /// Appended at `offset`; `report` is a throttled progress report; `incremental` is fed the chunk.
        case accept(report: (received: Int, expected: Int)?, incremental: IncrementalDecoding?, offset: Int)
    }

    /// Body bytes: appended to the attempt's buffer (no allocation beyond the buffer's growth), progress
    /// throttled by `minimumProgressInterval`. Over `limit`: the download ends with `.responseTooLarge`.
    mutating func bytesArrived(
        _ bytes: UnsafeRawBufferPointer, from transfer: any TransportTransfer, now: UInt64, limit: Int
    ) -> (Action, BodyVerdict) {
        // Data keeps arriving after a cancel on some transports: dropped.
        guard bytes.baseAddress != nil, let attempt = noteActivity(of: transfer, now: now),
              !attempt.awaitingAuthRetry, attempt.revalidated == nil
        else { return (.none, .drop) }
        let (total, overflow) = attempt.buffer.count.addingReportingOverflow(bytes.count)
        if overflow || total > limit {
            let size = overflow ? Int.max : total
            return (finish(.failure(ImageDownloaderError.responseTooLarge(size)), cancelTransfer: true), .drop)
        }
        let offset = attempt.buffer.count
        attempt.buffer.append(bytes)
        recordMetrics {
            if offset == 0 { $0.firstByteAt = Date() }
            $0.receivedBytes = total
        }
        let expected = attempt.expectedSize > 0 ? max(attempt.expectedSize, total) : -1
        let interval = minimumProgressInterval
        var report: (Int, Int)?
        if hasProgressHandlers, expected <= 0 || interval <= 0
            || Double(total - max(0, attempt.lastReportedSize)) / Double(expected) >= interval || total >= expected {
            attempt.lastReportedSize = total
            report = (total, expected)
        }
        return (.none, .accept(report: report, incremental: incremental, offset: offset))
    }

    /// The sniffer to feed the first body bytes to (outside the lock: coders' `canDecode` is user code); nil once
    /// decided, when not sniffing, or for a 401 awaiting its retry.
    func snifferToFeed(_ transfer: any TransportTransfer) -> BodySniffer? {
        guard let attempt = attempt(of: transfer), !attempt.awaitingAuthRetry else { return nil }
        return attempt.sniffer
    }

    /// The sniffer was fed: kept while undecided (events of one transfer never overlap, so it was not fed twice).
    mutating func snifferFed(_ transfer: any TransportTransfer, _ fed: BodySniffer, verdict: BodySniffer.Verdict) {
        guard let attempt = attempt(of: transfer), attempt.sniffer != nil else { return }
        attempt.sniffer = verdict == .undecided ? fed : nil
    }

    // MARK: - Redirect and challenge

    /// A redirect is proposed: counted; returns the count and the transport that would follow it (nil: stale).
    mutating func redirectProposed(
        _ transfer: any TransportTransfer, now: UInt64, downloaderTransport: (any DownloadTransport)?
    ) -> (count: Int, transport: (any DownloadTransport)?)? {
        guard noteActivity(of: transfer, now: now) != nil else { return nil }
        var count = 0
        recordMetrics {
            $0.redirectCount += 1
            count = $0.redirectCount
        }
        return (count, downloaderTransport ?? transport)
    }

    /// A challenge: the stored credential, once, for the original host only (`CredentialPolicy`).
    mutating func challengeReceived(
        _ challenge: TransferChallenge, from transfer: any TransportTransfer, now: UInt64, originalHost: String?
    ) -> URLCredential? {
        guard let attempt = noteActivity(of: transfer, now: now) else { return nil }
        let answer = CredentialPolicy.credential(for: challenge, stored: credential, originalHost: originalHost)
        if answer != nil { attempt.authAttempts += 1 }
        return answer
    }

    // MARK: - Partial images

    /// A caller that wants partial images for `decoding` while an attempt runs: the attempt's incremental
    /// decoders (made with the first, by `make`) get a stream fed the bytes so far. Handing the stream to
    /// `IncrementalDecoding` (its own lock, no user code) happens here, in the same critical section as the
    /// buffer's snapshot, so no chunk appended after the snapshot can reach the decoders before the stream.
    /// Decoders made after the body started over deliver only partial images newer than any delivered before
    /// (`partialImagesThrough`).
    mutating func addIncrementalStream(
        for decoding: ImageVariant.Decoding, options: ImageDecodingOptions,
        make: (_ queue: DispatchQueue, _ partialImagesAfter: Int) -> IncrementalDecoding
    ) {
        guard let attempt else { return }
        let decoders: IncrementalDecoding
        if let running = incremental {
            decoders = running
        } else {
            decoders = make(madeCoderQueue(), partialImagesThrough)
            setIncremental(decoders)
        }
        decoders.addStream(for: decoding, options: options, received: attempt.buffer.data)
    }
}

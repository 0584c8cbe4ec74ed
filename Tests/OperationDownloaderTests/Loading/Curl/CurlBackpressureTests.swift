import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import OperationDownloader
import Testing
import TestRequirements

/// suspendReading()/resumeReading(): a consumer that falls behind pauses the transfer (libcurl stops
/// reading the socket), so memory stays bounded however large the body.
@Suite(.requires(.libcurl))
struct CurlBackpressureTests {
    let server = FixtureServer.shared

    /// A 1 GB body suspended at its first chunk: nothing more arrives while suspended, and the server is
    /// stuck at what the socket buffers hold; after resumeReading() the bytes flow again.
    @Test func suspendedGigabyteStaysBounded() async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let tag = newTag()
        let client = RecordingTransferClient(keepsBody: false)
        let suspended = Completion()
        let flowingAgain = Completion()
        client.onData = { [weak client] transfer, total in  // weak: the client keeps this closure
            if !suspended.isDone {
                transfer.suspendReading()
                suspended.signal()
            } else if total > 16 << 20, !flowingAgain.isDone {
                // Cancelled from the event, so the rest of the gigabyte cannot arrive however slow the test is.
                transfer.cancel()
                client?.noteCancelReturned()
                flowingAgain.signal()
            }
        }
        let transfer = harness.start(server.url("/bytes?n=1073741824&tag=\(tag)"), client: client)
        #expect(await suspended.wait(timeout: 60))
        let atSuspend = client.receivedBytes

        // The curl thread keeps running other transfers meanwhile (4 MB through the same multi handle).
        let other = await harness.run(server.url("/bytes?n=4194304&tag=\(tag)&other=1"), client: RecordingTransferClient(keepsBody: false))
        #expect(other.receivedBytes == 4_194_304)
        #expect(client.receivedBytes == atSuspend, "no body byte is delivered while suspended")
        let live = FixtureControl.live(base: server.url(""), tag: tag)
        let sent = try #require(live.first { $0.path.hasPrefix("/bytes?n=1073741824") }).bytesSent
        #expect(sent < 64 << 20, "the server is blocked by full socket buffers, not streaming into memory: \(sent)")

        transfer.resumeReading()
        #expect(await flowingAgain.wait(timeout: 60))
        let logged = await server.awaitRequests(tag: tag, count: 2, finished: true)
        #expect(logged.first { $0.query["other"] == nil }?.aborted == true)
        #expect(client.eventsAfterCancel.isEmpty)
    }

    /// A slow consumer that suspends above 256 KB unconsumed and resumes below 64 KB: the whole body arrives
    /// intact and the unconsumed bytes never exceed the high-water mark by more than one chunk.
    @Test func slowConsumerKeepsMemoryBounded() async throws {
        let chunk = 64 * 1024
        let harness = CurlHarness { $0.receiveBufferSize = chunk }
        defer { harness.invalidate() }
        let consumer = SlowConsumer(high: 256 * 1024, low: 64 * 1024)
        let client = RecordingTransferClient(keepsBody: false)
        client.onData = { transfer, total in consumer.received(total: total, transfer: transfer) }
        let size = 32 << 20
        _ = await harness.run(server.url("/bytes?n=\(size)&tag=\(newTag())"), client: client)
        #expect(client.error == nil)
        #expect(client.receivedBytes == size)
        #expect(consumer.peakUnconsumed <= 256 * 1024 + chunk, "peak \(consumer.peakUnconsumed)")
        #expect(consumer.suspensions > 10, "the consumer really was behind (\(consumer.suspensions) suspensions)")
    }
}

/// A consumer that keeps up with only a quarter of what arrives: above `high` unconsumed bytes it suspends the
/// transfer and drains on its own queue, 16 KB per step, until below `low`, then resumes. So it falls behind by
/// construction (one suspension per ~256 KB at most), however fast or slow the machine is.
final class SlowConsumer: @unchecked Sendable {  // `lock` guards every var
    private let lock = NSLock()
    private let queue = DispatchQueue(label: "test.slow-consumer")
    private let high: Int
    private let low: Int
    private var received = 0
    private var consumed = 0
    private var suspended = false
    private var peak = 0
    private var suspendCount = 0

    init(high: Int, low: Int) {
        self.high = high
        self.low = low
    }

    var peakUnconsumed: Int { lock.withLock { peak } }
    var suspensions: Int { lock.withLock { suspendCount } }

    func received(total: Int, transfer: any TransportTransfer) {
        let suspend: Bool = lock.withLock {
            consumed += (total - received) / 4
            received = total
            peak = max(peak, received - consumed)
            guard !suspended, received - consumed > high else { return false }
            suspended = true
            suspendCount += 1
            return true
        }
        if suspend {
            transfer.suspendReading()
            queue.async { self.drain(transfer) }
        }
    }

    /// One drain per suspension: it resumes the transfer once below `low`, and the next suspension starts another.
    private func drain(_ transfer: any TransportTransfer) {
        let resume: Bool = lock.withLock {
            consumed = min(received, consumed + 16 * 1024)
            guard received - consumed < low else { return false }
            suspended = false
            return true
        }
        if resume { transfer.resumeReading() } else { queue.async { self.drain(transfer) } }
    }
}

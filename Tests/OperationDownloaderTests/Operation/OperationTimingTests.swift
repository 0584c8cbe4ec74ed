import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import Testing
@testable import OperationDownloader

/// Timeouts, progress, partial images, priority and metrics on the scripted transport and a manual clock
/// (issue 14): the test decides when bytes arrive and when time passes.
@Suite struct OperationTimingTests {
    private let png = ScriptedHarness.fixture("image.png")

    @Test func aTimeoutBeforeTheCompletionWinsAndTheLateCompletionIsIgnored() async throws {
        let harness = ScriptedHarness { $0.downloadTimeout = 5 }
        let (recorder, _) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        transfer.deliversAfterCancel = true
        transfer.respond()
        transfer.send(png.prefix(100))
        harness.clock.advance(by: 5.1)
        #expect(transfer.cancelCount == 1)
        transfer.send(png.dropFirst(100))
        transfer.complete()
        await recorder.completion()
        await harness.drained()
        #expect(recorder.downloaderError?.caseName == "network\(URLError.timedOut.rawValue)")
        #expect(recorder.finals.count == 1)
        #expect(harness.monitor.pendingCount == 0)
    }

    /// A debug-build decode of a large image used to fail a healthy download as a network timeout (issue 12).
    @Test
    func aCompletionBeforeTheTimeoutWinsEvenWhileDecodingTakesLonger() async throws {
        let coder = try #require(BlockingCoder.wrapping(fixture: "image.png"))
        let harness = ScriptedHarness {
            $0.downloadTimeout = 1
            $0.maximumDownloadDuration = 2
            $0.codersManager = TestCoders.manager(with: coder)
        }
        let (recorder, _) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        transfer.respond()
        transfer.send(png)
        transfer.complete()
        await coder.started()
        // The transfer is complete and its clocks are gone: a minute of decoding changes nothing.
        #expect(harness.monitor.pendingCount == 0)
        harness.clock.advance(by: 60)
        coder.proceed.signal()
        await recorder.completion()
        #expect(recorder.final?.image?.width == 160, "got \(String(describing: recorder.final?.error))")
        #expect(transfer.cancelCount == 0)
    }

    @Test func steadyBytesKeepTheIdleTimeoutAwayButNotTheMaximumDuration() async throws {
        let harness = ScriptedHarness {
            $0.downloadTimeout = 1
            $0.maximumDownloadDuration = 3
        }
        let (recorder, _) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        transfer.respond()
        for step in 0..<5 {
            harness.clock.advance(by: 0.5)
            transfer.send(png.subdata(in: step * 100..<(step + 1) * 100))
        }
        await harness.drained()
        #expect(recorder.finals.isEmpty, "2.5 s in, never 1 s without a byte")
        harness.clock.advance(by: 0.6)
        await recorder.completion()
        #expect(recorder.downloaderError?.caseName == "network\(URLError.timedOut.rawValue)")
        #expect(transfer.cancelCount == 1)
    }

    @Test func progressIsThrottledButTheLastReportAlwaysComes() async throws {
        let harness = ScriptedHarness { $0.minimumProgressInterval = 0.25 }
        let (recorder, _) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        transfer.respond(headers: ["Content-Type": "image/png", "Content-Length": "\(png.count)"])
        transfer.send(png, inChunks: 100)
        transfer.complete()
        await recorder.completion()
        await harness.drained()
        let list = recorder.progressList
        // (0, -1), (0, total), a report per quarter of the body at most, and the last.
        #expect(list.count <= 7, "\(list)")
        #expect(list.last.map { $0 == (png.count, png.count) } == true)
        #expect(zip(list, list.dropFirst()).allSatisfy { $0.0 <= $1.0 })
    }

    @Test
    func progressivePartialsArriveAsTheBytesDoAndTheFinalEqualsAOneShotDecode() async throws {
        let adam7 = ScriptedHarness.fixture("adam7.png")
        let harness = ScriptedHarness { $0.progressiveDecodingInterval = 0 }
        let (recorder, _) = harness.download(options: .progressiveLoad)
        let transfer = try #require(await harness.transport.transfer())
        transfer.respond()
        transfer.send(adam7.prefix(adam7.count / 2))
        // The first half makes a partial image: awaited, not slept for.
        await recorder.wait { !$0.partials.isEmpty }
        transfer.send(adam7.dropFirst(adam7.count / 2))
        transfer.complete()
        await recorder.completion()
        await harness.drained()
        let oneShot = try ImageCodersManager.shared.decode(adam7)
        #expect(recorder.partials.allSatisfy { $0.isIncomplete && $0.width == 160 })
        #expect(recorder.final?.image?.pixels == oneShot.pixels)
        #expect(recorder.current.events.last == "final")
    }

    @Test func priorityGoesToTheTransferAndIsRaisedByAHigherCaller() async throws {
        let harness = ScriptedHarness()
        harness.download(options: .lowPriority)
        let transfer = try #require(await harness.transport.transfer())
        #expect(transfer.request.priority == 0.25)
        harness.download(options: .highPriority)
        #expect(transfer.priorityChanges == [0.75])
        harness.download(options: .lowPriority)
        #expect(transfer.priorityChanges == [0.75])
    }

    @Test func theTransportsMetricsReachTheCaller() async throws {
        let harness = ScriptedHarness()
        let (recorder, token) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        transfer.respond()
        transfer.send(png)
        var metrics = TransferMetrics()
        metrics.httpVersion = "2"
        metrics.remoteAddress = "::1"
        metrics.connectionReused = true
        metrics.domainLookupDuration = 0.001
        metrics.connectDuration = 0.002
        metrics.secureConnectionDuration = 0.003
        metrics.requestsSent = 2
        transfer.complete(metrics: metrics)
        await recorder.completion()
        let measured = try #require(token?.metrics)
        #expect(measured.httpVersion == "2" && measured.remoteAddress == "::1" && measured.connectionReused == true)
        #expect(measured.domainLookupDuration == 0.001 && measured.connectDuration == 0.002)
        #expect(measured.secureConnectionDuration == 0.003)
        #expect(measured.attemptCount == 2, "a request the transport re-sent counts")
        #expect(measured.receivedBytes == png.count && measured.statusCode == 200)
    }

    @Test func aTransportThatCannotRunFailsEveryDownloadAtOnce() async throws {
        let harness = ScriptedHarness()
        let refusing = ImageDownloader(
            configuration: harness.downloader.configuration, deadlineMonitor: harness.monitor,
            transport: UnavailableTransport(reason: "no engine here"))
        let recorder = AsyncRecorder()
        let token = refusing.downloadImage(ScriptedHarness.url(), progress: recorder.progress, completed: recorder.completed)
        #expect(token == nil)
        #expect(recorder.downloaderError?.caseName == "unsupportedOnPlatform")
        #expect(recorder.progressList.isEmpty)
    }
}

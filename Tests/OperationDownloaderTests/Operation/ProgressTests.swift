import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import OperationDownloader
import Testing

/// Progress reports and progressive (partial) images.
@Suite struct ProgressTests {
    let server = FixtureServer.shared

    private func expectMonotonicEndingAtTotal(_ recorder: DownloadRecorder, total: Int,
                                              sourceLocation: SourceLocation = #_sourceLocation) {
        let list = recorder.progressList
        #expect(list.first.map { $0 == (0, -1) } == true, "starts at (0, -1): \(list.prefix(3))", sourceLocation: sourceLocation)
        #expect(zip(list, list.dropFirst()).allSatisfy { $0.0 <= $1.0 }, "monotonic", sourceLocation: sourceLocation)
        #expect(list.last.map { $0 == (total, total) } == true, "ends at total: \(String(describing: list.last))",
                sourceLocation: sourceLocation)
        let events = recorder.events
        #expect(events.last == "final", sourceLocation: sourceLocation)
        #expect(events.dropLast().allSatisfy { $0 != "final" }, sourceLocation: sourceLocation)
    }

    @Test(arguments: TestTransports.all)
    func progressIsMonotonicAndEndsAtTheTotal(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, queue) = makeDownloader(transport)
        let tag = newTag()
        let recorder = DownloadRecorder()
        downloader.downloadImage(
            server.url("/drip/image.png?chunk=4096&delay_ms=5&tag=\(tag)"),
            progress: recorder.progress, completed: recorder.completed)
        await recorder.waitForCompletion()
        await drain(queue)
        #expect(recorder.final?.image?.width == 160)
        expectMonotonicEndingAtTotal(recorder, total: 55916)
        #expect(recorder.progressList.count > 5)
    }

    /// Progress is only gathered once some caller asked for it: a caller with a progress handler that joins
    /// a download whose first caller had none still gets every report from then on, ending at the total.
    @Test(arguments: TestTransports.all)
    func aProgressCallerJoiningLaterGetsProgress(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, queue) = makeDownloader(transport)
        let tag = newTag()
        // Held by the server until released: the second caller joins before any byte arrives.
        let url = server.url("/hold/\(tag)/image.png?tag=\(tag)")
        let first = DownloadRecorder()
        downloader.downloadImage(url, completed: first.completed)
        #expect(await server.awaitRequests(tag: tag, count: 1).count == 1)
        let joined = DownloadRecorder()
        downloader.downloadImage(url, progress: joined.progress, completed: joined.completed)
        server.release(tag)
        await first.waitForCompletion()
        await joined.waitForCompletion()
        await drain(queue)
        #expect(server.stats(tag: tag).count == 1)
        #expect(first.progressList.isEmpty)
        let list = joined.progressList
        #expect(list.count >= 2)
        #expect(list.last.map { $0 == (55916, 55916) } == true, "ends at total: \(String(describing: list.last))")
        #expect(zip(list, list.dropFirst()).allSatisfy { $0.0 <= $1.0 })
        #expect(joined.final?.image?.width == 160)
    }

    @Test(arguments: TestTransports.all)
    func minimumProgressIntervalThrottlesButKeepsTheLast(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, queue) = makeDownloader(transport) { $0.minimumProgressInterval = 0.5 }
        let tag = newTag()
        let recorder = DownloadRecorder()
        downloader.downloadImage(
            server.url("/drip/image.png?chunk=1024&delay_ms=1&tag=\(tag)"),
            progress: recorder.progress, completed: recorder.completed)
        await recorder.waitForCompletion()
        await drain(queue)
        expectMonotonicEndingAtTotal(recorder, total: 55916)
        // (0,-1), (0,total), at most two reports per half of the body, and the last.
        #expect(recorder.progressList.count <= 6)
    }

    @Test(arguments: TestTransports.all)
    func gzipBodyProgressIsClamped(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, queue) = makeDownloader(transport)
        let tag = newTag()
        let recorder = DownloadRecorder()
        downloader.downloadImage(
            server.url("/images/image.png?gzip=1&tag=\(tag)"), progress: recorder.progress, completed: recorder.completed)
        await recorder.waitForCompletion()
        await drain(queue)
        #expect(recorder.final?.data?.count == 55916)
        expectMonotonicEndingAtTotal(recorder, total: 55916)
        #expect(recorder.progressList.allSatisfy { $0.1 == -1 || $0.0 <= $0.1 })
    }

    @Test(arguments: TestTransports.all)
    func progressiveDownloadDeliversPartialsThenTheOneShotImage(_ transport: ImageDownloaderTransport) async throws {
        let coder = HeaderPNGTestCoder()
        let manager = TestCoders.manager(with: coder)
        let (downloader, queue) = makeDownloader(transport) {
            $0.codersManager = manager
            $0.progressiveDecodingInterval = 0
        }
        let tag = newTag()
        let recorder = DownloadRecorder()
        // The drip pauses half-way until released: a partial image must come out of the first half, however
        // late the coder queue runs on a loaded machine.
        downloader.downloadImage(
            server.url("/drip/image.png?chunk=2048&delay_ms=10&hold=\(tag)&tag=\(tag)"), options: .progressiveLoad,
            progress: recorder.progress, completed: recorder.completed)
        await recorder.wait(timeout: 60) { !$0.partials.isEmpty }
        server.release(tag)
        await recorder.waitForCompletion()
        await drain(queue)
        let final = try #require(recorder.final?.image)
        #expect(recorder.partials.allSatisfy { $0.isIncomplete && $0.width == 160 })
        #expect(!final.isIncomplete)
        let data = try Data(contentsOf: TestCoders.fixtureFile("image.png"))
        #expect(final == (try manager.decode(data)))
        // ONE incremental decoder, fed every byte exactly once, in order.
        let decoders = coder.incrementalDecoders()
        #expect(decoders.count == 1)
        #expect(decoders.first?.received == data)
        expectMonotonicEndingAtTotal(recorder, total: 55916)
    }

    @Test(arguments: TestTransports.all)
    func progressiveIntervalLimitsPartialImages(_ transport: ImageDownloaderTransport) async throws {
        let coder = HeaderPNGTestCoder()
        let (downloader, queue) = makeDownloader(transport) {
            $0.codersManager = TestCoders.manager(with: coder)
            $0.progressiveDecodingInterval = 60
        }
        let recorder = DownloadRecorder()
        downloader.downloadImage(
            server.url("/drip/image.png?chunk=2048&delay_ms=5&tag=\(newTag())"), options: .progressiveLoad,
            completed: recorder.completed)
        await recorder.waitForCompletion()
        await drain(queue)
        #expect(recorder.partials.count <= 1)
        #expect(recorder.final?.image?.width == 160)
    }

    @Test(arguments: TestTransports.all)
    func progressiveJPEGFinalEqualsOneShotDecode(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, queue) = makeDownloader(transport) {
            $0.codersManager = .shared
            $0.progressiveDecodingInterval = 0
        }
        let recorder = DownloadRecorder()
        let tag = newTag()
        // Paused half-way (after the first scans) until a partial image arrived.
        downloader.downloadImage(
            server.url("/drip/progressive.jpg?chunk=4096&delay_ms=20&hold=\(tag)&tag=\(tag)"), options: .progressiveLoad,
            completed: recorder.completed)
        await recorder.wait(timeout: 60) { !$0.partials.isEmpty }
        server.release(tag)
        await recorder.waitForCompletion()
        await drain(queue)
        let final = try #require(recorder.final?.image)
        let oneShot = try ImageCodersManager.shared.decode(Data(contentsOf: TestCoders.fixtureFile("progressive.jpg")))
        #expect(final.pixels == oneShot.pixels)
        #expect(recorder.partials.allSatisfy { $0.isIncomplete })
    }

    @Test(arguments: TestTransports.all)
    func interlacedPNGFinalEqualsOneShotDecode(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, queue) = makeDownloader(transport) {
            $0.codersManager = .shared
            $0.progressiveDecodingInterval = 0
        }
        let recorder = DownloadRecorder()
        downloader.downloadImage(
            server.url("/drip/adam7.png?chunk=4096&delay_ms=20&tag=\(newTag())"), options: .progressiveLoad,
            completed: recorder.completed)
        await recorder.waitForCompletion()
        await drain(queue)
        let final = try #require(recorder.final?.image)
        let oneShot = try ImageCodersManager.shared.decode(Data(contentsOf: TestCoders.fixtureFile("adam7.png")))
        #expect(final.width == 160 && final.height == 120)
        #expect(final.pixels == oneShot.pixels)
        #expect(recorder.partials.allSatisfy { $0.isIncomplete })
    }

    @Test(arguments: TestTransports.all)
    func eventsStreamYieldsProgressPartialsAndResult(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport) {
            $0.codersManager = TestCoders.manager(with: HeaderPNGTestCoder())
            $0.progressiveDecodingInterval = 0
        }
        var progress = 0, partials = 0
        var result: ImageDownloadResult?
        let tag = newTag()
        // The drip pauses half-way until the first partial image came out of the stream (however late the
        // coder queue runs on a loaded machine), then the rest follows.
        for try await event in downloader.events(
            for: server.url("/drip/image.png?chunk=4096&delay_ms=10&hold=\(tag)&tag=\(tag)"), options: .progressiveLoad) {
            switch event {
            case .progress: progress += 1
            case .partialImage(let image):
                partials += image.isIncomplete ? 1 : 0
                if partials == 1 { server.release(tag) }
            case .completed(let value): result = value
            }
        }
        #expect(progress > 2)
        #expect(partials > 0)
        #expect(result?.image?.width == 160)
        #expect(result?.data.count == 55916)
        #expect(result?.response?.statusCode == 200)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
@testable import OperationDownloader
import Testing

/// Which options make a transfer of their own and which each caller keeps for itself (Docs/Options.md, "Per
/// transfer or per caller"), on the scripted transport: callers that differ in an option that changes the transfer
/// never share one; callers that differ only in their own options share one and each gets what it asked for.
@Suite struct PerCallerOptionsTests {
    /// A scripted downloader without memory or HTTP cache (nothing of a test outlives it).
    private func harness(_ adjust: (inout ImageDownloaderConfiguration) -> Void = { _ in }) -> ScriptedHarness {
        ScriptedHarness {
            $0.httpCache = nil
            adjust(&$0)
        }
    }

    private static let png = ScriptedHarness.fixture("tiny.png")

    /// Plays a whole 200 with `body` on `transfer`.
    private func serve(_ transfer: ScriptedTransfer, _ body: Data = png) {
        transfer.respond(headers: ["Content-Type": "image/png", "Content-Length": "\(body.count)"])
        transfer.send(body)
        transfer.complete()
    }

    // MARK: - Options that change the transfer

    struct TransferCase: CustomTestStringConvertible, Sendable {
        let name: String
        /// Both callers have these.
        let shared: ImageDownloaderOptions
        /// The second caller adds this.
        let added: ImageDownloaderOptions
        var testDescription: String { name }
    }

    static let transferCases: [TransferCase] = [
        TransferCase(name: "useURLCache", shared: [], added: .useURLCache),
        TransferCase(name: "ignoreCachedResponse with useURLCache", shared: .useURLCache, added: .ignoreCachedResponse),
        TransferCase(name: "handleCookies", shared: [], added: .handleCookies),
        TransferCase(name: "allowInvalidSSLCertificates", shared: [], added: .allowInvalidSSLCertificates),
        // `.continueInBackground` is in CoalescingKeyTests only: a download with it would begin a background task
        // with whatever global provider a concurrently running test (LifecycleTests) has set.
    ]

    @Test(arguments: transferCases)
    func callersDifferingInATransferOptionGetATransferEach(_ option: TransferCase) async throws {
        let harness = harness()
        let (first, _) = harness.download(options: option.shared)
        let (second, _) = harness.download(options: option.shared.union(option.added))
        #expect(harness.downloader.currentDownloadCount == 2)
        let transfers = [try #require(await harness.transport.transfer(0)), try #require(await harness.transport.transfer(1))]
        // Each caller's own transfer: the one that asked for certificates not to be checked is the only one so sent.
        let insecure = transfers.map(\.request.allowsInvalidCertificates)
        #expect(insecure.filter { $0 }.count == (option.added == .allowInvalidSSLCertificates ? 1 : 0))
        for transfer in transfers { serve(transfer) }
        await first.completion()
        await second.completion()
        #expect(first.finals.count == 1 && first.final?.image?.width == 1)
        #expect(second.finals.count == 1 && second.final?.image?.width == 1)
        #expect(harness.transport.transfers.count == 2)
    }

    /// With the HTTP cache on, the request's cache policy decides what is read and sent: another transfer.
    @Test func callersWithTheHTTPCacheAndDifferentCachePoliciesGetATransferEach() async throws {
        let harness = harness()
        let url = ScriptedHarness.url()
        let reload = AsyncRecorder(), normal = AsyncRecorder()
        harness.downloader.downloadImage(
            with: URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData), options: .useURLCache,
            completed: reload.completed)
        harness.downloader.downloadImage(with: URLRequest(url: url), options: .useURLCache, completed: normal.completed)
        #expect(harness.downloader.currentDownloadCount == 2)
        serve(try #require(await harness.transport.transfer(0)))
        serve(try #require(await harness.transport.transfer(1)))
        await reload.completion()
        await normal.completion()
        #expect(reload.final?.image != nil && normal.final?.image != nil)
    }

    /// `.ignoreCachedResponse` does nothing without `.useURLCache` (nothing cached to compare with): no reason
    /// to split; and without the HTTP cache the request's cache policy is not used either.
    @Test func optionsWithoutEffectOnTheTransferDoNotSplitIt() async throws {
        let harness = harness()
        let url = ScriptedHarness.url()
        let plain = AsyncRecorder(), ignoring = AsyncRecorder(), reloading = AsyncRecorder()
        harness.downloader.downloadImage(url, completed: plain.completed)
        harness.downloader.downloadImage(url, options: .ignoreCachedResponse, completed: ignoring.completed)
        harness.downloader.downloadImage(
            with: URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData), completed: reloading.completed)
        #expect(harness.downloader.currentDownloadCount == 1)
        serve(try #require(await harness.transport.transfer(0)))
        for recorder in [plain, ignoring, reloading] { await recorder.completion() }
        #expect([plain, ignoring, reloading].allSatisfy { $0.final?.image?.width == 1 })
        #expect(harness.transport.transfers.count == 1)
    }

    // MARK: - Options each caller keeps

    struct CallerCase: CustomTestStringConvertible, Sendable {
        let name: String
        let options: ImageDownloaderOptions
        var testDescription: String { name }
    }

    static let callerCases: [CallerCase] = [
        CallerCase(name: "progressiveLoad", options: .progressiveLoad),
        CallerCase(name: "highPriority", options: .highPriority),
        CallerCase(name: "lowPriority", options: .lowPriority),
        CallerCase(name: "avoidDecodeImage", options: .avoidDecodeImage),
        CallerCase(name: "scaleDownLargeImages", options: .scaleDownLargeImages),
        CallerCase(name: "decodeFirstFrameOnly", options: .decodeFirstFrameOnly),
        CallerCase(name: "preloadAllFrames", options: .preloadAllFrames),
    ]

    @Test(arguments: callerCases)
    func callersDifferingOnlyInTheirOwnOptionsShareOneTransfer(_ option: CallerCase) async throws {
        let harness = harness()
        let (plain, _) = harness.download()
        let (other, _) = harness.download(options: option.options)
        #expect(harness.downloader.currentDownloadCount == 1)
        // One transfer answers both: a second operation would wait for a transfer nobody plays.
        serve(try #require(await harness.transport.transfer(0)))
        await plain.completion()
        await other.completion()
        #expect(plain.final?.image?.width == 1)
        if option.options == .avoidDecodeImage {
            #expect(other.final?.image == nil && other.final?.data == Self.png)
        } else {
            #expect(other.final?.image?.width == 1)
        }
        #expect(harness.transport.transfers.count == 1)
    }

    // MARK: - Partial images go only to the callers that asked

    private static let interlaced = ScriptedHarness.fixture("adam7.png")

    /// A progressive downloader whose coder counts the incremental decoders it makes.
    private func progressiveHarness() throws -> (ScriptedHarness, CountingCoder) {
        let coder = try #require(CountingCoder.wrapping(fixture: "adam7.png"))
        let harness = harness {
            $0.codersManager = TestCoders.manager(with: coder)
            $0.progressiveDecodingInterval = 0
        }
        return (harness, coder)
    }

    /// Sends `body` from `from` on, a chunk at a time, until `recorder` has a partial image (or the body ends).
    /// After each chunk the operation's coder queue and then the callback queue are drained, so a partial image
    /// the chunk produced has reached the recorder: no clock, no polling.
    private func sendUntilPartial(
        _ transfer: ScriptedTransfer, _ body: Data, from: Int, to recorder: AsyncRecorder, token: ImageDownloadToken?,
        harness: ScriptedHarness
    ) async throws {
        let operation = try #require(token?.operation as? ImageDownloaderOperation)
        let chunk = 1024
        var offset = from
        while offset < body.count - chunk, recorder.partials.isEmpty {
            transfer.send(body.subdata(in: offset..<offset + chunk))
            offset += chunk
            await drain(operation.coderQueue)
            await harness.drained()
        }
        transfer.send(body.subdata(in: offset..<body.count))
    }

    @Test func aCallerWithoutProgressiveLoadGetsNoPartialImagesFromAProgressiveTransfer() async throws {
        let (harness, coder) = try progressiveHarness()
        let body = Self.interlaced
        let (progressive, token) = harness.download(options: .progressiveLoad)
        let (plain, _) = harness.download()
        #expect(harness.downloader.currentDownloadCount == 1)
        let transfer = try #require(await harness.transport.transfer(0))
        transfer.respond(headers: ["Content-Type": "image/png", "Content-Length": "\(body.count)"])
        try await sendUntilPartial(transfer, body, from: 0, to: progressive, token: token, harness: harness)
        transfer.complete()
        await progressive.completion()
        await plain.completion()
        await harness.drained()
        #expect(!progressive.partials.isEmpty)
        #expect(progressive.partials.allSatisfy { $0.isIncomplete && $0.width == 160 })
        #expect(plain.partials.isEmpty)
        #expect(!plain.current.events.contains("partial"))
        #expect(progressive.final?.image?.width == 160 && plain.final?.image?.width == 160)
        // One variant: one incremental decoder, whose final image both callers get.
        #expect(coder.incrementalDecoders.count == 1)
        #expect(coder.oneShotDecodes.isEmpty)
    }

    @Test func aCallerWithProgressiveLoadJoiningAPlainTransferGetsPartialImages() async throws {
        let (harness, coder) = try progressiveHarness()
        let body = Self.interlaced
        let (plain, _) = harness.download()
        let transfer = try #require(await harness.transport.transfer(0))
        transfer.respond(headers: ["Content-Type": "image/png", "Content-Length": "\(body.count)"])
        let half = body.count / 2
        transfer.send(body.prefix(half))
        // Nobody asked for partial images so far: no incremental decoder.
        #expect(coder.incrementalDecoders.isEmpty)
        let (progressive, token) = harness.download(options: .progressiveLoad)
        #expect(harness.downloader.currentDownloadCount == 1)
        try await sendUntilPartial(transfer, body, from: half, to: progressive, token: token, harness: harness)
        transfer.complete()
        await progressive.completion()
        await plain.completion()
        await harness.drained()
        #expect(!progressive.partials.isEmpty)
        #expect(progressive.partials.allSatisfy { $0.isIncomplete })
        #expect(plain.partials.isEmpty)
        #expect(progressive.final?.image?.width == 160 && plain.final?.image?.width == 160)
        #expect(harness.transport.transfers.count == 1)
        // Its decoder started from the bytes received before it joined.
        #expect(coder.incrementalDecoders.count == 1)
    }

    @Test func aTransferNobodyWantsPartialImagesOfMakesNoIncrementalDecoder() async throws {
        let (harness, coder) = try progressiveHarness()
        let body = Self.interlaced
        let (first, _) = harness.download()
        let (second, _) = harness.download(context: .thumbnail(maxPixelSize: 40))
        let transfer = try #require(await harness.transport.transfer(0))
        transfer.respond(headers: ["Content-Type": "image/png", "Content-Length": "\(body.count)"])
        transfer.send(body, inChunks: 8)
        transfer.complete()
        await first.completion()
        await second.completion()
        await harness.drained()
        #expect(first.partials.isEmpty && second.partials.isEmpty)
        #expect(first.final?.image?.width == 160 && second.final?.image?.width == 40)
        #expect(coder.incrementalDecoders.isEmpty)
        #expect(coder.oneShotDecodes.count == 2)
    }
}

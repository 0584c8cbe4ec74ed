import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import OperationDownloader
import Testing

/// Issue 12, point 1 (Docs/Options.md): callers of one URL with different decoding options or transformers share ONE
/// request; each distinct variant is decoded once and shared by equal callers; each has its own memory-cache entry.
@Suite struct VariantTests {
    let server = FixtureServer.shared

    private static let thumbnail = ImageDownloaderContext(thumbnailPixelSize: CGSize(width: 40, height: 40))

    @Test(arguments: TestTransports.all)
    func callersWithDifferentThumbnailsShareOneRequestAndEachGetTheirOwnDecode(
        _ transport: ImageDownloaderTransport
    ) async throws {
        let coder = try #require(CountingCoder.wrapping(fixture: "image.png"))
        let cache = AutoPurgingImageCache()
        let (downloader, queue) = makeDownloader(transport) {
            $0.codersManager = TestCoders.manager(with: coder)
            $0.imageCache = cache
        }
        let tag = newTag()
        let url = server.url("/hold/\(tag)/image.png?tag=\(tag)")
        let full = (0..<2).map { _ in DownloadRecorder() }
        let small = (0..<2).map { _ in DownloadRecorder() }
        for recorder in full { downloader.downloadImage(url, completed: recorder.completed) }
        for recorder in small { downloader.downloadImage(url, context: Self.thumbnail, completed: recorder.completed) }
        server.release(tag)
        for recorder in full + small { await recorder.waitForCompletion() }
        await drain(queue)

        #expect(server.stats(tag: tag).count == 1)
        #expect(full.allSatisfy { $0.final?.image?.width == 160 && $0.final?.image?.height == 120 })
        #expect(small.allSatisfy { $0.final?.image?.width == 40 && $0.final?.image?.height == 30 })
        // Equal variants share one decode: two decodes for four callers.
        #expect(coder.oneShotDecodes.count == 2, "\(coder.oneShotDecodes)")

        // Each variant has its own memory-cache entry, and the lookup uses the caller's variant.
        let again = DownloadRecorder(), againSmall = DownloadRecorder()
        #expect(downloader.downloadImage(url, completed: again.completed) == nil)
        #expect(downloader.downloadImage(url, context: Self.thumbnail, completed: againSmall.completed) == nil)
        #expect(again.final?.image?.width == 160)
        #expect(againSmall.final?.image?.width == 40)
        #expect(cache.count == 2)
        #expect(server.stats(tag: tag).count == 1)
    }

    @Test(arguments: TestTransports.all)
    func aCachedThumbnailIsNeverServedToAFullSizeCaller(_ transport: ImageDownloaderTransport) async throws {
        let cache = AutoPurgingImageCache()
        let (downloader, _) = makeDownloader(transport) { $0.imageCache = cache }
        let tag = newTag()
        let url = server.url("/images/image.png?tag=\(tag)")
        let small = try await downloader.image(for: url, context: Self.thumbnail)
        #expect(small.image?.width == 40)
        let recorder = DownloadRecorder()
        let token = downloader.downloadImage(url, completed: recorder.completed)
        #expect(token != nil, "a full-size caller must not hit the thumbnail's cache entry")
        await recorder.waitForCompletion()
        #expect(recorder.final?.image?.width == 160)
        #expect(server.stats(tag: tag).count == 2)
    }

    @Test(arguments: TestTransports.all)
    func transformersRunPerCallerOnOneRequestAndAThrowingOneFailsOnlyItsCaller(
        _ transport: ImageDownloaderTransport
    ) async throws {
        let cache = AutoPurgingImageCache()
        let (downloader, queue) = makeDownloader(transport) { $0.imageCache = cache }
        let tag = newTag()
        let url = server.url("/hold/\(tag)/image.png?tag=\(tag)")
        let plain = DownloadRecorder(), cropped = DownloadRecorder(), failing = DownloadRecorder()
        downloader.downloadImage(url, completed: plain.completed)
        downloader.downloadImage(
            url, context: ImageDownloaderContext(transformer: TestTransformer.crop(10, 7)), completed: cropped.completed)
        let failure = TransformerFailure(reason: "no")
        downloader.downloadImage(
            url, context: ImageDownloaderContext(transformer: TestTransformer(key: "fails") { _ in throw failure }),
            completed: failing.completed)
        server.release(tag)
        for recorder in [plain, cropped, failing] { await recorder.waitForCompletion() }
        await drain(queue)

        #expect(server.stats(tag: tag).count == 1)
        #expect(plain.final?.image?.width == 160)
        #expect(cropped.final?.image?.width == 10 && cropped.final?.image?.height == 7)
        // Bad image data naming the transformer, with the error it threw inside.
        guard case .transformerFailed(let key, let thrown)? = failing.badImageDataReason else {
            Issue.record("got \(String(describing: failing.error))")
            return
        }
        #expect(key == "fails")
        #expect(thrown as? TransformerFailure == failure, "\(thrown)")
        #expect(failing.final?.image == nil)
        // Nothing cached for the failed variant: the plain and the cropped images only.
        #expect(cache.count == 2)
        let retry = DownloadRecorder()
        #expect(downloader.downloadImage(
            url, context: ImageDownloaderContext(transformer: TestTransformer(key: "fails") { _ in throw failure }),
            completed: retry.completed) != nil)
        await retry.waitForCompletion()
    }

    @Test(arguments: TestTransports.all)
    func aCallerJoiningDuringTheDownloadWithAnotherVariantGetsIt(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, queue) = makeDownloader(transport)
        let tag = newTag()
        // Paused half-way: the second caller joins with bytes already received.
        let url = server.url("/drip/image.png?chunk=4096&delay_ms=1&hold=\(tag)&tag=\(tag)")
        let first = DownloadRecorder(), joined = DownloadRecorder()
        downloader.downloadImage(url, progress: first.progress, completed: first.completed)
        await first.wait(timeout: 120) { $0.progress.contains { $0.0 > 0 } }
        downloader.downloadImage(url, context: Self.thumbnail, completed: joined.completed)
        server.release(tag)
        await first.waitForCompletion()
        await joined.waitForCompletion()
        await drain(queue)
        #expect(first.final?.image?.width == 160)
        #expect(joined.final?.image?.width == 40)
        #expect(server.stats(tag: tag).count == 1)
    }

    /// Progressive loads with two decoding variants: one incremental decoder per variant (fed from the bytes
    /// received so far when the second joins), partial images of each caller's own size, transformed.
    @Test(arguments: TestTransports.all)
    func progressiveLoadsDecodeEachVariantIncrementally(_ transport: ImageDownloaderTransport) async throws {
        let coder = try #require(CountingCoder.wrapping(fixture: "adam7.png"))
        let (downloader, queue) = makeDownloader(transport) {
            $0.codersManager = TestCoders.manager(with: coder)
            $0.progressiveDecodingInterval = 0
        }
        let tag = newTag()
        let url = server.url("/drip/adam7.png?chunk=4096&delay_ms=5&hold=\(tag)&tag=\(tag)")
        let full = DownloadRecorder(), small = DownloadRecorder(), cropped = DownloadRecorder()
        downloader.downloadImage(url, options: .progressiveLoad, completed: full.completed)
        downloader.downloadImage(url, options: .progressiveLoad, context: Self.thumbnail, completed: small.completed)
        await full.wait(timeout: 60) { !$0.partials.isEmpty }
        await small.wait(timeout: 60) { !$0.partials.isEmpty }
        downloader.downloadImage(
            url, options: .progressiveLoad, context: ImageDownloaderContext(transformer: TestTransformer.crop(16, 16)),
            completed: cropped.completed)
        server.release(tag)
        for recorder in [full, small, cropped] { await recorder.waitForCompletion() }
        await drain(queue)

        #expect(server.stats(tag: tag).count == 1)
        #expect(full.partials.allSatisfy { $0.width == 160 && $0.isIncomplete })
        #expect(small.partials.allSatisfy { $0.width == 40 && $0.isIncomplete })
        #expect(cropped.partials.allSatisfy { $0.width == 16 && $0.height == 16 && $0.isIncomplete })
        #expect(full.final?.image?.width == 160 && full.final?.image?.isIncomplete == false)
        #expect(small.final?.image?.width == 40)
        #expect(cropped.final?.image?.width == 16)
        // Two decoding variants (the transformer shares the full-size decode): two incremental decoders, no
        // one-shot decode.
        #expect(coder.incrementalDecoders.count == 2, "\(coder.incrementalDecoders)")
        #expect(coder.oneShotDecodes.isEmpty, "\(coder.oneShotDecodes)")
        let oneShot = try ImageCodersManager.shared.decode(FixtureServer.fixtureData("adam7.png"))
        #expect(full.final?.image?.pixels == oneShot.pixels)
    }

    /// `.avoidDecodeImage` is a variant too: such a caller gets the data beside one that gets an image.
    @Test(arguments: TestTransports.all)
    func aDataOnlyCallerAndAnImageCallerShareOneRequest(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, queue) = makeDownloader(transport)
        let tag = newTag()
        let url = server.url("/hold/\(tag)/tiny.png?tag=\(tag)")
        let dataOnly = DownloadRecorder(), image = DownloadRecorder()
        downloader.downloadImage(url, options: .avoidDecodeImage, completed: dataOnly.completed)
        downloader.downloadImage(url, completed: image.completed)
        server.release(tag)
        await dataOnly.waitForCompletion()
        await image.waitForCompletion()
        await drain(queue)
        #expect(dataOnly.final?.image == nil && dataOnly.final?.data?.count == 70)
        #expect(image.final?.image?.width == 1)
        #expect(server.stats(tag: tag).count == 1)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
@testable import OperationDownloader
import Testing

/// `ImageTarget`: one active download per target object (UIImageView+AFNetworking for any class), tested
/// with a plain Swift class against the fixture server. Widths identify the fixtures: tiny.png 1,
/// image.png 160, image@2x.png 320, placeholder 2.
@Suite struct ImageTargetTests {
    let server = FixtureServer.shared

    // MARK: - Memory cache and placeholder

    @Test func aCachedImageIsShownBeforeSetImageReturns() async throws {
        let (downloader, _) = makeDownloader()
        let tag = newTag()
        let url = server.url("/images/image.png?tag=\(tag)")
        let first = RecordingImageTarget(), firstDone = TargetCompletionRecorder()
        first.setImage(with: url, downloader: downloader, completed: firstDone.completed)
        await firstDone.wait()
        #expect(firstDone.success?.source == .network)
        #expect(first.image?.width == 160)

        let second = RecordingImageTarget(), secondDone = TargetCompletionRecorder()
        second.setImage(with: url, placeholder: placeholderImage, downloader: downloader, completed: secondDone.completed)
        // Before any waiting: shown and answered synchronously, with no placeholder flash.
        #expect(second.widths == [160])
        #expect(secondDone.count == 1)
        #expect(secondDone.success?.source == .memoryCache)
        #expect(secondDone.success?.data == nil)
        #expect(second.activeImageURL == nil)
        #expect(server.stats(tag: tag).count == 1)
    }

    @Test func thePlaceholderIsShownAtOnceThenReplacedByTheDownload() async throws {
        let (downloader, _) = makeDownloader()
        let tag = newTag()
        let url = server.url("/hold/\(tag)/image.png?tag=\(tag)")
        let target = RecordingImageTarget(), done = TargetCompletionRecorder()
        target.setImage(with: url, placeholder: placeholderImage, downloader: downloader, completed: done.completed)
        #expect(target.widths == [2])
        #expect(target.activeImageURL == url)
        #expect(done.count == 0)
        server.release(tag)
        await done.wait()
        #expect(target.widths == [2, 160])
        #expect(done.success?.image.width == 160)
        #expect(done.success?.data?.count == 55916)
        #expect(done.success?.url == url)
        #expect(done.success?.response?.statusCode == 200)
        #expect(target.activeImageURL == nil)
    }

    @Test func withoutAPlaceholderTheTargetIsClearedWhileLoading() async throws {
        let (downloader, _) = makeDownloader()
        let tag = newTag()
        let target = RecordingImageTarget(), done = TargetCompletionRecorder()
        target.setImage(with: server.url("/images/tiny.png?tag=\(tag)"), downloader: downloader, completed: done.completed)
        #expect(target.widths == [nil])
        await done.wait()
        #expect(target.widths == [nil, 1])
    }

    @Test func aFailureKeepsThePlaceholder() async throws {
        let (downloader, _) = makeDownloader()
        let target = RecordingImageTarget(), done = TargetCompletionRecorder()
        target.setImage(
            with: server.url("/status/404?tag=\(newTag())"), placeholder: placeholderImage, downloader: downloader,
            completed: done.completed)
        await done.wait()
        #expect(done.downloaderError?.caseName == "status404")
        #expect(target.widths == [2])
        #expect(target.activeImageURL == nil)
    }

    @Test func aNilURLShowsThePlaceholderAndFailsAtOnce() {
        let (downloader, _) = makeDownloader()
        let target = RecordingImageTarget(), done = TargetCompletionRecorder()
        target.setImage(with: nil, placeholder: placeholderImage, downloader: downloader, completed: done.completed)
        #expect(target.widths == [2])
        #expect(done.count == 1)
        #expect(done.downloaderError?.caseName == "invalidURL")
    }

    // MARK: - One active download per target

    @Test func theSameURLInFlightMakesOneRequest() async throws {
        let (downloader, _) = makeDownloader()
        let tag = newTag()
        let url = server.url("/hold/\(tag)/image.png?tag=\(tag)")
        let target = RecordingImageTarget()
        let recorders = (0..<50).map { _ in TargetCompletionRecorder() }
        for recorder in recorders {
            target.setImage(with: url, placeholder: placeholderImage, downloader: downloader, completed: recorder.completed)
        }
        await server.awaitRequests(tag: tag, count: 1)
        #expect(downloader.currentDownloadCount == 1)
        server.release(tag)
        for recorder in recorders { await recorder.wait() }
        #expect(recorders.allSatisfy { $0.count == 1 && $0.success?.image.width == 160 })
        // The joins showed nothing: one placeholder, one image.
        #expect(target.widths == [2, 160])
        #expect(server.stats(tag: tag).count == 1)
    }

    @Test func aDifferentURLCancelsThePreviousDownload() async throws {
        let (downloader, _) = makeDownloader()
        let oldTag = newTag(), newTagValue = newTag()
        let oldURL = server.url("/hold/\(oldTag)/image@2x.png?tag=\(oldTag)")
        let newURL = server.url("/hold/\(newTagValue)/image.png?tag=\(newTagValue)")
        let target = RecordingImageTarget()
        let oldDone = TargetCompletionRecorder(), newDone = TargetCompletionRecorder()
        target.setImage(with: oldURL, downloader: downloader, completed: oldDone.completed)
        await server.awaitRequests(tag: oldTag, count: 1)
        target.setImage(with: newURL, placeholder: placeholderImage, downloader: downloader, completed: newDone.completed)
        #expect(target.activeImageURL == newURL)
        await oldDone.wait()
        #expect(oldDone.wasCancelled)
        // The old request was aborted at the server (the client went away while it was held).
        let oldLog = await server.awaitRequests(tag: oldTag, count: 1, finished: true)
        #expect(oldLog.first?.aborted == true)
        server.release(oldTag)
        server.release(newTagValue)
        await newDone.wait()
        #expect(newDone.success?.image.width == 160)
        #expect(target.widths == [nil, 2, 160])
        #expect(oldDone.count == 1)
    }

    @Test func aLateResultForAnOldURLNeverOverwritesTheTarget() async throws {
        let (downloader, queue) = makeDownloader()
        let oldTag = newTag(), newTagValue = newTag()
        let target = RecordingImageTarget()
        let oldDone = TargetCompletionRecorder(), newDone = TargetCompletionRecorder()
        // Hold the callback queue so the old download's success is queued, undelivered, when the URL changes.
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        target.setImage(
            with: server.url("/images/image@2x.png?tag=\(oldTag)"), downloader: downloader, completed: oldDone.completed)
        await awaitIdle(downloader)  // finished; its answer is queued
        let newURL = server.url("/hold/\(newTagValue)/image.png?tag=\(newTagValue)")
        target.setImage(with: newURL, placeholder: placeholderImage, downloader: downloader, completed: newDone.completed)
        gate.signal()
        await oldDone.wait()
        await drain(queue)
        // The finished download was superseded before its answer ran: the caller hears `.cancelled`,
        // the target never shows the 320-wide image.
        #expect(oldDone.wasCancelled)
        #expect(target.widths == [nil, 2])
        server.release(newTagValue)
        await newDone.wait()
        #expect(target.widths == [nil, 2, 160])
    }

    @Test func rapidSwitchingShowsTheLastURLAndCancelsEverySupersededCaller() async throws {
        let (downloader, queue) = makeDownloader()
        let tag = newTag(), lastTag = newTag()
        let target = RecordingImageTarget()
        let switches = 300
        let recorders = (0..<switches).map { _ in TargetCompletionRecorder() }
        for (index, recorder) in recorders.enumerated() {
            let url = index == switches - 1
                ? server.url("/hold/\(lastTag)/image.png?tag=\(lastTag)")
                : server.url("/hold/\(tag)/tiny.png?tag=\(tag)&i=\(index)")
            target.setImage(with: url, placeholder: placeholderImage, downloader: downloader, completed: recorder.completed)
        }
        server.release(tag)
        server.release(lastTag)
        for recorder in recorders { await recorder.wait() }
        await drain(queue)
        #expect(recorders.allSatisfy { $0.count == 1 })
        #expect(recorders.dropLast().allSatisfy { $0.wasCancelled })
        #expect(recorders.last?.success?.image.width == 160)
        #expect(target.image?.width == 160)
        #expect(!target.widths.contains(1))
        #expect(target.widths.filter { $0 == 160 }.count == 1)
        await awaitIdle(downloader)
    }

    @Test func rapidSwitchingWithDownloadsCompletingMeanwhile() async throws {
        let (downloader, queue) = makeDownloader()
        let tag = newTag(), lastTag = newTag()
        let target = RecordingImageTarget()
        let switches = 300
        let recorders = (0..<switches).map { _ in TargetCompletionRecorder() }
        for (index, recorder) in recorders.enumerated() {
            // Fast responses race with the switching: some finish before they are superseded.
            let url = index == switches - 1
                ? server.url("/images/image.png?tag=\(lastTag)")
                : server.url("/images/tiny.png?tag=\(tag)&i=\(index)")
            target.setImage(with: url, downloader: downloader, completed: recorder.completed)
        }
        for recorder in recorders { await recorder.wait() }
        await drain(queue)
        #expect(recorders.allSatisfy { $0.count == 1 })
        // Each earlier caller either finished while it was the target's download, or was cancelled.
        #expect(recorders.dropLast().allSatisfy { $0.wasCancelled || $0.success?.image.width == 1 })
        #expect(recorders.last?.success?.image.width == 160)
        #expect(target.image?.width == 160)
        #expect(target.widths.last == 160)
        let shownTiny = target.widths.filter { $0 == 1 }.count
        let succeededTiny = recorders.dropLast().filter { $0.success != nil }.count
        #expect(shownTiny == succeededTiny)
    }

    @Test func switchingFromManyThreadsLeavesTheLastURL() async throws {
        let (downloader, queue) = makeDownloader()
        let tag = newTag(), lastTag = newTag()
        let target = RecordingImageTarget()
        let threads = 4, perThread = 100
        let recorders = (0..<(threads * perThread)).map { _ in TargetCompletionRecorder() }
        let urls = (0..<(threads * perThread)).map { server.url("/hold/\(tag)/tiny.png?tag=\(tag)&i=\($0)") }
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for step in 0..<perThread {
                let index = thread * perThread + step
                target.setImage(
                    with: urls[index], placeholder: placeholderImage, downloader: downloader,
                    completed: recorders[index].completed)
            }
        }
        let last = TargetCompletionRecorder()
        target.setImage(
            with: server.url("/hold/\(lastTag)/image.png?tag=\(lastTag)"), downloader: downloader,
            completed: last.completed)
        server.release(tag)
        server.release(lastTag)
        for recorder in recorders { await recorder.wait() }
        await last.wait()
        await drain(queue)
        #expect(recorders.allSatisfy { $0.count == 1 && $0.wasCancelled })
        #expect(last.success?.image.width == 160)
        #expect(target.image?.width == 160)
        #expect(!target.widths.contains(1))
    }

    @Test func cancelImageDownloadAnswersCancelledAndKeepsThePlaceholder() async throws {
        let (downloader, _) = makeDownloader()
        let tag = newTag()
        let target = RecordingImageTarget(), done = TargetCompletionRecorder()
        target.setImage(
            with: server.url("/hold/\(tag)/image.png?tag=\(tag)"), placeholder: placeholderImage,
            downloader: downloader, completed: done.completed)
        await server.awaitRequests(tag: tag, count: 1)
        target.cancelImageDownload()
        target.cancelImageDownload()  // nothing in flight: no effect
        #expect(target.activeImageURL == nil)
        await done.wait()
        #expect(done.wasCancelled)
        let log = await server.awaitRequests(tag: tag, count: 1, finished: true)
        #expect(log.first?.aborted == true)
        #expect(target.widths == [2])
        await awaitIdle(downloader)
    }

    // MARK: - Queues, partial images, shared downloader

    @Test func resultsAndDownloadedImagesArriveOnTheCallbackQueue() async throws {
        let callbackQueue = namedQueue("targets.callbacks.\(newTag())")
        let (downloader, _) = makeDownloader { $0.callbackQueue = callbackQueue }
        let target = RecordingImageTarget(), done = TargetCompletionRecorder()
        target.setImage(
            with: server.url("/images/tiny.png?tag=\(newTag())"), placeholder: placeholderImage,
            downloader: downloader, completed: done.completed)
        await done.wait()
        #expect(done.queueLabel == callbackQueue.label)
        #expect(target.displayQueueLabels.last == callbackQueue.label)

        // The target's own delivery queue wins over the downloader's; the context's wins over both.
        let paneQueue = namedQueue("targets.pane.\(newTag())")
        let pane = RecordingImageTarget(deliveryQueue: paneQueue), paneDone = TargetCompletionRecorder()
        pane.setImage(with: server.url("/images/tiny.png?tag=\(newTag())"), downloader: downloader, completed: paneDone.completed)
        await paneDone.wait()
        #expect(paneDone.queueLabel == paneQueue.label)
        #expect(pane.displayQueueLabels.last == paneQueue.label)

        let contextQueue = namedQueue("targets.context.\(newTag())")
        let other = RecordingImageTarget(deliveryQueue: paneQueue), otherDone = TargetCompletionRecorder()
        other.setImage(
            with: server.url("/images/tiny.png?tag=\(newTag())"), context: ImageDownloaderContext(callbackQueue: contextQueue),
            downloader: downloader, completed: otherDone.completed)
        await otherDone.wait()
        #expect(otherDone.queueLabel == contextQueue.label)
    }

    @Test func progressiveLoadShowsPartialImagesThenTheFinalOne() async throws {
        let (downloader, _) = makeDownloader {
            $0.codersManager = TestCoders.manager(with: HeaderPNGTestCoder())
            $0.progressiveDecodingInterval = 0
        }
        let tag = newTag()
        let target = RecordingImageTarget(), done = TargetCompletionRecorder()
        let progress = Locked(0)
        // The drip pauses half-way until the target has shown a partial image (placeholder + one more).
        target.setImage(
            with: server.url("/drip/image.png?chunk=2048&delay_ms=10&hold=\(tag)&tag=\(tag)"), placeholder: placeholderImage,
            options: .progressiveLoad, downloader: downloader,
            progress: { _, _, _ in progress.withLock { $0 += 1 } }, completed: done.completed)
        await target.waitForDisplays(2)
        server.release(tag)
        await done.wait()
        let shown = target.history
        let partials = shown.dropFirst().dropLast()
        #expect(shown.first??.width == 2)
        #expect(!partials.isEmpty)
        #expect(partials.allSatisfy { $0?.isIncomplete == true && $0?.width == 160 })
        #expect(shown.last??.isIncomplete == false)
        #expect(done.success?.image.isIncomplete == false)
        #expect(progress.current > 1)
    }

    @Test func sharedImageDownloaderIsSetPerTargetType() async throws {
        #expect(RecordingImageTarget.sharedImageDownloader === ImageDownloader.shared)
        let (downloader, _) = makeDownloader()
        SharedDownloaderTarget.sharedImageDownloader = downloader
        #expect(SharedDownloaderTarget.sharedImageDownloader === downloader)
        #expect(RecordingImageTarget.sharedImageDownloader === ImageDownloader.shared)

        let tag = newTag()
        let target = SharedDownloaderTarget(), done = TargetCompletionRecorder()
        target.setImage(with: server.url("/hold/\(tag)/tiny.png?tag=\(tag)"), completed: done.completed)
        #expect(downloader.currentDownloadCount == 1)
        server.release(tag)
        await done.wait()
        #expect(done.success?.image.width == 1)
        #expect(target.shown?.width == 1)
    }
}

/// A class written without image targets in mind (no stored download state) ...
final class RenderSlot: @unchecked Sendable {  // `lock` guards `rendered`
    private let lock = NSLock()
    private var stored: DecodedImage?
    var rendered: DecodedImage? { lock.withLock { stored } }
    func render(_ image: DecodedImage?) { lock.withLock { stored = image } }
}

/// ... made a target from outside.
extension RenderSlot: ImageTarget {
    func displayImage(_ image: DecodedImage?) { render(image) }
}

/// A weak reference that a `@Sendable` closure can read.
final class WeakReference<Value: AnyObject & Sendable>: Sendable {
    weak let value: Value?
    init(_ value: Value?) { self.value = value }
}

/// A second target type, for the per-type shared downloader.
private final class SharedDownloaderTarget: ImageTarget, @unchecked Sendable {  // `lock` guards `image`
    private let lock = NSLock()
    private var image: DecodedImage?
    func displayImage(_ image: DecodedImage?) { lock.withLock { self.image = image } }
    var shown: DecodedImage? { lock.withLock { image } }
}

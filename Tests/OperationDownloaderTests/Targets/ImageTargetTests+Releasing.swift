import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
@testable import OperationDownloader
import Testing

extension ImageTargetTests {
    // MARK: - Releasing targets

    @Test func aTargetReleasedMidDownloadReleasesEverything() async throws {
        let (downloader, _) = makeDownloader()
        let tag = newTag()
        let done = TargetCompletionRecorder()
        weak var weakTarget: RecordingImageTarget?
        let weakState: WeakReference<ImageTargetState>
        do {
            let target = RecordingImageTarget()
            weakTarget = target
            let started = Watched(false)
            target.setImage(
                with: server.url("/hold/\(tag)/image.png?tag=\(tag)"), placeholder: placeholderImage,
                downloader: downloader, progress: { _, _, _ in started.withLock { $0 = true } },
                completed: done.completed)
            weakState = WeakReference(ImageTargetRegistry.shared.existingState(for: target))
            #expect(weakState.value != nil)
            // Held at the server, start progress delivered: no callback will come until the hold ends.
            await server.awaitRequests(tag: tag, count: 1)
            await started.wait { $0 }
        }
        // Nothing the download holds keeps the target alive.
        #expect(weakTarget == nil)
        #expect(done.count == 0)
        // A sweep (also run as the table grows) cancels downloads nobody can show.
        ImageTargetRegistry.shared.sweepReleasedTargets()
        await done.wait()
        #expect(done.wasCancelled)
        let log = await server.awaitRequests(tag: tag, count: 1, finished: true)
        #expect(log.first?.aborted == true)
        await awaitIdle(downloader)
        // The per-target state went with it.
        #expect(await waitUntil { weakState.value == nil })
    }

    @Test func aTargetReleasedWhileBytesArriveCancelsItsDownloadByItself() async throws {
        let (downloader, _) = makeDownloader()
        let tag = newTag()
        let done = TargetCompletionRecorder()
        let progressed = Watched(0)
        weak var weakTarget: RecordingImageTarget?
        let weakState: WeakReference<ImageTargetState>
        do {
            let target = RecordingImageTarget()
            weakTarget = target
            // ~56 KB in 1 KB chunks every 2 s: minutes unless cancelled, even on a starved test process.
            target.setImage(
                with: server.url("/drip/image.png?chunk=1024&delay_ms=2000&tag=\(tag)"), downloader: downloader,
                progress: { received, _, _ in if received > 0 { progressed.withLock { $0 += 1 } } },
                completed: done.completed)
            weakState = WeakReference(ImageTargetRegistry.shared.existingState(for: target))
            await progressed.wait { $0 > 0 }
        }
        #expect(weakTarget == nil)
        // The next progress event finds the target gone and cancels.
        await done.wait()
        #expect(done.wasCancelled)
        let log = await server.awaitRequests(tag: tag, count: 1, finished: true)
        #expect(log.first?.aborted == true)
        #expect((log.first?.bytesSent ?? 0) < 55916)
        #expect(await waitUntil { weakState.value == nil })
        await awaitIdle(downloader)
    }

    @Test func aTargetReleasedAfterItsDownloadLeavesNothingBehind() async throws {
        let (downloader, _) = makeDownloader()
        weak var weakTarget: RecordingImageTarget?
        let weakState: WeakReference<ImageTargetState>
        let done = TargetCompletionRecorder()
        do {
            let target = RecordingImageTarget()
            weakTarget = target
            target.setImage(with: server.url("/images/tiny.png?tag=\(newTag())"), downloader: downloader, completed: done.completed)
            await done.wait()
            weakState = WeakReference(ImageTargetRegistry.shared.existingState(for: target))
            #expect(weakState.value?.hasActiveRequest == false)
        }
        #expect(weakTarget == nil)
        // The completion can reach the target before the operation has let go of the state (under the thread
        // sanitizer's slowdown it did): the sweep is judged once the downloader is idle.
        await awaitIdle(downloader)
        #expect(await waitUntil {
            ImageTargetRegistry.shared.sweepReleasedTargets()
            return weakState.value == nil
        })
    }

    @Test func manyShortLivedTargetsLeaveNoStateAndNoDownloads() async throws {
        let (downloader, _) = makeDownloader()
        let tag = newTag()
        let count = 300
        let recorders = (0..<count).map { _ in TargetCompletionRecorder() }
        var states: [WeakReference<ImageTargetState>] = []
        for (index, recorder) in recorders.enumerated() {
            let target = RecordingImageTarget()  // released at the end of this iteration
            target.setImage(
                with: server.url("/hold/\(tag)/tiny.png?tag=\(tag)&i=\(index)"), downloader: downloader,
                completed: recorder.completed)
            states.append(WeakReference(ImageTargetRegistry.shared.existingState(for: target)))
        }
        // Never released at the server: every download ends because its target is gone, with `.cancelled`: at its
        // next progress event, when a new target takes its freed address, or at a sweep (the table's growth makes
        // one; this is the last). A target released after its response's headers arrived has no further event
        // (under the thread sanitizer's slowdown some were): the sweep ends those.
        ImageTargetRegistry.shared.sweepReleasedTargets()
        for recorder in recorders { await recorder.wait() }
        #expect(recorders.allSatisfy { $0.count == 1 && $0.wasCancelled })
        await awaitIdle(downloader)
        ImageTargetRegistry.shared.sweepReleasedTargets()
        let frozen = states
        #expect(await waitUntil { frozen.allSatisfy { $0.value == nil } })
    }

    @Test func aClassConformingInAnExtensionWorks() async throws {
        let (downloader, _) = makeDownloader()
        let slot = RenderSlot(), done = TargetCompletionRecorder()
        slot.setImage(with: server.url("/images/tiny.png?tag=\(newTag())"), downloader: downloader, completed: done.completed)
        await done.wait()
        #expect(slot.rendered?.width == 1)
    }
}

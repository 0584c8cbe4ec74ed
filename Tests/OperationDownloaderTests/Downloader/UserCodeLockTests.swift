import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import OperationDownloader
import Testing

/// Issue 12, point 10: no lock of the downloader is held while user code runs. A custom operation class whose
/// overridden properties call back into the downloader used to deadlock (the join path read `isCancelled` and
/// set `queuePriority` under the downloader's lock).
@Suite struct UserCodeLockTests {
    let server = FixtureServer.shared

    @Test func aCustomOperationCallingBackIntoTheDownloaderNeverDeadlocks() async throws {
        let (downloader, _) = makeDownloader { $0.operationClass = ReentrantOperation.self }
        ReentrantOperation.downloader.withLock { $0 = downloader }
        defer { ReentrantOperation.downloader.withLock { $0 = nil } }
        let tag = newTag()
        let url = server.url("/hold/\(tag)/tiny.png?tag=\(tag)")
        let first = DownloadRecorder(), joined = DownloadRecorder()
        // Off the cooperative pool, so a deadlock fails this test instead of starving the others.
        let done = Watched(false)
        Thread.detachNewThread {
            downloader.downloadImage(url, completed: first.completed)
            downloader.downloadImage(url, options: .highPriority, completed: joined.completed)
            done.withLock { $0 = true }
        }
        await done.wait(timeout: 30, describe: { _ in "downloadImage deadlocked" }) { $0 }
        server.release(tag)
        await first.waitForCompletion()
        await joined.waitForCompletion()
        #expect(first.final?.image?.width == 1)
        #expect(joined.final?.image?.width == 1)
        #expect(server.stats(tag: tag).count == 1)
        #expect(ReentrantOperation.calls.current > 0)
    }
}

/// Reads the downloader (which takes its lock) from its overridden `isCancelled` and `queuePriority`.
final class ReentrantOperation: ImageDownloaderOperation, @unchecked Sendable {  // static state is lock-guarded
    static let downloader = Locked<ImageDownloader?>(nil)
    static let calls = Locked(0)

    private func callBack() {
        if let downloader = Self.downloader.current {
            _ = downloader.currentDownloadCount
            Self.calls.withLock { $0 += 1 }
        }
    }

    override var isCancelled: Bool {
        callBack()
        return super.isCancelled
    }

    override var queuePriority: Operation.QueuePriority {
        get { super.queuePriority }
        set {
            callBack()
            super.queuePriority = newValue
        }
    }
}

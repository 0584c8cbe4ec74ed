import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import Testing
@testable import OperationDownloader

/// Issue 20, point 3: when `imageDownloadStart` is posted on the URLSession transport, the operation's
/// `dataTask` exists and carries the download's priority (SDWebImage posts the start after `resume`, so its
/// observers read the task).
@Suite struct StartNotificationTests {
    let server = FixtureServer.shared

    struct Seen: Sendable, Equatable {
        var hasTask: Bool
        var priority: Float?
        var taskURL: String?
    }

    @Test(arguments: [
        (ImageDownloaderOptions(), URLSessionTask.defaultPriority),
        (ImageDownloaderOptions.highPriority, URLSessionTask.highPriority),
        (ImageDownloaderOptions.lowPriority, URLSessionTask.lowPriority),
    ])
    func theDataTaskAndItsPriorityAreThereAtTheStart(_ example: (options: ImageDownloaderOptions, priority: Float)) async throws {
        let (downloader, queue) = makeDownloader(.urlSession)
        let tag = newTag()
        let url = server.url("/images/tiny.png?tag=\(tag)")
        let seen = Locked<[Seen]>([])
        let observer = NotificationCenter.default.addObserver(forName: .imageDownloadStart, object: nil, queue: nil) { note in
            guard let operation = note.object as? any ImageDownloaderOperationProtocol,
                  operation.request?.url?.absoluteString.contains(tag) == true else { return }
            let task = operation.dataTask
            seen.withLock {
                $0.append(Seen(hasTask: task != nil, priority: task?.priority,
                               taskURL: task?.originalRequest?.url?.absoluteString))
            }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let recorder = DownloadRecorder()
        downloader.downloadImage(url, options: example.options, completed: recorder.completed)
        await recorder.waitForCompletion()
        await drain(queue)
        #expect(recorder.final?.image != nil, "got \(String(describing: recorder.error))")
        #expect(seen.current == [Seen(hasTask: true, priority: example.priority, taskURL: url.absoluteString)])
    }

    /// The task is made with the transfer, before `resume()`: a transfer cancelled before its resume ends
    /// that task (a suspended task would keep the session's `finishTasksAndInvalidate` waiting forever), and
    /// nothing is sent.
    @Test func aTransferCancelledBeforeItsResumeEndsItsTask() async throws {
        let transport = URLSessionTransport(configuration: URLSessionTransport.standaloneConfiguration(idleTimeout: 15))
        defer { transport.invalidate(cancellingTransfers: true) }
        let tag = newTag()
        let client = RecordingTransferClient()
        let transfer = transport.makeTransfer(
            TransferRequest(urlRequest: URLRequest(url: server.url("/images/tiny.png?tag=\(tag)")), priority: 0.75),
            client: client)
        let task = try #require((transfer as? URLSessionTransfer)?.dataTask)
        #expect(task.state == .suspended)
        #expect(task.priority == 0.75)
        transfer.cancel()
        #expect(await waitUntil { task.state == .completed }, "state \(task.state.rawValue)")
        transfer.resume()  // after the cancel: nothing starts
        #expect(task.state == .completed)
        #expect(client.events.isEmpty)
        #expect(server.requests(tag: tag).isEmpty)
    }
}

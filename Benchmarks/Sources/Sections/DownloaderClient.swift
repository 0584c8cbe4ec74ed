import Decoding
import Foundation
import OperationDownloader

/// Runs a batch of downloads through a fresh `ImageDownloader` (so no memory-cache hit carries over from an
/// earlier round) and waits for every completion.
enum DownloaderClient {
    struct Outcome {
        var failures: Int
        var firstError: String?
    }

    /// All URLs are handed to the downloader at once, as an app or crawler would; its queue runs
    /// `concurrency` at a time; `headers` go on every request. Returns nil when the batch did not finish within
    /// `timeout`.
    static func download(
        _ urls: [URL], options: ImageDownloaderOptions, concurrency: Int = 6, postsNotifications: Bool = true,
        headers: [String: String] = [:], timeout: TimeInterval = 600,
        configure: (inout ImageDownloaderConfiguration) -> Void = { _ in }
    ) -> Outcome? {
        var configuration = ImageDownloaderConfiguration()
        configuration.maxConcurrentDownloads = concurrency
        configuration.postsNotifications = postsNotifications
        configure(&configuration)
        let downloader = ImageDownloader(configuration: configuration)
        defer { downloader.invalidate(cancelPendingOperations: true) }
        for (field, value) in headers { downloader.setValue(value, forHTTPHeaderField: field) }
        let counter = CompletionCounter(expected: urls.count)
        for url in urls {
            downloader.downloadImage(url, options: options, completed: { image, data, error, finished in
                guard finished else { return }
                let failed = error != nil || data == nil || (!options.contains(.avoidDecodeImage) && image == nil)
                counter.complete(error: failed ? String(describing: error ?? BenchmarkError.failed("no image")) : nil)
            })
        }
        guard counter.wait(timeout: timeout) else { return nil }
        return counter.outcome
    }
}

/// Counts completions and wakes the waiter after the last one.
final class CompletionCounter: @unchecked Sendable {  // `lock` guards every var
    private let lock = NSLock()
    private var remaining: Int
    private var failures = 0
    private var firstError: String?
    private let done = DispatchSemaphore(value: 0)

    init(expected: Int) {
        remaining = expected
        if expected == 0 { done.signal() }
    }

    func complete(error: String?) {
        let last: Bool = lock.withLock {
            if let error {
                failures += 1
                if firstError == nil { firstError = error }
            }
            remaining -= 1
            return remaining == 0
        }
        if last { done.signal() }
    }

    func wait(timeout: TimeInterval) -> Bool {
        done.wait(timeout: .now() + timeout) == .success
    }

    var outcome: DownloaderClient.Outcome {
        lock.withLock { DownloaderClient.Outcome(failures: failures, firstError: firstError) }
    }
}

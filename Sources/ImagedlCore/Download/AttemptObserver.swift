import Foundation
import OperationDownloader

/// How many requests a failed download made and what its last attempt measured, for `--json`'s `attempts` and
/// `network` and the error message ("after 3 attempts").
///
/// A successful result carries its metrics (`ImageTargetResult.metrics`); a failure delivered through the
/// image-target API carries only the error. So this watches `imageDownloadStop`, whose object is the
/// operation: its `metrics` count the attempts made so far (`attemptCount`) and hold the last attempt's
/// figures, and the operation posts it after each attempt, the last one before answering its callers, on the
/// callback queue. Only URLs being tracked are recorded, so notifications from
/// other downloaders in the process cost a dictionary lookup.
final class AttemptObserver: @unchecked Sendable {  // `lock` guards `tracked`; `observer` is set once in init
    private struct Entry {
        var downloads: Int
        var metrics: ImageDownloadMetrics?
    }

    private let lock = NSLock()
    private var tracked: [String: Entry] = [:]
    private var observer: (any NSObjectProtocol)?

    init() {
        observer = NotificationCenter.default.addObserver(forName: .imageDownloadStop, object: nil, queue: nil) {
            [weak self] notification in
            guard let self, let operation = notification.object as? any ImageDownloaderOperationProtocol,
                  let key = operation.request?.url?.absoluteString else { return }
            let metrics = operation.metrics
            lock.withLock {
                if tracked[key] != nil { tracked[key]?.metrics = metrics }
            }
        }
    }

    deinit {
        if let observer { NotificationCenter.default.removeObserver(observer) }
    }

    /// A download of `url` begins (the same URL may be tracked several times at once).
    func track(_ url: URL) {
        lock.withLock { tracked[url.absoluteString, default: Entry(downloads: 0)].downloads += 1 }
    }

    /// A download of `url` ended: the metrics its operation last reported (nil when it never started), and stop
    /// tracking it once no other download of it is left.
    func finish(_ url: URL) -> ImageDownloadMetrics? {
        let key = url.absoluteString
        return lock.withLock {
            guard var entry = tracked[key] else { return nil }
            entry.downloads -= 1
            tracked[key] = entry.downloads > 0 ? entry : nil
            return entry.metrics
        }
    }
}

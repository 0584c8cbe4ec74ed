import Foundation
import OperationDownloader

/// How many requests a download made, for `--json`'s `attempts` when the download failed.
///
/// A successful result carries its metrics (`ImageTargetResult.metrics.attemptCount`); a failure delivered through
/// the image-target API carries only the error. So this watches `imageDownloadStop`, whose object is the
/// operation: its `metrics.attemptCount` counts the attempts made so far, and the operation posts it before
/// answering its callers, on the callback queue. Only URLs being tracked are recorded, so notifications from
/// other downloaders in the process cost a dictionary lookup.
final class AttemptObserver: @unchecked Sendable {  // `lock` guards `tracked`; `observer` is set once in init
    private struct Entry {
        var downloads: Int
        var attempts: Int?
    }

    private let lock = NSLock()
    private var tracked: [String: Entry] = [:]
    private var observer: (any NSObjectProtocol)?

    init() {
        observer = NotificationCenter.default.addObserver(forName: .imageDownloadStop, object: nil, queue: nil) {
            [weak self] notification in
            guard let self, let operation = notification.object as? any ImageDownloaderOperationProtocol,
                  let key = operation.request?.url?.absoluteString else { return }
            let attempts = operation.metrics?.attemptCount
            lock.withLock {
                if tracked[key] != nil { tracked[key]?.attempts = attempts }
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

    /// A download of `url` ended: the attempts its operation reported (nil when it never started), and stop
    /// tracking it once no other download of it is left.
    func finish(_ url: URL) -> Int? {
        let key = url.absoluteString
        return lock.withLock {
            guard var entry = tracked[key] else { return nil }
            entry.downloads -= 1
            tracked[key] = entry.downloads > 0 ? entry : nil
            return entry.attempts
        }
    }
}

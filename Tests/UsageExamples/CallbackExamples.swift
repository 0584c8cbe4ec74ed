// The examples of Docs/Usage.md, "Callbacks" and "Shared state in handlers" (see AsyncExamples.swift for how
// the doc quotes them).
import Decoding
import Foundation
import OperationDownloader
import Synchronization

// snippet: callbacks
/// The callback API, SDWebImage's shape, with both handlers' exact signatures.
@discardableResult
public func downloadWithCallbacks(
    _ url: URL, with downloader: ImageDownloader, done: @escaping @Sendable (Result<DecodedImage, any Error>) -> Void
) -> ImageDownloadToken? {
    downloader.downloadImage(
        url, options: [.progressiveLoad],
        progress: { (receivedSize: Int, expectedSize: Int, url: URL?) in
            // Bytes so far; expectedSize is -1 while unknown. Runs on the callback queue.
        },
        completed: { (image: DecodedImage?, data: Data?, error: (any Error)?, finished: Bool) in
            guard finished else { return }  // a partial image (.progressiveLoad): more calls follow
            // The one final call: an image, or an error (also for a cancel: ImageDownloaderError.cancelled).
            // With .avoidDecodeImage the image is nil and data holds the bytes.
            if let image {
                done(.success(image))
            } else if let error {
                done(.failure(error))
            }
        })
    // nil when the completion already ran, before downloadImage returned (memory-cache hit, invalid URL).
    // Otherwise token.cancel() cancels this caller; token.metrics stays readable after a failure.
}
// end snippet

// snippet: callbacks-trailing
/// Trailing closures: the first one binds to `progress:`, so the completion comes second, labelled.
public func downloadWithTrailingClosures(
    _ url: URL, with downloader: ImageDownloader,
    progress: @escaping @Sendable (Int) -> Void, done: @escaping @Sendable ((any Error)?) -> Void
) {
    downloader.downloadImage(url) { received, _, _ in
        progress(received)
    } completed: { _, _, error, finished in
        if finished { done(error) }
    }
}
// end snippet

// snippet: shared-state-mutex
/// Handlers run on the callback queue, not on your thread: state they share needs a lock. A `Mutex`
/// (Synchronization) keeps it `Sendable` and race-free under Swift 6, without `@unchecked`.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
public final class DownloadTally: Sendable {
    private let counts = Mutex((succeeded: 0, failed: 0, bytes: 0))

    public init() {}

    public var summary: (succeeded: Int, failed: Int, bytes: Int) { counts.withLock { $0 } }

    public func download(_ url: URL, with downloader: ImageDownloader, done: @escaping @Sendable () -> Void) {
        downloader.downloadImage(url, completed: { [self] _, data, error, finished in
            guard finished else { return }
            counts.withLock { counts in
                if error == nil {
                    counts.succeeded += 1
                    counts.bytes += data?.count ?? 0
                } else {
                    counts.failed += 1
                }
            }
            done()
        })
    }
}
// end snippet

// snippet: shared-state-actor
/// In async code an actor does the same job: every `await` on it is serialised.
public actor FailureLog {
    public private(set) var entries: [String] = []

    public init() {}

    public func download(_ url: URL, with downloader: ImageDownloader) async {
        if case .failure(let failure) = await downloader.imageResult(for: url) {
            entries.append("\(url.lastPathComponent): \(failure)")
        }
    }
}
// end snippet

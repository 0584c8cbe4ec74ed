import Foundation
import OperationDownloader
import Testing

/// Docs/Options.md's prefetching and retry contract as outside code spells it (no `@testable`): these lines must keep
/// compiling as written.
@Suite struct PrefetchContractTests {
    @Test func theContractCompilesAndRunsAsWritten() async {
        let (downloader, _) = makeDownloader()
        let prefetcher = ImagePrefetcher(downloader: downloader, maxConcurrentPrefetchCount: 3, options: [.lowPriority], context: nil)
        let _: ImagePrefetcher = ImagePrefetcher()
        let recorder = PrefetchRecorder()
        // Trailing closures, as callers of SDWebImagePrefetcher write them.
        let token: ImagePrefetchToken = prefetcher.prefetch([URL(string: "ftp://127.0.0.1/a.png")!]) { finished, total in
            recorder.progress(finished, total)
        } completed: { finished, skipped in
            recorder.completed(finished, skipped)
        }
        prefetcher.prefetch([])
        await recorder.waitForCompletion()
        #expect(recorder.result == "1/1")
        token.cancel()
        prefetcher.cancelPrefetching()

        var configuration = ImageDownloaderConfiguration()
        configuration.retryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: 4, initialDelay: 0.1, maximumDelay: 2)
        let context = ImageDownloaderContext(retryPolicy: .never)
        #expect(configuration.retryPolicy.maximumAttempts == 4)
        #expect(context.retryPolicy == .never && ImageDownloaderRetryPolicy.never.maximumAttempts == 1)
        #expect(ImageDownloadMetrics().attemptCount == 1)
    }
}

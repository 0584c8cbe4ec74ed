import Decoding
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OperationDownloader
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `imagedl URL...`: downloads every URL with one `ImageDownloader`, shows progress, writes outputs and
/// prints the summary. Ctrl-C cancels every download and exits 130.
///
/// With `--input`, URLs are streamed: an `InputFeeder` hands them over as earlier ones finish (at most
/// `inputWindow` in flight), each is reported when it ends and then forgotten, so memory stays flat over
/// millions of lines; the summary is a total instead of a per-URL table.
///
/// Each URL is loaded into its own `PreviewPane` through the image-target API (`setImage(with:)`), which
/// delivers partial and final images to the pane and the result to the completion.
///
/// Every callback (completion, progress, pane display, the redraw timer, SIGINT) runs on one serial queue
/// (the downloader's callback queue and each pane's delivery queue), so the records and the reporter need
/// no locks.
final class DownloadCommand: @unchecked Sendable {  // mutable state is touched only on `queue`
    private let options: DownloadOptions
    private let queue = DispatchQueue(label: "imagedl.download")
    private let done = DispatchSemaphore(value: 0)
    /// Unfinished URLs by position; finished ones too unless streaming (`--input`).
    private var records: [Int: DownloadRecord] = [:]
    private var keepsFinishedRecords = true
    /// Kept here because the target registry holds panes weakly: a released pane cancels its download.
    private var panes: [Int: PreviewPane] = [:]
    /// The last HTTP response seen per URL in flight, including failed ones (a failure result carries no response).
    private var responses: [URL: HTTPURLResponse] = [:]
    private var downloadsPerURL: [URL: Int] = [:]
    private let attemptObserver = AttemptObserver()
    private var nextIndex = 0
    private var inFlight = 0
    /// The most URLs in flight at once (for tests of `--input`'s bound).
    private(set) var peakInFlight = 0
    private var inputEnded = false
    private var failures = 0
    private var feeder: InputFeeder?
    private var interrupted = false
    private var ended = false
    private var reporter: (any DownloadReporter)?
    private var outputWriter: OutputFileWriter?
    /// This command's subscription to `InterruptSignal`.
    private var interruptSubscription: Int?

    private let customReporter: (any DownloadReporter)?
    /// The run's metrics (the summary's request times and hit ratio, `--metrics`) and log handler.
    let runMetrics: RunMetrics

    /// `reporter` replaces the usual choice (JSON, live terminal or plain lines), for tests.
    init(options: DownloadOptions, reporter: (any DownloadReporter)? = nil) {
        self.options = options
        customReporter = reporter
        runMetrics = RunMetrics(options: options)
    }

    /// Runs to completion (or Ctrl-C) and returns the exit status; `records` afterwards describe each URL.
    func run() -> ExitCode {
        if let folder = options.outputDirectory {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                Console.err("imagedl: cannot create --output folder \(folder): \(error.localizedDescription)\n")
                return .failure
            }
        }
        let httpCache: HTTPImageCache?
        do {
            httpCache = try options.makeHTTPCache()
        } catch {
            Console.err("imagedl: \(error)\n")
            return .failure
        }
        outputWriter = options.outputDirectory.map { OutputFileWriter(folder: $0) }
        var reader: URLLineReader?
        if let input = options.inputFile {
            do {
                reader = try URLLineReader(path: input)
            } catch {
                Console.err("imagedl: --input: \(error.description)\n")
                return .failure
            }
        }
        let downloader: ImageDownloader
        do {
            downloader = try makeDownloader(httpCache: httpCache)
        } catch {
            Console.err("imagedl: \(error)\n")
            return .failure
        }
        installInterruptHandler()
        queue.sync {
            let reporter = makeReporter()
            self.reporter = reporter
            if options.inputFile != nil {
                keepsFinishedRecords = false
                reporter.begin([])
                let feeder = InputFeeder(operands: options.urls, reader: reader, window: inputWindow, queue: queue) {
                    [weak self, weak downloader] item in
                    guard let self, let downloader else { return }
                    self.received(item, downloader: downloader)
                }
                self.feeder = feeder
                feeder.start()
            } else {
                let initial = options.urls.map(addRecord)
                reporter.begin(initial)
                for record in initial { start(record.index, with: downloader) }
                inputEnded = true
                if inFlight == 0 { endRun() }
            }
        }
        done.wait()
        feeder?.stop()
        if httpCache != nil && !queue.sync(execute: { interrupted }) {
            // Background revalidations (stale-while-revalidate) answered nobody yet: they end before the process
            // does, so the stale answers already printed are followed by the refreshed entries in the cache.
            // Bounded by a download's own limits (each fails after its idle timeout).
            let idle = DispatchSemaphore(value: 0)
            downloader.whenIdle { idle.signal() }
            _ = idle.wait(timeout: .now() + options.timeout * 2 + (options.maxTime ?? 0) + 5)
        }
        // 304 refreshes and copies into the folder tier are written behind the answers: they land before exit.
        httpCache?.waitForQueuedWrites()
        downloader.invalidate(cancelPendingOperations: true)
        if let problem = runMetrics.write() {
            Console.err(problem + "\n")
            return .failure
        }
        return queue.sync { () -> ExitCode in
            if interrupted { return .interrupted }
            return failures == 0 ? .success : .failure
        }
    }

    /// The records after `run()`, in command-line order (with `--input`: only those that never finished).
    var results: [DownloadRecord] { queue.sync { records.values.sorted { $0.index < $1.index } } }

    /// `--input`: how many URLs may be read ahead of those finished; enough to keep every connection busy.
    var inputWindow: Int { max(16, options.concurrency * 4) }

    // MARK: - Input (all on `queue`)

    private func addRecord(_ url: URL) -> DownloadRecord {
        let record = DownloadRecord(index: nextIndex, url: url)
        nextIndex += 1
        records[record.index] = record
        return record
    }

    private func received(_ item: InputFeeder.Item, downloader: ImageDownloader) {
        switch item {
        case .url(let url):
            guard !interrupted, !ended else { return }
            start(addRecord(url).index, with: downloader)
        case .invalid(let text, let line):
            Console.err("imagedl: --input line \(line): '\(text)' is not an http:// or https:// URL\n")
            failures += 1
            feeder?.slotFreed()
        case .failed(let why):
            Console.err("imagedl: --input: \(why)\n")
            failures += 1
            inputEnded = true
            if inFlight == 0 { endRun() }
        case .end:
            inputEnded = true
            if inFlight == 0 { endRun() }
        }
    }

    // MARK: - Setup

    func makeDownloader(httpCache: HTTPImageCache? = nil) throws -> ImageDownloader {
        var configuration = options.downloaderConfiguration(httpCache: httpCache)
        configuration.callbackQueue = queue
        runMetrics.configure(&configuration)
        // Streaming keeps no decoded images: the memory cache charges only pixel bytes, so a million small
        // images would hold hundreds of MB of entries it never purges (Docs/Benchmarks.md, imagedl --input).
        if options.inputFile != nil { configuration.imageCache = nil }
        return options.makeDownloader(configuration)
    }

    private func makeReporter() -> any DownloadReporter {
        if let customReporter { return customReporter }
        if options.json { return JSONReporter() }
        if options.inputFile != nil { return StreamingReporter(preview: options.preview) }
        if Terminal.stdoutIsTTY { return LiveReporter(preview: options.preview, queue: queue) }
        return PlainReporter(preview: options.preview)
    }

    private var downloaderOptions: ImageDownloaderOptions {
        var set = options.requestOptions
        if options.progressive { set.insert(.progressiveLoad) }
        return set
    }

    /// The context for `url`: the thumbnail size, and a response modifier that only records the response,
    /// so that a failure can still say which HTTP status and MIME type the server sent.
    private func context(for url: URL) -> ImageDownloaderContext {
        var context = ImageDownloaderContext()
        if let thumbnail = options.thumbnail {
            context.thumbnailPixelSize = CGSize(width: thumbnail.width, height: thumbnail.height)
        }
        context.responseModifier = ImageDownloaderResponseModifierBlock { [weak self] response in
            if let self, let http = response as? HTTPURLResponse {
                // Runs on a session queue; the completion that reads it is queued after this on `queue`.
                self.queue.async { self.responses[url] = http }
            }
            return response
        }
        return context
    }

    // MARK: - One download (all on `queue`)

    private func start(_ index: Int, with downloader: ImageDownloader) {
        guard let url = records[index]?.url else { return }
        inFlight += 1
        peakInFlight = max(peakInFlight, inFlight)
        downloadsPerURL[url, default: 0] += 1
        attemptObserver.track(url)
        let pane = PreviewPane(index: index, command: self, queue: queue)
        panes[index] = pane
        // Progress, partial images and the completion all arrive on `queue` (the pane's delivery queue);
        // a memory-cache hit completes inside this call, which also runs on `queue`.
        pane.setImage(
            with: url, options: downloaderOptions, context: context(for: url), downloader: downloader,
            progress: { received, expected, _ in self.progressed(index, received: received, expected: expected) },
            completed: { result in self.completed(index, result: result) })
    }

    /// `displayImage(_:)` of pane `index`: the placeholder (nil), a partial image, then the final image.
    func pane(_ index: Int, displays image: DecodedImage?) {
        guard options.preview, var record = records[index], !record.isFinished else { return }
        record.image = image
        records[index] = record
        reporter?.update(record)
    }

    private func progressed(_ index: Int, received: Int, expected: Int) {
        guard var record = records[index], !record.isFinished else { return }
        if record.state == .waiting {
            record.state = .downloading
            record.startedAt = Clock.now
        }
        record.received = max(record.received, received)
        record.expected = expected
        records[index] = record
        reporter?.update(record)
    }

    private func completed(_ index: Int, result: Result<ImageTargetResult, any Error>) {
        guard var record = records[index], !record.isFinished else { return }
        let now = Clock.now
        let cancelled = if case .failure(let error) = result { Self.isCancellation(error) } else { false }
        // A download cancelled while queued never started: its time stays "-".
        if record.startedAt == nil && !cancelled { record.startedAt = now }
        record.finishedAt = now
        panes[index] = nil
        let observed = attemptObserver.finish(record.url)
        switch result {
        case .failure(let error):
            // The last response's MIME type only: an error page served as the image says so.
            record.fail(with: error, cancelled: cancelled, observed: observed, mimeType: responses[record.url]?.mimeType)
        case .success(let loaded):
            record.finish(with: loaded, observed: observed, lastResponse: responses[record.url])
            if !options.preview { record.image = nil }
            if var writer = outputWriter {
                switch writer.save(loaded.image, data: loaded.data, for: record.url, asPNG: options.writePNG) {
                case .success(let path): record.savedTo = path
                case .failure(let failure):
                    record.state = .failed
                    record.error = failure.description
                }
                outputWriter = writer
            }
        }
        if record.received == 0, let bytes = record.bytes { record.received = bytes }
        if record.state != .succeeded { failures += 1 }
        records[index] = keepsFinishedRecords ? record : nil
        reporter?.finished(record)
        downloadEnded(record.url)
    }

    /// Bookkeeping once a URL has been reported: its slot, its per-URL state, and the end of the run.
    private func downloadEnded(_ url: URL) {
        inFlight -= 1
        let left = (downloadsPerURL[url] ?? 1) - 1
        downloadsPerURL[url] = left > 0 ? left : nil
        if left <= 0 { responses[url] = nil }
        feeder?.slotFreed()
        if inputEnded && inFlight == 0 { endRun() }
    }

    private func endRun() {
        guard !ended else { return }
        ended = true
        if let interruptSubscription { InterruptSignal.shared.unsubscribe(interruptSubscription) }
        feeder?.stop()
        reporter?.end(records.values.sorted { $0.index < $1.index }, interrupted: interrupted)
        if !options.json, let line = runMetrics.summaryLine() { Console.out(line + "\n") }
        done.signal()
    }

    // MARK: - Ctrl-C

    private func installInterruptHandler() {
        let queue = self.queue
        weak let command = self
        let subscription = InterruptSignal.shared.subscribe { queue.async { command?.interrupt() } }
        queue.sync { interruptSubscription = subscription }
    }

    private func interrupt() {
        if interrupted {
            // A second Ctrl-C: leave at once, but never with a hidden cursor.
            Console.out(Terminal.showCursor)
            exit(ExitCode.interrupted.rawValue)
        }
        interrupted = true
        inputEnded = true
        feeder?.stop()
        // Each cancelled pane's completion reports `.cancelled`; downloads already finished have no pane.
        for pane in panes.values { pane.cancelImageDownload() }
        if inFlight == 0 { endRun() }  // nothing to wait for (say, --input waiting on a silent pipe)
        // Cancelled downloads report back on this queue; do not wait for stragglers for long.
        queue.asyncAfter(deadline: .now() + 2) { [weak self] in self?.endRun() }
    }

    // MARK: - Errors

    private static func isCancellation(_ error: any Error) -> Bool {
        if let error = error as? ImageDownloaderError, case .cancelled = error { return true }
        if let error = error as? URLError, error.code == .cancelled { return true }
        return false
    }
}

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
    private var records: [DownloadRecord] = []
    /// Kept here because the target registry holds panes weakly: a released pane cancels its download.
    private var panes: [Int: PreviewPane] = [:]
    /// The last HTTP response seen per URL, including failed ones (a failure result carries no response).
    private var responses: [URL: HTTPURLResponse] = [:]
    private var remaining = 0
    private var interrupted = false
    private var ended = false
    private var reporter: (any DownloadReporter)?
    private var usedOutputNames: Set<String> = []
    private var signalSource: (any DispatchSourceSignal)?

    private let customReporter: (any DownloadReporter)?

    /// `reporter` replaces the usual choice (JSON, live terminal or plain lines), for tests.
    init(options: DownloadOptions, reporter: (any DownloadReporter)? = nil) {
        self.options = options
        customReporter = reporter
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
        if let folder = options.httpCacheDirectory {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                Console.err("imagedl: cannot create --http-cache folder \(folder): \(error.localizedDescription)\n")
                return .failure
            }
        }
        let downloader: ImageDownloader
        do {
            downloader = try makeDownloader()
        } catch {
            Console.err("imagedl: \(error)\n")
            return .failure
        }
        installInterruptHandler()
        queue.sync {
            records = options.urls.enumerated().map { DownloadRecord(index: $0.offset, url: $0.element) }
            remaining = records.count
            let reporter = makeReporter()
            self.reporter = reporter
            reporter.begin(records)
            for record in records { start(record.index, with: downloader) }
            if remaining == 0 { endRun() }
        }
        done.wait()
        downloader.invalidate(cancelPendingOperations: true)
        return queue.sync { () -> ExitCode in
            if interrupted { return .interrupted }
            return records.allSatisfy { $0.state == .succeeded } ? .success : .failure
        }
    }

    /// The records after `run()`, in command-line order.
    var results: [DownloadRecord] { queue.sync { records } }

    // MARK: - Setup

    private func makeDownloader() throws -> ImageDownloader {
        var configuration = ImageDownloaderConfiguration()
        configuration.maxConcurrentDownloads = options.concurrency
        configuration.downloadTimeout = options.timeout
        configuration.executionOrder = options.lifo ? .lifo : .fifo
        configuration.username = options.user
        configuration.password = options.password
        configuration.callbackQueue = queue
        // Only the folder the user named: without --http-cache nothing is read from or written to disk.
        configuration.httpCache = options.httpCacheDirectory.map {
            HTTPImageCache(directory: URL(fileURLWithPath: $0, isDirectory: true))
        }
        let downloader = ImageDownloader(configuration: configuration)
        for header in options.headers {
            downloader.setValue(header.value, forHTTPHeaderField: header.name)
        }
        return downloader
    }

    private func makeReporter() -> any DownloadReporter {
        if let customReporter { return customReporter }
        if options.json { return JSONReporter() }
        if Terminal.stdoutIsTTY { return LiveReporter(preview: options.preview, queue: queue) }
        return PlainReporter(preview: options.preview)
    }

    private var downloaderOptions: ImageDownloaderOptions {
        var set: ImageDownloaderOptions = []
        if options.progressive { set.insert(.progressiveLoad) }
        if options.httpCacheDirectory != nil { set.insert(.useURLCache) }
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
        let url = records[index].url
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
        guard options.preview, records.indices.contains(index), !records[index].isFinished else { return }
        records[index].image = image
        reporter?.update(records[index])
    }

    private func progressed(_ index: Int, received: Int, expected: Int) {
        guard records.indices.contains(index), !records[index].isFinished else { return }
        if records[index].state == .waiting {
            records[index].state = .downloading
            records[index].startedAt = Clock.now
        }
        records[index].received = max(records[index].received, received)
        records[index].expected = expected
        reporter?.update(records[index])
    }

    private func completed(_ index: Int, result: Result<ImageTargetResult, any Error>) {
        guard records.indices.contains(index), !records[index].isFinished else { return }
        var record = records[index]
        let now = Clock.now
        let cancelled = if case .failure(let error) = result { Self.isCancellation(error) } else { false }
        // A download cancelled while queued never started: its time stays "-".
        if record.startedAt == nil && !cancelled { record.startedAt = now }
        record.finishedAt = now
        panes[index] = nil
        switch result {
        case .failure(let error):
            let response = responses[record.url]
            record.httpStatus = response?.statusCode
            record.state = cancelled ? .cancelled : .failed
            record.error = describe(error, mimeType: response?.mimeType)
        case .success(let loaded):
            let image = loaded.image
            record.httpStatus = (loaded.response ?? responses[record.url])?.statusCode
            record.state = .succeeded
            record.format = image.format
            record.width = image.width
            record.height = image.height
            record.frames = max(1, image.frames.count)
            record.bytes = loaded.data?.count
            record.image = options.preview ? image : nil
            record.cacheResult = Self.cacheResult(loaded)
            if let failure = save(record: record, image: image, data: loaded.data) {
                record.state = .failed
                record.error = failure
            } else if let folder = options.outputDirectory {
                record.savedTo = folder
            }
        }
        if record.received == 0, let bytes = record.bytes { record.received = bytes }
        records[index] = record
        reporter?.finished(record)
        remaining -= 1
        if remaining == 0 { endRun() }
    }

    /// Writes the original bytes, or a PNG with `--png`; returns an error line, or nil.
    private func save(record: DownloadRecord, image: DecodedImage, data: Data?) -> String? {
        guard let folder = options.outputDirectory else { return nil }
        let base = OutputNaming.baseName(for: record.url)
        do {
            let bytes: Data
            let name: String
            if options.writePNG {
                bytes = try ImageCodersManager.shared.encode(image, format: .png)
                name = OutputNaming.uniqueName(base: base, extension: "png", used: &usedOutputNames)
            } else {
                guard let data else { return "no data to write" }
                bytes = data
                name = OutputNaming.uniqueName(base: base, extension: image.format.fileExtension ?? "bin", used: &usedOutputNames)
            }
            let path = URL(fileURLWithPath: folder, isDirectory: true).appendingPathComponent(name)
            try bytes.write(to: path)
            return nil
        } catch let error as ImageDecodingError where error == .unsupportedFormat {
            return "cannot write PNG: no PNG encoder in this build"
        } catch {
            return "cannot write output: \(error.localizedDescription)"
        }
    }

    private func endRun() {
        guard !ended else { return }
        ended = true
        signalSource?.cancel()
        reporter?.end(records, interrupted: interrupted)
        done.signal()
    }

    // MARK: - Ctrl-C

    private func installInterruptHandler() {
        signal(SIGINT, SIG_IGN)  // delivered through the dispatch source instead of killing the process
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: queue)
        source.setEventHandler { [weak self] in self?.interrupt() }
        source.resume()
        signalSource = source
    }

    private func interrupt() {
        if interrupted {
            // A second Ctrl-C: leave at once, but never with a hidden cursor.
            Console.out(Terminal.showCursor)
            exit(ExitCode.interrupted.rawValue)
        }
        interrupted = true
        // Each cancelled pane's completion reports `.cancelled`; downloads already finished have no pane.
        for pane in panes.values { pane.cancelImageDownload() }
        // Cancelled downloads report back on this queue; do not wait for stragglers for long.
        queue.asyncAfter(deadline: .now() + 2) { [weak self] in self?.endRun() }
    }

    /// The image came from the memory cache, or its bytes from the HTTP cache (fresh, stale, or revalidated by
    /// a 304 so that no body was transferred); nil when the server sent them.
    private static func cacheResult(_ result: ImageTargetResult) -> DownloadRecord.CacheResult? {
        if result.source == .memoryCache { return .memory }
        switch result.metrics?.source {
        case .httpCache: return result.metrics?.servedStale == true ? .stale : .hit
        case .revalidatedHTTPCache: return .revalidated
        case .network, nil: return nil
        }
    }

    // MARK: - Errors

    private static func isCancellation(_ error: any Error) -> Bool {
        if let error = error as? ImageDownloaderError, case .cancelled = error { return true }
        if let error = error as? URLError, error.code == .cancelled { return true }
        return false
    }

    /// One short line per error: "HTTP 404 Not Found", "timed out after 2 s", "connection refused", ….
    private func describe(_ error: any Error, mimeType: String? = nil) -> String {
        if let error = error as? ImageDownloaderError {
            switch error {
            case .badImageData where mimeType.map({ !$0.lowercased().hasPrefix("image/") }) ?? false:
                // The usual cause: an error or login page served with status 200.
                return "not an image (the server sent \(mimeType ?? "?"))"
            case .badImageData(let why) where why == ImageDecodingError.unsupportedFormat.description:
                return "no decoder for \(mimeType ?? "this format") in this build"
            case .invalidDownloadStatusCode(let code):
                return "HTTP \(code) \(HTTPURLResponse.localizedString(forStatusCode: code))"
            case .network(let urlError):
                return describe(urlError)
            case .cancelled:
                return "cancelled"
            default:
                return String(describing: error)
            }
        }
        if let error = error as? URLError {
            switch error.code {
            case .timedOut: return "timed out after \(Formatting.seconds(options.timeout))"
            case .cannotConnectToHost: return "connection refused"
            case .cannotFindHost: return "host not found"
            case .notConnectedToInternet: return "not connected to the internet"
            case .cancelled: return "cancelled"
            case .networkConnectionLost: return "connection lost"
            default: return "network error \(error.code.rawValue): \(error.localizedDescription)"
            }
        }
        if let error = error as? ImageDecodingError { return error.description }
        return String(describing: error)
    }
}

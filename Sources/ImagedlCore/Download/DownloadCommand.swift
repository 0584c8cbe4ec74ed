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
/// Every callback (downloader completion, progress, the redraw timer, SIGINT) is funnelled onto one serial
/// queue, so the records and the reporter need no locks.
final class DownloadCommand: @unchecked Sendable {  // mutable state is touched only on `queue`
    private let options: DownloadOptions
    private let queue = DispatchQueue(label: "imagedl.download")
    private let done = DispatchSemaphore(value: 0)
    private var records: [DownloadRecord] = []
    private var tokens: [Int: ImageDownloadToken] = [:]
    private var remaining = 0
    private var interrupted = false
    private var ended = false
    private var reporter: (any DownloadReporter)?
    private var downloader: ImageDownloader?
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
        let downloader: ImageDownloader
        do {
            downloader = try makeDownloader()
        } catch {
            Console.err("imagedl: \(error)\n")
            return .failure
        }
        installInterruptHandler()
        queue.sync {
            self.downloader = downloader
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
        return set
    }

    private var context: ImageDownloaderContext {
        var context = ImageDownloaderContext()
        if let thumbnail = options.thumbnail {
            context.thumbnailPixelSize = CGSize(width: thumbnail.width, height: thumbnail.height)
        }
        return context
    }

    // MARK: - One download (all on `queue`)

    private func start(_ index: Int, with downloader: ImageDownloader) {
        let url = records[index].url
        let token = downloader.downloadImage(
            url, options: downloaderOptions, context: context,
            progress: { received, expected, _ in
                // Progress may arrive on the downloader's own queues: hop to ours.
                self.queue.async { self.progressed(index, received: received, expected: expected) }
            },
            completed: { image, data, error, finished in
                self.queue.async { self.completed(index, image: image, data: data, error: error, finished: finished) }
            })
        if let token { tokens[index] = token }
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

    private func completed(_ index: Int, image: DecodedImage?, data: Data?, error: (any Error)?, finished: Bool) {
        guard records.indices.contains(index), !records[index].isFinished else { return }
        var record = records[index]
        if !finished {
            // A progressive partial image.
            if let image, options.preview {
                record.image = image
                records[index] = record
                reporter?.update(record)
            }
            return
        }
        let now = Clock.now
        // A download cancelled while queued never started: its time stays "-".
        if record.startedAt == nil && !(error.map(Self.isCancellation) ?? false) { record.startedAt = now }
        record.finishedAt = now
        let token = tokens.removeValue(forKey: index)
        let response = token?.response as? HTTPURLResponse
        record.httpStatus = response?.statusCode
        if let error {
            record.state = Self.isCancellation(error) ? .cancelled : .failed
            record.error = describe(error, mimeType: response?.mimeType)
        } else if let image {
            record.state = .succeeded
            record.format = image.format
            record.width = image.width
            record.height = image.height
            record.frames = max(1, image.frames.count)
            record.bytes = data?.count
            record.image = options.preview ? image : nil
            // No token: answered from the memory cache without any network request.
            record.cacheHit = token == nil
            if let failure = save(record: record, image: image, data: data) {
                record.state = .failed
                record.error = failure
            } else if let folder = options.outputDirectory {
                record.savedTo = folder
            }
        } else {
            record.state = .failed
            record.error = "no image"
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
        downloader?.cancelAllDownloads()
        // Cancelled downloads report back on this queue; do not wait for stragglers for long.
        queue.asyncAfter(deadline: .now() + 2) { [weak self] in self?.endRun() }
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

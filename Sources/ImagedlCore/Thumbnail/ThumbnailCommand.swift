import Decoding
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OperationDownloader

/// `imagedl thumbnail FILE|URL... --size WxH --output DIR`: one thumbnail file per input.
///
/// Files are read by the workers; URLs are downloaded (bytes only, through `ImageDownloader` with the
/// download command's network options) and queued as they arrive. `concurrency` worker threads (default:
/// one per core) run `ThumbnailPipeline`, so every core is busy and memory stays bounded by that many
/// images in flight. Output names come from the inputs' names, made unique before any work starts.
final class ThumbnailCommand: Sendable {
    let options: ThumbnailOptions
    private let reporter: any ThumbnailReporter
    private let pipeline: ThumbnailPipeline
    private let results: ThumbnailResults
    /// The URL inputs' metrics (`--metrics`) and log handler (`--verbose`).
    private let runMetrics: RunMetrics

    /// `reporter` replaces the usual choice (JSON, live terminal or plain lines), for tests.
    init(options: ThumbnailOptions, reporter: (any ThumbnailReporter)? = nil, coders: ImageCodersManager = .shared) {
        self.options = options
        self.reporter = reporter ?? (options.json ? ThumbnailJSONReporter(format: options.format)
            : ThumbnailLineReporter(live: Terminal.stdoutIsTTY))
        pipeline = ThumbnailPipeline(options: options, coders: coders)
        results = ThumbnailResults(Self.plan(options))
        runMetrics = RunMetrics(options: options.network)
    }

    /// The records after `run()`, in input order.
    var records: [ThumbnailRecord] { results.all }

    func run() -> ExitCode {
        if let reason = Self.encoderUnavailableReason(options.format, coders: pipeline.coders) {
            Console.err("imagedl: thumbnail --format \(options.format.rawValue): \(reason)\n")
            return .failure
        }
        do {
            try FileManager.default.createDirectory(atPath: options.outputDirectory, withIntermediateDirectories: true)
        } catch {
            Console.err("imagedl: cannot create --output folder \(options.outputDirectory): \(error.localizedDescription)\n")
            return .failure
        }
        let records = results.all
        let queue = ThumbnailJobQueue(expected: records.count)
        let started = DispatchTime.now().uptimeNanoseconds
        reporter.begin(total: records.count)
        var urls: [(Int, URL)] = []
        for record in records {
            if let url = Self.url(record.input) {
                urls.append((record.index, url))
            } else {
                queue.push(.file(index: record.index, path: record.input))
            }
        }
        let downloader: ImageDownloader?
        do {
            if urls.isEmpty {
                downloader = nil
            } else {
                var configuration = options.network.downloaderConfiguration(httpCache: try options.network.makeHTTPCache())
                runMetrics.configure(&configuration)
                downloader = options.network.makeDownloader(configuration)
            }
        } catch {
            for (index, _) in urls { queue.push(.failure(index: index, "cannot set up downloads: \(error)")) }
            downloader = nil
        }
        if let downloader {
            for (index, url) in urls { fetch(url, index: index, with: downloader, into: queue) }
        }
        runWorkers(count: min(options.concurrency, max(1, records.count)), queue: queue)
        downloader?.invalidate(cancelPendingOperations: true)
        if let problem = runMetrics.write() { Console.err(problem + "\n") }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds &- started) / 1e9
        let finished = results.all
        reporter.end(finished, seconds: seconds)
        return finished.allSatisfy(\.succeeded) ? .success : .failure
    }

    /// Why AVIF cannot be written here (libavif, or an AV1 encoder in it, is missing), or nil: said once, before
    /// any work, rather than once per thumbnail. (The other formats' encoders report per thumbnail.)
    static func encoderUnavailableReason(_ format: ThumbnailOptions.Format, coders: ImageCodersManager) -> String? {
        guard format == .avif else { return nil }
        switch coders.coders.reversed().first(where: { $0.canEncode(.avif) }) {
        case nil: return "no AVIF encoder in this build"
        case let avif as AVIFCoder: return avif.encoderUnavailableReason
        default: return nil
        }
    }

    // MARK: - Work

    private func runWorkers(count: Int, queue: ThumbnailJobQueue) {
        let group = DispatchGroup()
        for _ in 0..<count {
            group.enter()
            let thread = Thread { [self] in
                while let job = queue.next() { process(job) }
                group.leave()
            }
            thread.name = "imagedl.thumbnail"
            thread.start()
        }
        group.wait()
    }

    private func process(_ job: ThumbnailJobQueue.Job) {
        let record: ThumbnailRecord
        switch job.loaded {
        case .failure(let index, let message):
            record = results.update(index) { $0.error = message }
        case .file:
            return   // `loaded` reads files
        case .data(let index, let data, let mimeType):
            let start = DispatchTime.now().uptimeNanoseconds
            let outcome = Result { try pipeline.run(data) }
            record = results.update(index) { record in
                switch outcome {
                case .success(let output):
                    do {
                        try output.encoded.write(to: record.destination, options: .atomic)
                        record.succeeded = true
                        record.width = output.image.width
                        record.height = output.image.height
                        record.bytes = output.encoded.count
                        record.incomplete = output.isIncomplete
                    } catch {
                        record.error = "cannot write \(record.destination.path): \(error.localizedDescription)"
                    }
                case .failure(let error):
                    // The server's MIME type for a URL (an HTML page served as the image says so).
                    record.error = ErrorMessages.describe(error, mimeType: mimeType)
                }
                record.seconds = Double(DispatchTime.now().uptimeNanoseconds &- start) / 1e9
            }
        }
        reporter.finished(record)
    }

    /// Downloads the bytes of `url` (decoded by the workers, like a file's), with the download command's network
    /// options: `--retry` retries (and resumes) a lost connection here too.
    private func fetch(_ url: URL, index: Int, with downloader: ImageDownloader, into queue: ThumbnailJobQueue) {
        let options = self.options.network.requestOptions.union(.avoidDecodeImage)
        let response = LastResponse()
        var context = ImageDownloaderContext()
        // Records the response, so that a failure can say what the server sent (the completion has no response).
        context.responseModifier = ImageDownloaderResponseModifierBlock { received in
            response.set(received as? HTTPURLResponse)
            return received
        }
        downloader.downloadImage(url, options: options, context: context, progress: nil) { _, data, error, finished in
            guard finished else { return }
            let mimeType = response.mimeType
            if let error {
                queue.push(.failure(index: index, ErrorMessages.describe(error, mimeType: mimeType)))
            } else if let data, !data.isEmpty {
                queue.push(.data(index: index, data, mimeType: mimeType))
            } else {
                queue.push(.failure(index: index, ErrorMessages.describe(ImageDownloaderError.badImageData(.emptyBody))))
            }
        }
    }

    // MARK: - Inputs and names

    /// Records with their output files: `<input name>.<format extension>`, made unique in input order.
    static func plan(_ options: ThumbnailOptions) -> [ThumbnailRecord] {
        var used: Set<String> = []
        let folder = URL(fileURLWithPath: options.outputDirectory, isDirectory: true)
        return options.inputs.enumerated().map { index, input in
            let base = url(input).map(OutputNaming.baseName(for:)) ?? URL(fileURLWithPath: input).lastPathComponent
            let name = OutputNaming.uniqueName(base: base, extension: options.format.fileExtension, used: &used)
            return ThumbnailRecord(index: index, input: input, destination: folder.appendingPathComponent(name))
        }
    }

    /// An http(s) URL input, or nil for a file path.
    static func url(_ input: String) -> URL? {
        guard let scheme = input.split(separator: ":", maxSplits: 1).first?.lowercased(),
              scheme == "http" || scheme == "https" else { return nil }
        return try? ArgumentParser.parseURL(input)
    }
}

extension ThumbnailJobQueue.Job {
    /// A file job turned into its bytes (or why it could not be read); other jobs as they are.
    var loaded: ThumbnailJobQueue.Job {
        guard case .file(let index, let path) = self else { return self }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return .failure(index: index, "no such file")
        }
        guard !isDirectory.boolValue else { return .failure(index: index, "is a folder") }
        guard let data = FileManager.default.contents(atPath: path) else { return .failure(index: index, "cannot read file") }
        return .data(index: index, data, mimeType: nil)
    }
}

/// The records, updated by worker threads.
final class ThumbnailResults: @unchecked Sendable {  // `lock` guards `records`
    private let lock = NSLock()
    private var records: [ThumbnailRecord]

    init(_ records: [ThumbnailRecord]) {
        self.records = records
    }

    var all: [ThumbnailRecord] { lock.withLock { records } }

    /// Applies `change` to record `index` under the lock and returns the result.
    func update(_ index: Int, _ change: (inout ThumbnailRecord) -> Void) -> ThumbnailRecord {
        lock.withLock {
            change(&records[index])
            return records[index]
        }
    }
}

/// The last response of one URL's download, set on the transport's thread and read by the completion.
private final class LastResponse: @unchecked Sendable {  // `lock` guards `response`
    private let lock = NSLock()
    private var response: HTTPURLResponse?

    func set(_ value: HTTPURLResponse?) { lock.withLock { response = value } }
    var mimeType: String? { lock.withLock { response?.mimeType } }
}

import Foundation
import Decoding
@testable import OperationDownloader
import Testing
import TestRequirements

/// Collects every callback of one download caller, for assertions.
final class DownloadRecorder: @unchecked Sendable {  // `lock` guards every var
    struct Final: @unchecked Sendable {  // DecodedImage/Data are Sendable; `error` is only read for assertions
        let image: DecodedImage?
        let data: Data?
        let error: (any Error)?
    }

    private let lock = NSLock()
    private var progressEvents: [(Int, Int)] = []
    private var partialImages: [DecodedImage] = []
    private var finalCalls: [Final] = []
    private var eventLog: [String] = []

    var progress: ImageDownloaderProgressHandler {
        { [self] received, expected, _ in
            lock.withLock {
                progressEvents.append((received, expected))
                eventLog.append("progress")
            }
        }
    }

    var completed: ImageDownloaderCompletedHandler {
        { [self] image, data, error, finished in
            lock.withLock {
                if finished {
                    finalCalls.append(Final(image: image, data: data, error: error))
                    eventLog.append("final")
                } else {
                    if let image { partialImages.append(image) }
                    eventLog.append("partial")
                }
            }
        }
    }

    var progressList: [(Int, Int)] { lock.withLock { progressEvents } }
    var partials: [DecodedImage] { lock.withLock { partialImages } }
    var finals: [Final] { lock.withLock { finalCalls } }
    var events: [String] { lock.withLock { eventLog } }
    var final: Final? { finals.first }
    var error: (any Error)? { final?.error }
    var downloaderError: ImageDownloaderError? { final?.error as? ImageDownloaderError }

    /// Waits (polling; generous timeout only to avoid hangs) until the final call arrived.
    @discardableResult
    func waitForCompletion(timeout: TimeInterval = 30, sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        let ok = await waitUntil(timeout: timeout) { !self.finals.isEmpty }
        if !ok { Issue.record("no completion within \(timeout) s", sourceLocation: sourceLocation) }
        return ok
    }
}

/// Polls `condition` every 10 ms until it holds or `timeout` passes.
func waitUntil(timeout: TimeInterval = 120, _ condition: @escaping @Sendable () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return condition()
}

/// Lets queued callbacks run: waits until `queue` has executed everything submitted before this call.
func drain(_ queue: DispatchQueue) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        queue.async { continuation.resume() }
    }
}

/// A fresh tag for the fixture server's log.
func newTag() -> String { UUID().uuidString }

/// A downloader for one test: its own callback queue (serial, so callback order is observable), on `transport`
/// (end-to-end tests take it as an argument from `TestTransports.all`).
/// `monitor`: the timer behind the timeouts (tests pass one on a manual clock); the shared one by default.
func makeDownloader(
    _ transport: ImageDownloaderTransport = .urlSession, monitor: DeadlineMonitor = .shared,
    _ adjust: (inout ImageDownloaderConfiguration) -> Void = { _ in }
) -> (ImageDownloader, DispatchQueue) {
    // A curl case kept by OD_REQUIRE_ALL on a machine without libcurl fails here, naming it.
    if transport == .curl { Requirement.recordIfMissing(.libcurl) }
    let queue = DispatchQueue(label: "test.callbacks")
    var configuration = ImageDownloaderConfiguration()
    configuration.transport = transport
    configuration.callbackQueue = queue
    configuration.codersManager = .shared
    // Far beyond any pause a held request sees (and beyond the fixture server's 120 s hold bound): under TSan,
    // or beside other work on two cores, a held request has waited over 60 s for its test to come round to
    // releasing it.
    configuration.downloadTimeout = 180
    adjust(&configuration)
    return (ImageDownloader(configuration: configuration, deadlineMonitor: monitor), queue)
}

extension ImageDownloaderError {
    /// The case name, for readable expectations.
    var caseName: String {
        switch self {
        case .invalidURL: return "invalidURL"
        case .badImageData: return "badImageData"
        case .cacheNotModified: return "cacheNotModified"
        case .notModified: return "notModified"
        case .invalidDownloadOperation: return "invalidDownloadOperation"
        case .invalidDownloadStatusCode(let code): return "status\(code)"
        case .invalidDownloadContentType: return "invalidDownloadContentType"
        case .invalidDownloadResponse: return "invalidDownloadResponse"
        case .responseTooLarge: return "responseTooLarge"
        case .cancelled: return "cancelled"
        case .unsupportedOnPlatform: return "unsupportedOnPlatform"
        case .network(let error): return "network\(error.code.rawValue)"
        }
    }
}

extension BadImageDataReason {
    /// The case name, for readable expectations ("emptyBody", "notAnImage", "truncated", "decoding"...).
    var caseName: String {
        switch self {
        case .emptyBody: return "emptyBody"
        case .notAnImage: return "notAnImage"
        case .truncated: return "truncated"
        case .zeroPixels: return "zeroPixels"
        case .decoding: return "decoding"
        case .coderFailed: return "coderFailed"
        case .transformerFailed: return "transformerFailed"
        case .decryptorFailed: return "decryptorFailed"
        case .noImage: return "noImage"
        }
    }
}

extension DownloadRecorder {
    /// The reason of a `.badImageData` final answer, else nil.
    var badImageDataReason: BadImageDataReason? { downloaderError?.badImageDataReason }
}

import Foundation
import Decoding
@testable import OperationDownloader
import Testing
import TestRequirements

/// Collects every callback of one download caller, for assertions, and lets a test await a condition on them
/// without polling: each callback wakes the waiters whose condition now holds. Waits are bounded only against
/// hangs. (`AsyncRecorder`, the scripted suites' name, is the same class.)
final class DownloadRecorder: Sendable {
    struct Final: @unchecked Sendable {  // DecodedImage/Data are Sendable; `error` is only read for assertions
        let image: DecodedImage?
        let data: Data?
        let error: (any Error)?
    }

    struct Snapshot {
        var progress: [(Int, Int)] = []
        var partials: [DecodedImage] = []
        var finals: [Final] = []
        var events: [String] = []
    }

    private let state = Watched(Snapshot())

    var progress: ImageDownloaderProgressHandler {
        { [self] received, expected, _ in state.withLock { $0.progress.append((received, expected)); $0.events.append("progress") } }
    }

    var completed: ImageDownloaderCompletedHandler {
        { [self] image, data, error, finished in
            state.withLock {
                if finished {
                    $0.finals.append(Final(image: image, data: data, error: error))
                    $0.events.append("final")
                } else {
                    if let image { $0.partials.append(image) }
                    $0.events.append("partial")
                }
            }
        }
    }

    var current: Snapshot { state.current }
    var progressList: [(Int, Int)] { current.progress }
    var partials: [DecodedImage] { current.partials }
    var finals: [Final] { current.finals }
    var events: [String] { current.events }
    var final: Final? { current.finals.first }
    var error: (any Error)? { final?.error }
    var downloaderError: ImageDownloaderError? { final?.error as? ImageDownloaderError }

    /// Returns true once `condition` holds (at once if it already does), false after `timeout` (recorded as
    /// an issue, with the events so far).
    @discardableResult
    func wait(
        timeout: TimeInterval = 30, sourceLocation: SourceLocation = #_sourceLocation,
        until condition: @escaping (Snapshot) -> Bool
    ) async -> Bool {
        await state.wait(timeout: timeout, sourceLocation: sourceLocation, describe: { "\($0.events)" }, until: condition)
    }

    /// The final answer arrived.
    @discardableResult
    func completion(timeout: TimeInterval = 30, sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        await wait(timeout: timeout, sourceLocation: sourceLocation) { !$0.finals.isEmpty }
    }

    /// The end-to-end suites' name for `completion`.
    @discardableResult
    func waitForCompletion(timeout: TimeInterval = 30, sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        await completion(timeout: timeout, sourceLocation: sourceLocation)
    }
}

typealias AsyncRecorder = DownloadRecorder

/// Runs `action` after `seconds` unless the returned task is cancelled first (the bound of a continuation-based
/// wait: it resumes the waiter with a failure if nothing did before; cancel it when the wait ends, so that its
/// closure is released at once).
@discardableResult
func afterTimeout(_ seconds: TimeInterval, _ action: @escaping @Sendable () -> Void) -> Task<Void, Never> {
    Task {
        do {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
        } catch {
            return  // cancelled: the wait ended first
        }
        action()
    }
}

/// Waits until `downloader` has no download queued or running (`ImageDownloader.waitUntilIdle`), bounded
/// against hangs: false (recorded as an issue) when `timeout` passes first.
@discardableResult
func awaitIdle(
    _ downloader: ImageDownloader, timeout: TimeInterval = 120, sourceLocation: SourceLocation = #_sourceLocation
) async -> Bool {
    // Not `whenIdle`: its block runs on the callback queue, which some tests hold on purpose.
    let idle = Watched(false)
    let waiter = Task {
        await downloader.waitUntilIdle()
        idle.withLock { $0 = true }
    }
    defer { waiter.cancel() }  // at the bound: the wait ends, nothing is left waiting
    return await idle.wait(
        timeout: timeout, sourceLocation: sourceLocation,
        describe: { _ in "still \(downloader.currentDownloadCount) download(s) in flight" }, until: { $0 })
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

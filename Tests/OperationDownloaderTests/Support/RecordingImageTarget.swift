import Foundation
import Decoding
import OperationDownloader
import Testing

/// A plain Swift class used as an `ImageTarget`: it records every image it was asked to show.
final class RecordingImageTarget: ImageTarget, @unchecked Sendable {  // `lock` guards `displayed`, `queueLabels`
    private let lock = NSLock()
    private var displayed: [DecodedImage?] = []
    private var queueLabels: [String] = []
    private let deliveryQueue: DispatchQueue?

    init(deliveryQueue: DispatchQueue? = nil) {
        self.deliveryQueue = deliveryQueue
    }

    var imageDeliveryQueue: DispatchQueue? { deliveryQueue }

    func displayImage(_ image: DecodedImage?) {
        let label = currentQueueName()
        lock.withLock {
            displayed.append(image)
            queueLabels.append(label)
        }
    }

    /// What the target shows now.
    var image: DecodedImage? { lock.withLock { displayed.last ?? nil } }
    /// Every `displayImage` call, in order.
    var history: [DecodedImage?] { lock.withLock { displayed } }
    /// The width of each image shown (nil for a cleared target), in order.
    var widths: [Int?] { history.map { $0?.width } }
    /// The label of the queue each `displayImage` call ran on.
    var displayQueueLabels: [String] { lock.withLock { queueLabels } }
}

/// Collects the completions of one `setImage` call.
final class TargetCompletionRecorder: @unchecked Sendable {  // `lock` guards `results`, `labels`
    private let lock = NSLock()
    private var results: [Result<ImageTargetResult, any Error>] = []
    private var labels: [String] = []

    var completed: ImageTargetCompletedHandler {
        { [self] result in
            let label = currentQueueName()
            lock.withLock {
                results.append(result)
                labels.append(label)
            }
        }
    }

    var count: Int { lock.withLock { results.count } }
    var result: Result<ImageTargetResult, any Error>? { lock.withLock { results.first } }
    var queueLabel: String? { lock.withLock { labels.first } }
    var success: ImageTargetResult? {
        guard case .success(let value)? = result else { return nil }
        return value
    }
    var downloaderError: ImageDownloaderError? {
        guard case .failure(let error)? = result else { return nil }
        return error as? ImageDownloaderError
    }
    var wasCancelled: Bool { downloaderError?.caseName == "cancelled" }

    /// Waits (generous timeout only to avoid hangs) until the completion arrived.
    @discardableResult
    func wait(timeout: TimeInterval = 30, sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        let ok = await waitUntil(timeout: timeout) { self.count > 0 }
        if !ok { Issue.record("no completion within \(timeout) s", sourceLocation: sourceLocation) }
        return ok
    }
}

/// A small recognisable placeholder (2x2 grey).
let placeholderImage = DecodedImage(
    width: 2, height: 2, pixels: [UInt8](repeating: 128, count: 16), format: .undefined)

/// Names queues made by `namedQueue(_:)`, so a callback can tell which one it runs on.
private let queueNameKey = DispatchSpecificKey<String>()

/// A serial queue that `currentQueueName()` recognises.
func namedQueue(_ name: String) -> DispatchQueue {
    let queue = DispatchQueue(label: name)
    queue.setSpecific(key: queueNameKey, value: name)
    return queue
}

/// The name of the `namedQueue` running the caller, or "?".
func currentQueueName() -> String {
    DispatchQueue.getSpecific(key: queueNameKey) ?? "?"
}

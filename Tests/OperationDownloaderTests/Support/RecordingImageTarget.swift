import Foundation
import Decoding
import OperationDownloader
import Testing

/// A plain Swift class used as an `ImageTarget`: it records every image it was asked to show.
final class RecordingImageTarget: ImageTarget, @unchecked Sendable {  // `shown` is Watched (locked); the queue is immutable
    /// Each `displayImage` call: the image, and the label of the queue it ran on.
    private let shown = Watched<[(image: DecodedImage?, queue: String)]>([])
    private let deliveryQueue: DispatchQueue?

    init(deliveryQueue: DispatchQueue? = nil) {
        self.deliveryQueue = deliveryQueue
    }

    var imageDeliveryQueue: DispatchQueue? { deliveryQueue }

    func displayImage(_ image: DecodedImage?) {
        let label = currentQueueName()
        shown.withLock { $0.append((image, label)) }
    }

    /// What the target shows now.
    var image: DecodedImage? { shown.current.last?.image ?? nil }
    /// Every `displayImage` call, in order.
    var history: [DecodedImage?] { shown.current.map(\.image) }
    /// The width of each image shown (nil for a cleared target), in order.
    var widths: [Int?] { history.map { $0?.width } }
    /// The label of the queue each `displayImage` call ran on.
    var displayQueueLabels: [String] { shown.current.map(\.queue) }

    /// Waits until the target was asked to show at least `count` images (cleared ones included).
    @discardableResult
    func waitForDisplays(_ count: Int, timeout: TimeInterval = 60, sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        await shown.wait(timeout: timeout, sourceLocation: sourceLocation, describe: { "\($0.count) shown" }) { $0.count >= count }
    }
}

/// Collects the completions of one `setImage` call.
final class TargetCompletionRecorder: Sendable {
    /// Each completion, with the label of the queue it ran on.
    private let calls = Watched<[(result: Result<ImageTargetResult, any Error>, queue: String)]>([])

    var completed: ImageTargetCompletedHandler {
        { [self] result in
            let label = currentQueueName()
            calls.withLock { $0.append((result, label)) }
        }
    }

    var count: Int { calls.current.count }
    var result: Result<ImageTargetResult, any Error>? { calls.current.first?.result }
    var queueLabel: String? { calls.current.first?.queue }
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
        await calls.wait(timeout: timeout, sourceLocation: sourceLocation, describe: { _ in "no completion" }) { !$0.isEmpty }
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

import Foundation
import Decoding

/// Feeds ONE incremental decoder with the bytes of a download as they arrive, on the operation's serial
/// coder queue, so the session's delegate queue never decodes.
///
/// At most one drain is queued at a time (bytes arriving meanwhile are batched into it), the decoder only
/// ever receives new bytes (never a re-decode from byte 0), and a partial image is produced at most once per
/// `interval`. `finish` appends what is left with `isFinal: true` and returns the complete image.
final class ProgressiveDecoding: @unchecked Sendable {  // `lock` guards `pending`/`drainQueued`; the rest is touched only on `queue`
    /// How many bytes may accumulate before any coder recognises them; past that, progressive decoding gives
    /// up and the final image comes from a one-shot decode.
    static let maximumSniffBytes = 64 * 1024

    private let queue: DispatchQueue
    private let manager: ImageCodersManager
    private let options: ImageDecodingOptions
    private let interval: TimeInterval
    private let lock = NSLock()
    private var pending: [Data] = []
    private var drainQueued = false

    // Coder-queue state.
    private var decoder: (any IncrementalImageDecoder)?
    private var sniffed = Data()
    private var failed = false
    private var lastPartial: DispatchTime?
    private var bytesSincePartial = 0

    init(queue: DispatchQueue, manager: ImageCodersManager, options: ImageDecodingOptions, interval: TimeInterval) {
        self.queue = queue
        self.manager = manager
        self.options = options
        self.interval = max(0, interval)
    }

    /// Queues `delta` (new bytes only); `deliver` receives partial images on the coder queue.
    func feed(_ delta: Data, deliver: @escaping @Sendable (DecodedImage) -> Void) {
        let schedule: Bool = lock.withLock {
            pending.append(delta)
            if drainQueued { return false }
            drainQueued = true
            return true
        }
        guard schedule else { return }
        queue.async { self.drain(deliver: deliver) }
    }

    /// On the coder queue: appends the rest with `isFinal: true`. Returns the complete image, an error,
    /// or nil when no incremental decoder could be used (the caller then decodes the whole data at once).
    func finish() -> Result<DecodedImage, any Error>? {
        dispatchPrecondition(condition: .onQueue(queue))
        let rest = takePending()
        guard !failed else { return nil }
        for chunk in rest { append(chunk) }
        guard let decoder, !failed else { return nil }
        do {
            try decoder.append(Data(), isFinal: true)
            guard let image = decoder.currentImage() else { return .failure(ImageDecodingError.truncated) }
            return .success(image)
        } catch {
            return .failure(error)
        }
    }

    private func takePending() -> [Data] {
        lock.withLock {
            let chunks = pending
            pending = []
            drainQueued = false
            return chunks
        }
    }

    private func drain(deliver: @Sendable (DecodedImage) -> Void) {
        let chunks = takePending()
        guard !failed else { return }
        for chunk in chunks { append(chunk) }
        guard let decoder, !failed, bytesSincePartial > 0 else { return }
        let now = DispatchTime.now()
        if let last = lastPartial, now.uptimeNanoseconds &- last.uptimeNanoseconds < UInt64(interval * 1e9) { return }
        guard let image = decoder.currentImage(), image.isIncomplete, image.width > 0, image.height > 0 else { return }
        lastPartial = now
        bytesSincePartial = 0
        deliver(image)
    }

    /// Appends one chunk, choosing the decoder once enough of a prefix has arrived.
    private func append(_ chunk: Data) {
        if decoder == nil {
            sniffed.append(chunk)
            guard let made = manager.incrementalDecoder(for: sniffed, options: options) else {
                if sniffed.count > Self.maximumSniffBytes { failed = true; sniffed = Data() }
                return
            }
            decoder = made
            let prefix = sniffed
            sniffed = Data()
            feedDecoder(made, prefix)
        } else if let decoder {
            feedDecoder(decoder, chunk)
        }
    }

    private func feedDecoder(_ decoder: any IncrementalImageDecoder, _ bytes: Data) {
        do {
            try decoder.append(bytes, isFinal: false)
            bytesSincePartial += bytes.count
        } catch {
            // The one-shot decode at the end reports the error the user sees.
            failed = true
            self.decoder = nil
        }
    }
}

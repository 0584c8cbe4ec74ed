import Foundation
import Decoding

/// Feeds incremental decoders with the bytes of a download as they arrive, on the operation's serial coder
/// queue, so the transport's thread never decodes: ONE decoder per distinct decoding variant
/// (`ImageVariant.Decoding`) among the callers, at most `maximumStreams` of them (full-size canvases are what
/// memory is made of; further variants are decoded once, at the end).
///
/// At most one drain is queued at a time (bytes arriving meanwhile are batched into it), each decoder only
/// ever receives new bytes (never a re-decode from byte 0), and each produces a partial image at most once per
/// `interval`. A decoder added while bytes are arriving (a caller with another variant joined) starts from the
/// bytes received so far. `finish` appends what is left with `isFinal: true` and returns each final image.
///
/// Decoders made after a download started over (a retry from byte 0) are given `partialImagesAfter`: the body
/// bytes behind the newest partial image delivered before, so they deliver none older.
final class IncrementalDecoding: @unchecked Sendable {  // `lock` guards `pending*`/`drainQueued`/`keys`/`delivered`; the rest is touched only on `queue`
    /// How many bytes may accumulate before any coder recognises them; past that, a decoder gives up and the
    /// final image comes from a one-shot decode.
    static let maximumSniffBytes = 64 * 1024
    /// Incremental decoders per download.
    static let maximumStreams = 4

    /// A partial image, its variant, and the decoders that made it (so a late one of dropped decoders is told apart).
    typealias Deliver = @Sendable (DecodedImage, ImageVariant.Decoding, IncrementalDecoding) -> Void

    private let queue: DispatchQueue
    private let manager: ImageCodersManager
    private let interval: TimeInterval
    private let partialImagesAfter: Int
    private let deliver: Deliver
    private let lock = NSLock()
    private var pendingChunks: [(offset: Int, data: Data)] = []
    private var pendingStreams: [Stream] = []
    private var drainQueued = false
    private var keys: Set<ImageVariant.Decoding> = []
    private var delivered = 0

    // Coder-queue state.
    private var streams: [Stream] = []

    /// `partialImagesAfter`: partial images are delivered only once a decoder has consumed more body bytes.
    init(
        queue: DispatchQueue, manager: ImageCodersManager, interval: TimeInterval, partialImagesAfter: Int = 0,
        deliver: @escaping Deliver
    ) {
        self.queue = queue
        self.manager = manager
        self.interval = max(0, interval)
        self.partialImagesAfter = partialImagesAfter
        self.deliver = deliver
    }

    /// Body bytes behind the newest partial image delivered (0 before any).
    var partialImagesThrough: Int { lock.withLock { delivered } }

    /// Adds a decoder for `key` unless there is one (or `maximumStreams` already): `received` are the body's
    /// bytes so far, and every chunk fed later must start at `received.count` or before (chunks are
    /// deduplicated by offset). Call it under the lock that orders the operation's chunks, so no chunk fed
    /// after `received` was taken can reach the queue before this stream.
    func addStream(for key: ImageVariant.Decoding, options: ImageDecodingOptions, received: Data) {
        let stream = Stream(key: key, options: options, prefix: received)
        let schedule: Bool = lock.withLock {
            guard !keys.contains(key), keys.count < Self.maximumStreams else { return false }
            keys.insert(key)
            pendingStreams.append(stream)
            return takeDrainSlot()
        }
        if schedule { queue.async { self.drain() } }
    }

    /// Queues `delta` (new bytes only), which starts at byte `offset` of the body.
    func feed(_ delta: Data, at offset: Int) {
        let schedule: Bool = lock.withLock {
            pendingChunks.append((offset, delta))
            return takeDrainSlot()
        }
        if schedule { queue.async { self.drain() } }
    }

    /// Under `lock`: whether the caller must queue a drain.
    private func takeDrainSlot() -> Bool {
        if drainQueued { return false }
        drainQueued = true
        return true
    }

    /// On the coder queue: appends the rest with `isFinal: true`. Returns the outcome of every decoder that
    /// got far enough; variants missing from it are decoded in one shot by the caller.
    func finish() -> [ImageVariant.Decoding: Result<DecodedImage, any Error>] {
        dispatchPrecondition(condition: .onQueue(queue))
        absorbPending()
        var outcomes: [ImageVariant.Decoding: Result<DecodedImage, any Error>] = [:]
        for stream in streams {
            if let outcome = stream.finish() { outcomes[stream.key] = outcome }
        }
        streams = []
        return outcomes
    }

    /// On the coder queue: moves pending streams and chunks into the decoders.
    private func absorbPending() {
        let (newStreams, chunks): ([Stream], [(offset: Int, data: Data)]) = lock.withLock {
            defer {
                pendingStreams = []
                pendingChunks = []
                drainQueued = false
            }
            return (pendingStreams, pendingChunks)
        }
        for stream in newStreams {
            stream.start(manager: manager)
            streams.append(stream)
        }
        for chunk in chunks {
            for stream in streams { stream.append(chunk.data, at: chunk.offset, manager: manager) }
        }
    }

    private func drain() {
        absorbPending()
        let now = DispatchTime.now().uptimeNanoseconds
        for stream in streams where stream.consumedBytes > partialImagesAfter {
            guard let image = stream.partialImage(now: now, interval: interval) else { continue }
            let through = stream.consumedBytes
            lock.withLock { delivered = max(delivered, through) }
            deliver(image, stream.key, self)
        }
    }

    /// One incremental decoder and how far it got. Used on the coder queue only.
    private final class Stream: @unchecked Sendable {  // touched only on the coder queue (created under the owner's lock, then handed over)
        let key: ImageVariant.Decoding
        let options: ImageDecodingOptions
        private var prefix: Data
        private var decoder: (any IncrementalImageDecoder)?
        private var sniffed = Data()
        private var failed = false
        /// Body bytes consumed (fed, or held in `sniffed`).
        private var consumed = 0
        var consumedBytes: Int { consumed }
        private var lastPartial: UInt64?
        private var bytesSincePartial = 0

        init(key: ImageVariant.Decoding, options: ImageDecodingOptions, prefix: Data) {
            self.key = key
            self.options = options
            self.prefix = prefix
        }

        func start(manager: ImageCodersManager) {
            let bytes = prefix
            prefix = Data()
            if !bytes.isEmpty { append(bytes, at: 0, manager: manager) }
        }

        /// Appends the part of `chunk` (starting at body byte `offset`) this decoder has not seen.
        func append(_ chunk: Data, at offset: Int, manager: ImageCodersManager) {
            guard !failed else { return }
            let end = offset + chunk.count
            guard end > consumed else { return }
            let fresh = offset >= consumed ? chunk : chunk.suffix(end - consumed)
            consumed = end
            if let decoder {
                feed(decoder, fresh)
                return
            }
            sniffed.append(fresh)
            guard let made = manager.incrementalDecoder(for: sniffed, options: options) else {
                if sniffed.count > IncrementalDecoding.maximumSniffBytes {
                    failed = true
                    sniffed = Data()
                }
                return
            }
            decoder = made
            let bytes = sniffed
            sniffed = Data()
            feed(made, bytes)
        }

        private func feed(_ decoder: any IncrementalImageDecoder, _ bytes: Data) {
            do {
                try decoder.append(bytes, isFinal: false)
                bytesSincePartial += bytes.count
            } catch {
                // The one-shot decode at the end reports the error the user sees.
                failed = true
                self.decoder = nil
            }
        }

        func partialImage(now: UInt64, interval: TimeInterval) -> DecodedImage? {
            guard let decoder, !failed, bytesSincePartial > 0 else { return nil }
            if let last = lastPartial, now &- last < UInt64(interval * 1e9) { return nil }
            guard var image = decoder.currentImage(), image.isIncomplete, image.width > 0, image.height > 0 else { return nil }
            lastPartial = now
            bytesSincePartial = 0
            image.scale = options.scaleFactor
            return image
        }

        /// The final outcome, or nil when this decoder never started (the caller decodes in one shot).
        func finish() -> Result<DecodedImage, any Error>? {
            guard let decoder, !failed else { return nil }
            self.decoder = nil
            do {
                try decoder.append(Data(), isFinal: true)
                guard let image = decoder.currentImage() else { return .failure(ImageDecodingError.truncated) }
                return .success(image)
            } catch {
                return .failure(error)
            }
        }
    }
}

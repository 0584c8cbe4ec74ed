import Foundation
import Decoding

/// One caller of an operation: its handlers, the queue they run on, what it wants made of the bytes (its
/// variant), and whether it was cancelled. The record itself is the caller's cancel token (`addHandlers`
/// returns it).
final class CallbackRecord: @unchecked Sendable {  // everything is immutable except `cancelled`, a lock-guarded flag
    let progress: ImageDownloaderProgressHandler?
    let completed: ImageDownloaderCompletedHandler?
    let queue: DispatchQueue
    /// How this caller's image is decoded and transformed (Docs/Options.md).
    let variant: ImageVariant
    let transformer: (any ImageTransformer)?
    /// Deliver a truncated image marked `isIncomplete` instead of failing with `.badImageData`.
    let allowsIncompleteImages: Bool
    /// This caller asked for partial images (`.progressiveLoad`): only such callers get them.
    let wantsPartialImages: Bool
    /// The additional identifier of this caller's memory-cache entry (cache identifier and variant).
    let memoryCacheIdentifier: String?
    private let cancelled = OnceFlag()

    init(
        progress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?, caller: CallerOptions
    ) {
        self.progress = progress
        self.completed = completed
        self.queue = caller.callbackQueue
        self.variant = caller.variant
        self.transformer = caller.transformer
        self.allowsIncompleteImages = caller.allowsIncompleteImages
        self.wantsPartialImages = caller.wantsPartialImages
        self.memoryCacheIdentifier = caller.memoryCacheIdentifier
    }

    /// Set when the caller's token was cancelled: progress and partial images queued before then are dropped.
    var isCancelled: Bool { cancelled.isClaimed }
    func markCancelled() { _ = cancelled.claim() }

    func deliverProgress(_ received: Int, _ expected: Int, _ url: URL?) {
        guard let progress else { return }
        queue.async { [self] in
            if !isCancelled { progress(received, expected, url) }
        }
    }

    func deliverPartial(_ image: DecodedImage) {
        guard let completed else { return }
        queue.async { [self] in
            if !isCancelled { completed(image, nil, nil, false) }
        }
    }

    /// The one final call. Callers reach this at most once because whoever removes the record from the
    /// store (finish, cancel of this token, cancel of the operation) is the only one that answers it.
    func deliverFinal(image: DecodedImage?, data: Data?, error: (any Error)?) {
        guard let completed else { return }
        queue.async { completed(image, data, error, true) }
    }
}

/// The callers of one operation (SDWebImage's `callbackBlocks` behind a barrier queue).
///
/// Reads use `sync`, every mutation is a barrier. Removing the last caller closes the store in the same
/// critical section, so no caller can join an operation that is about to be cancelled.
///
/// Every store shares one concurrent queue: a barrier holds only a few instructions, while a queue of its own
/// would be made and destroyed by every download (Docs/Downloader.md has the measured cost). It is a
/// `ConcurrentQueue`, which reaches libdispatch's barrier without the Swift overlay's generic `sync`.
final class CallbackStore: @unchecked Sendable {  // `queue` (concurrent, barrier writes) guards `records` and `closed`
    private static let queue = ConcurrentQueue(label: "OperationDownloader.CallbackStore")
    // Only touched on `queue` (reads beside reads, writes in barriers): no dynamic exclusivity check needed.
    @exclusivity(unchecked) private var records: [CallbackRecord] = []
    @exclusivity(unchecked) private var closed = false

    /// Adds a caller; false when the store is closed (the operation finished, was cancelled, or lost its last caller).
    func add(_ record: CallbackRecord) -> Bool {
        typealias Section = (store: CallbackStore, record: CallbackRecord, added: Bool)
        var section: Section = (self, record, false)
        Self.queue.write(&section) { pointer in
            let section = pointer.section(Section.self)
            let store = section.pointee.store
            guard !store.closed else { return }
            store.records.append(section.pointee.record)
            section.pointee.added = true
        }
        return section.added
    }

    /// Removes `record`. `removed` says it was still there (so the caller answers it); `wasLast` says it was
    /// the last one, in which case the store is now closed and the operation must be cancelled.
    func remove(_ record: CallbackRecord) -> (removed: Bool, wasLast: Bool) {
        typealias Section = (store: CallbackStore, record: CallbackRecord, removed: Bool, wasLast: Bool)
        var section: Section = (self, record, false, false)
        Self.queue.write(&section) { pointer in
            let section = pointer.section(Section.self)
            let store = section.pointee.store
            let record = section.pointee.record
            guard let index = store.records.firstIndex(where: { $0 === record }) else { return }
            store.records.remove(at: index)
            if store.records.isEmpty { store.closed = true }
            section.pointee.removed = true
            section.pointee.wasLast = store.records.isEmpty
        }
        return (section.removed, section.wasLast)
    }

    /// Closes the store and hands back every remaining caller, for the final answer.
    func closeAndTakeAll() -> [CallbackRecord] {
        typealias Section = (store: CallbackStore, taken: [CallbackRecord])
        var section: Section = (self, [])
        Self.queue.write(&section) { pointer in
            let section = pointer.section(Section.self)
            let store = section.pointee.store
            store.closed = true
            swap(&section.pointee.taken, &store.records)
        }
        return section.taken
    }

    /// Closes the store when every caller wants an image (none asked for the data only), in one critical
    /// section so that no data-only caller joins between the check and the close; true when it closed. A body
    /// that is no image then fails at once; with a data-only caller the transfer goes on, and each decoding
    /// caller gets the same `.notAnImage` from its decode at the end (what it would get downloading alone).
    func closeIfEveryCallerDecodes() -> Bool {
        typealias Section = (store: CallbackStore, closed: Bool)
        var section: Section = (self, false)
        Self.queue.write(&section) { pointer in
            let section = pointer.section(Section.self)
            let store = section.pointee.store
            guard !store.records.contains(where: { $0.variant.decoding == nil }) else { return }
            store.closed = true
            section.pointee.closed = true
        }
        return section.closed
    }

    /// The current callers, for progress and partial images.
    var snapshot: [CallbackRecord] {
        typealias Section = (store: CallbackStore, records: [CallbackRecord])
        var section: Section = (self, [])
        Self.queue.read(&section) { pointer in
            let section = pointer.section(Section.self)
            section.pointee.records = section.pointee.store.records
        }
        return section.records
    }

    var isClosed: Bool {
        typealias Section = (store: CallbackStore, closed: Bool)
        var section: Section = (self, false)
        Self.queue.read(&section) { pointer in
            let section = pointer.section(Section.self)
            section.pointee.closed = section.pointee.store.closed
        }
        return section.closed
    }
}

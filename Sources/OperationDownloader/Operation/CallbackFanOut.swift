import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a download ends: one error for every caller, or the decoded variants.
enum DownloadEnding {
    case failure(any Error)
    case images(FinalImages)
}

/// Everything that reaches an operation's callers: progress, partial images, notifications, and the one final
/// answer per caller (with the memory-cache write before it).
///
/// Thread hops are few on purpose (each one to an idle queue is a context switch on Linux): the callers on the
/// operation's callback queue and the notifications still due go out in ONE block on that queue; callers with
/// their own queue get a block there.
final class CallbackFanOut: Sendable {
    let callbackQueue: DispatchQueue
    private let store = CallbackStore()
    private let postsNotifications: Bool
    private let url: URL?
    /// The memory-cache writer (the downloader's, for this download); nil without a memory cache.
    private let memoryCache: MemoryCacheWriter?
    /// Counts each caller's answer (`od_downloads_total`); nil without telemetry.
    private let observation: DownloadObservation?

    init(
        callbackQueue: DispatchQueue, postsNotifications: Bool, url: URL?,
        memoryCache: MemoryCacheWriter?, observation: DownloadObservation? = nil
    ) {
        self.callbackQueue = callbackQueue
        self.postsNotifications = postsNotifications
        self.url = url
        self.memoryCache = memoryCache
        self.observation = observation
    }

    // MARK: - Callers

    /// False when the operation no longer takes callers.
    func add(_ record: CallbackRecord) -> Bool { store.add(record) }

    /// See `CallbackStore.remove`.
    func remove(_ record: CallbackRecord) -> (removed: Bool, wasLast: Bool) { store.remove(record) }

    var snapshot: [CallbackRecord] { store.snapshot }

    /// See `CallbackStore.closeIfEveryCallerDecodes`.
    func closeIfEveryCallerDecodes() -> Bool { store.closeIfEveryCallerDecodes() }

    // MARK: - While the bytes arrive

    func reportProgress(_ received: Int, _ expected: Int) {
        for record in store.snapshot { record.deliverProgress(received, expected, url) }
    }

    /// A partial image of the incremental decoder for `decoding`: to each caller of that decoding that asked for
    /// partial images (`.progressiveLoad`), through its transformer (once per distinct transformer; a transformer
    /// that throws on a partial image just skips it, so a caller never sees untransformed pixels).
    func deliverPartial(_ image: DecodedImage, decoding: ImageVariant.Decoding) {
        var transformed: [String: DecodedImage?] = [:]
        for record in store.snapshot where record.wantsPartialImages && record.variant.decoding == decoding {
            guard let transformer = record.transformer else {
                record.deliverPartial(image)
                continue
            }
            let key = record.variant.transformerKey ?? ""
            if transformed[key] == nil { transformed[key] = .some(try? transformer.transform(image)) }
            if case .some(.some(var output)) = transformed[key] {
                output.isIncomplete = true
                record.deliverPartial(output)
            }
        }
    }

    /// Posts `names` in order from one callback-queue block (a block per notification was a measurable share
    /// of a small download's CPU, Docs/Benchmarks.md). `object`, the operation, is typed `Operation` on purpose:
    /// `NotificationCenter` bridges it through `Any`, and from `Operation` that cast costs about half of what it
    /// costs from `AnyObject` or the subclass (Docs/Transports.md, "Fewer objects per download"); observers
    /// get the same object.
    func post(_ names: DownloadNotifications, object: Operation) {
        guard postsNotifications, !names.isEmpty else { return }
        let sender = UncheckedSender(object)
        callbackQueue.async {
            names.forEachName { NotificationCenter.default.post(name: $0, object: sender.object) }
        }
    }

    // MARK: - The end

    /// Closes the store and answers every caller once (`notifications` first, in the same block): each caller
    /// its variant's image or its own error. The memory cache gets each variant's image once, before any
    /// caller runs, so a request made from a completion already hits it.
    func answerAll(_ ending: DownloadEnding, after notifications: DownloadNotifications, object: Operation) {
        let notifications: DownloadNotifications = postsNotifications ? notifications : []
        let records = store.closeAndTakeAll()
        var answers = ContiguousArray<Answer>()
        answers.reserveCapacity(records.count)
        switch ending {
        case .failure(let error):
            for _ in records { answers.append(Answer(image: nil, data: nil, error: error)) }
        case .images(let images):
            for record in records {
                let (image, error) = images.answer(for: record)
                answers.append(Answer(image: image, data: error == nil ? images.data : nil, error: error))
            }
            writeMemoryCache(records, answers)
        }
        if let observation { for index in answers.indices { observation.answered(answers[index].error) } }
        // Callers with a queue of their own get a block there; those on the callback queue are answered in the
        // block below, which takes the two lists as they are (no third list of them: one allocation less).
        let callbackQueue = callbackQueue
        var anyOnCallbackQueue = false
        for (record, answer) in zip(records, answers) where record.completed != nil {
            if record.queue === callbackQueue {
                anyOnCallbackQueue = true
            } else {
                record.deliverFinal(image: answer.image, data: answer.data, error: answer.error)
            }
        }
        guard !notifications.isEmpty || anyOnCallbackQueue else { return }
        let sender = UncheckedSender(object)
        callbackQueue.async { [answers] in
            notifications.forEachName { NotificationCenter.default.post(name: $0, object: sender.object) }
            for (record, answer) in zip(records, answers) where record.queue === callbackQueue {
                record.completed?(answer.image, answer.data, answer.error, true)
            }
        }
    }

    /// One caller's final answer.
    private struct Answer {
        let image: DecodedImage?
        let data: Data?
        let error: (any Error)?
    }

    /// Each variant's complete image, once: every caller is answered in this one pass, so the identifiers written
    /// are a local list (a handful of variants at most) and the writer needs no lock.
    private func writeMemoryCache(_ records: [CallbackRecord], _ answers: ContiguousArray<Answer>) {
        guard let memoryCache else { return }
        var written: [String] = []
        for (record, answer) in zip(records, answers) {
            guard let image = answer.image, !image.isIncomplete else { continue }
            let identifier = record.memoryCacheIdentifier
            if written.contains(identifier ?? "") { continue }
            written.append(identifier ?? "")
            memoryCache.write(image, identifier: identifier)
        }
    }
}

/// The notification sender (the operation), carried into a callback-queue block.
private struct UncheckedSender: @unchecked Sendable {  // the operation is Sendable; `Operation` just does not say so
    let object: Operation

    init(_ object: Operation) {
        self.object = object
    }
}

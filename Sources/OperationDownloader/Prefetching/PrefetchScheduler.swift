import Foundation

/// The bookkeeping of one `ImagePrefetcher`: its prefetch calls ("runs"), which URL starts next, how many are in
/// flight, and the counts each run reports. A value type driven under the prefetcher's lock; it never calls
/// out, it only returns the events to deliver and the tokens to cancel, so it is tested without a network.
struct PrefetchScheduler {
    typealias Progress = @Sendable (_ finished: Int, _ total: Int) -> Void
    typealias Completed = @Sendable (_ finished: Int, _ skipped: Int) -> Void

    /// Something to tell a run's caller, in the order the scheduler returned it.
    enum Event {
        case progress(Progress, finished: Int, total: Int)
        case completed(Completed, finished: Int, skipped: Int)
    }

    /// One URL to start: the prefetcher calls the downloader for it, outside the lock.
    struct Job: Equatable {
        let run: UInt64
        let slot: UInt64
        let url: URL
    }

    /// One prefetch call. Its phase only moves forward: running → cancelled (no more starts; the downloads in
    /// flight are being answered) → completed, when the run is removed and its `completed` event returned (once).
    struct Run {
        enum Phase: Equatable { case running, cancelled }

        let urls: [URL]
        var next = 0
        /// URLs in flight: slot → the downloader's token (nil while the downloader is being called, or for a
        /// download the downloader answered synchronously).
        var slots: [UInt64: ImageDownloadToken?] = [:]
        var finished = 0
        var skipped = 0
        var phase = Phase.running
        let progress: Progress?
        let completed: Completed?

        var hasUnstartedURLs: Bool { phase == .running && next < urls.count }
    }

    /// At most this many URLs in flight across every run (at least 1).
    let limit: Int
    private(set) var runs: [UInt64: Run] = [:]
    /// Runs that may still have URLs to start, oldest first (SDWebImagePrefetcher's FIFO queue).
    private var order: [UInt64] = []
    private var orderHead = 0
    private var nextID: UInt64 = 0
    /// URLs in flight now, and the most there ever were.
    private(set) var inFlight = 0
    private(set) var peakInFlight = 0
    /// True while one thread is starting jobs; other threads leave the starting to it (no recursion when the
    /// downloader answers synchronously, no two threads racing for the same slot).
    private var isPumping = false

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Adds a run; an empty one completes at once.
    mutating func add(_ urls: [URL], progress: Progress?, completed: Completed?) -> (id: UInt64, events: [Event]) {
        nextID &+= 1
        let id = nextID
        runs[id] = Run(urls: urls, progress: progress, completed: completed)
        order.append(id)
        return (id, completeIfDone(id))
    }

    /// Claims the right to start jobs; false when another thread already holds it.
    mutating func beginPumping() -> Bool {
        if isPumping { return false }
        isPumping = true
        return true
    }

    /// The next URL to start (reserving its slot), or nil, which also ends the pumping claim.
    mutating func nextJob() -> Job? {
        guard inFlight < limit else {
            isPumping = false
            return nil
        }
        while orderHead < order.count {
            let id = order[orderHead]
            guard var run = runs[id], run.hasUnstartedURLs else {
                orderHead += 1
                compactOrder()
                continue
            }
            nextID &+= 1
            let job = Job(run: id, slot: nextID, url: run.urls[run.next])
            run.next += 1
            run.slots[job.slot] = .some(nil)
            runs[id] = run
            inFlight += 1
            peakInFlight = max(peakInFlight, inFlight)
            return job
        }
        isPumping = false
        return nil
    }

    /// The downloader returned `token` for `job`. True: cancel it now (the run was cancelled meanwhile).
    mutating func started(_ job: Job, token: ImageDownloadToken?) -> Bool {
        guard var run = runs[job.run], run.slots[job.slot] != nil else { return false }  // already answered
        run.slots[job.slot] = .some(token)
        runs[job.run] = run
        return run.phase != .running
    }

    /// The downloader answered `job` (exactly once per job).
    mutating func ended(_ job: Job, succeeded: Bool) -> [Event] {
        guard var run = runs[job.run], run.slots.removeValue(forKey: job.slot) != nil else { return [] }
        inFlight -= 1
        run.finished += 1
        if !succeeded { run.skipped += 1 }
        runs[job.run] = run
        var events: [Event] = []
        if let progress = run.progress { events.append(.progress(progress, finished: run.finished, total: run.urls.count)) }
        return events + completeIfDone(job.run)
    }

    /// Cancels a run: its unstarted URLs end at once (skipped); the tokens returned must be cancelled, and their
    /// answers end the rest.
    mutating func cancel(_ id: UInt64) -> (tokens: [ImageDownloadToken], events: [Event]) {
        guard var run = runs[id], run.phase == .running else { return ([], []) }
        run.phase = .cancelled
        let unstarted = run.urls.count - run.next
        run.next = run.urls.count
        run.finished += unstarted
        run.skipped += unstarted
        runs[id] = run
        var events: [Event] = []
        if unstarted > 0, let progress = run.progress {
            events.append(.progress(progress, finished: run.finished, total: run.urls.count))
        }
        let tokens = run.slots.values.compactMap { $0 }
        return (tokens, events + completeIfDone(id))
    }

    /// Every run not yet completed.
    var activeRunIDs: [UInt64] { runs.keys.sorted() }

    /// Under the caller's lock: completes run `id` when nothing of it is left, and forgets it.
    private mutating func completeIfDone(_ id: UInt64) -> [Event] {
        guard let run = runs[id], run.slots.isEmpty,
              run.next >= run.urls.count || run.phase == .cancelled else { return [] }
        runs[id] = nil
        guard let completed = run.completed else { return [] }
        return [.completed(completed, finished: run.finished, skipped: run.skipped)]
    }

    /// Drops the consumed front of `order` once it dominates, so a long-lived prefetcher stays small.
    private mutating func compactOrder() {
        if orderHead > 64 && orderHead * 2 > order.count {
            order.removeFirst(orderHead)
            orderHead = 0
        }
    }
}

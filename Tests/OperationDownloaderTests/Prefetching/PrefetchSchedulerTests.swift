import Foundation
import Testing
@testable import OperationDownloader

/// The prefetcher's bookkeeping without a network: the slot limit across runs, FIFO between runs, exact counts,
/// exactly one completion per run (also for empty runs, cancels, and answers that race a cancel).
@Suite struct PrefetchSchedulerTests {
    private static func urls(_ count: Int, _ prefix: String = "a") -> [URL] {
        (0..<count).map { URL(string: "http://127.0.0.1/\(prefix)/\($0).png")! }
    }

    /// Collects the events a scheduler returned, as (run label, kind, numbers).
    private final class Log: @unchecked Sendable {  // `lock` guards `entries`
        private let lock = NSLock()
        private var entries: [String] = []
        func progress(_ label: String) -> PrefetchScheduler.Progress {
            { [self] finished, total in lock.withLock { entries.append("\(label) progress \(finished)/\(total)") } }
        }
        func completed(_ label: String) -> PrefetchScheduler.Completed {
            { [self] finished, skipped in lock.withLock { entries.append("\(label) completed \(finished) \(skipped)") } }
        }
        var all: [String] { lock.withLock { entries } }
        func clear() { lock.withLock { entries = [] } }
    }

    private static func run(_ events: [PrefetchScheduler.Event]) {
        for event in events {
            switch event {
            case .progress(let handler, let finished, let total): handler(finished, total)
            case .completed(let handler, let finished, let skipped): handler(finished, skipped)
            }
        }
    }

    /// Takes every job the scheduler hands out now.
    private static func drain(_ scheduler: inout PrefetchScheduler) -> [PrefetchScheduler.Job] {
        let claimed = scheduler.beginPumping()
        #expect(claimed)
        var jobs: [PrefetchScheduler.Job] = []
        while let job = scheduler.nextJob() { jobs.append(job) }
        return jobs
    }

    @Test func neverMoreThanTheLimitInFlightAcrossRuns() {
        var scheduler = PrefetchScheduler(limit: 3)
        let log = Log()
        let a = scheduler.add(Self.urls(4, "a"), progress: nil, completed: log.completed("a"))
        let b = scheduler.add(Self.urls(2, "b"), progress: nil, completed: log.completed("b"))
        #expect(a.events.isEmpty && b.events.isEmpty)
        var jobs = Self.drain(&scheduler)
        #expect(jobs.map(\.url.path) == ["/a/0.png", "/a/1.png", "/a/2.png"])  // oldest run first
        #expect(scheduler.inFlight == 3)
        var finishedOrder: [String] = []
        while !jobs.isEmpty {
            let job = jobs.removeFirst()
            finishedOrder.append(job.url.path)
            Self.run(scheduler.ended(job, succeeded: true))
            jobs += Self.drain(&scheduler)
            #expect(scheduler.inFlight <= 3)
        }
        #expect(finishedOrder == ["/a/0.png", "/a/1.png", "/a/2.png", "/a/3.png", "/b/0.png", "/b/1.png"])
        #expect(scheduler.peakInFlight == 3)
        #expect(log.all == ["a completed 4 0", "b completed 2 0"])
        #expect(scheduler.runs.isEmpty)
    }

    @Test func progressAfterEachURLAndSkippedCountsFailures() {
        var scheduler = PrefetchScheduler(limit: 2)
        let log = Log()
        _ = scheduler.add(Self.urls(3), progress: log.progress("a"), completed: log.completed("a"))
        var jobs = Self.drain(&scheduler)
        Self.run(scheduler.ended(jobs.removeFirst(), succeeded: false))
        jobs += Self.drain(&scheduler)
        Self.run(scheduler.ended(jobs.removeFirst(), succeeded: true))
        Self.run(scheduler.ended(jobs.removeFirst(), succeeded: false))
        #expect(log.all == ["a progress 1/3", "a progress 2/3", "a progress 3/3", "a completed 3 2"])
    }

    @Test func anEmptyRunCompletesAtOnceWithoutProgress() {
        var scheduler = PrefetchScheduler(limit: 1)
        let log = Log()
        let added = scheduler.add([], progress: log.progress("e"), completed: log.completed("e"))
        Self.run(added.events)
        #expect(log.all == ["e completed 0 0"])
        #expect(Self.drain(&scheduler).isEmpty)
        // Cancelling a completed run does nothing.
        let cancelled = scheduler.cancel(added.id)
        #expect(cancelled.tokens.isEmpty && cancelled.events.isEmpty)
    }

    @Test func cancelSkipsUnstartedURLsAndCompletesWhenTheInFlightOnesAnswer() {
        var scheduler = PrefetchScheduler(limit: 2)
        let log = Log()
        let id = scheduler.add(Self.urls(10), progress: log.progress("a"), completed: log.completed("a")).id
        let jobs = Self.drain(&scheduler)
        #expect(jobs.count == 2)
        Self.run(scheduler.ended(jobs[0], succeeded: true))
        let cancel = scheduler.cancel(id)
        Self.run(cancel.events)
        // 8 never started: ended at once, skipped.
        #expect(log.all == ["a progress 1/10", "a progress 9/10"])
        #expect(Self.drain(&scheduler).isEmpty, "a cancelled run started another URL")
        // A second cancel does nothing; the last answer completes the run.
        let second = scheduler.cancel(id)
        #expect(second.events.isEmpty)
        Self.run(scheduler.ended(jobs[1], succeeded: false))
        #expect(log.all.suffix(2) == ["a progress 10/10", "a completed 10 9"])
        #expect(scheduler.inFlight == 0)
    }

    @Test func aCancelWhileTheDownloaderIsBeingCalledCancelsTheTokenAfterwards() {
        var scheduler = PrefetchScheduler(limit: 1)
        let id = scheduler.add(Self.urls(1), progress: nil, completed: nil).id
        let job = Self.drain(&scheduler)[0]
        // The cancel sees no token yet (the downloader has not returned).
        let cancelled = scheduler.cancel(id)
        #expect(cancelled.tokens.isEmpty)
        // When it returns, the prefetcher is told to cancel the token it got.
        let cancelNow = scheduler.started(job, token: nil)
        #expect(cancelNow)
        let events = scheduler.ended(job, succeeded: false)
        #expect(events.isEmpty)  // no handlers, but the run ends
        #expect(scheduler.runs.isEmpty)
    }

    @Test func aSynchronousAnswerBeforeStartedIsCountedOnce() {
        var scheduler = PrefetchScheduler(limit: 1)
        let log = Log()
        _ = scheduler.add(Self.urls(1), progress: nil, completed: log.completed("a"))
        let job = Self.drain(&scheduler)[0]
        Self.run(scheduler.ended(job, succeeded: true))  // e.g. a memory-cache hit inside downloadImage
        let cancelNow = scheduler.started(job, token: nil)
        #expect(!cancelNow)
        let duplicate = scheduler.ended(job, succeeded: true)
        #expect(duplicate.isEmpty)  // a duplicate answer is ignored
        #expect(log.all == ["a completed 1 0"])
    }

    @Test func onlyOneThreadPumpsAtATime() {
        var scheduler = PrefetchScheduler(limit: 1)
        _ = scheduler.add(Self.urls(2), progress: nil, completed: nil)
        let first = scheduler.beginPumping()
        let second = scheduler.beginPumping()
        #expect(first && !second)
        let job = scheduler.nextJob()
        #expect(job != nil)
        let none = scheduler.nextJob()  // limit reached: the claim ends
        #expect(none == nil)
        let again = scheduler.beginPumping()
        #expect(again)
    }

    @Test func manyRunsStayBounded() {
        var scheduler = PrefetchScheduler(limit: 4)
        let log = Log()
        for i in 0..<500 { _ = scheduler.add(Self.urls(3, "r\(i)"), progress: nil, completed: log.completed("r")) }
        var jobs = Self.drain(&scheduler)
        var ended = 0
        while !jobs.isEmpty {
            Self.run(scheduler.ended(jobs.removeFirst(), succeeded: true))
            ended += 1
            jobs += Self.drain(&scheduler)
        }
        #expect(ended == 1500)
        #expect(log.all.count == 500)
        #expect(scheduler.runs.isEmpty)
        #expect(scheduler.peakInFlight == 4)
    }
}

import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import OperationDownloader

/// Walks of several events through `DownloadStateMachine`, checking the facts it stores once: whether
/// `imageDownloadStop` went out, the attempt count, liveness, and what the end releases.
@Suite struct DownloadStateMachineSequenceTests {
    typealias Machine = DownloadStateMachine

    private func newAttempt() -> Attempt {
        Attempt(transfer: InertTransfer(), timeouts: MachineFixture.timeouts, sniffs: false, request: MachineFixture.request)
    }

    @Test func theStopGoesOutOnceWhenTheEndFindsItUnposted() {
        var fixture = MachineFixture(.transferring)
        let end = fixture.machine.finish(.failure(ImageDownloaderError.cancelled), cancelTransfer: true)
        // The whole action: the stop posted, the attempt's clocks stopped and its transfer cancelled, nothing
        // to release, one request observed.
        #expect(end == .finish(.init(
            ending: .failure(ImageDownloaderError.cancelled), notifications: .stop, retryWait: nil,
            clocks: MachineFixture.clocks, transferToCancel: fixture.transfer, release: .init(),
            observed: .init(source: .network, servedStale: false, started: true, attempts: 1))))
        #expect(fixture.machine.stopPosted)
        // Only the first end counts.
        let again = fixture.machine.finish(.failure(ImageDownloaderError.cancelled), cancelTransfer: true)
        #expect(again == .none)
    }

    @Test func aRetriedAttemptPostsItsOwnStopAndTheNextAttemptItsOwn() {
        var fixture = MachineFixture(.waitingToRetry)
        #expect(fixture.machine.stopPosted)  // the failed attempt's stop went out with the retry
        // A cancel during the wait: the end posts no second stop, and cancels the wait.
        guard case .finish(let end) = fixture.machine.finish(.failure(ImageDownloaderError.cancelled), cancelTransfer: true)
        else { Issue.record("no finish"); return }
        #expect(end.notifications.isEmpty)
        #expect(end.retryWait === fixture.wait)
        #expect(end.clocks == nil && end.transferToCancel == nil)
    }

    @Test func theNextAttemptAfterTheWaitPostsAgain() {
        var fixture = MachineFixture(.waitingToRetry)
        let fired = fixture.machine.retryTimerFired(fixture.wait)
        #expect(fired)
        _ = fixture.machine.beginAttempt(newAttempt())
        #expect(!fixture.machine.stopPosted)
        let end = fixture.machine.finish(.failure(ImageDownloaderError.cancelled), cancelTransfer: false)
        #expect(end.finishNotifications == [.imageDownloadStop])
    }

    @Test func anInlineCompletionLeavesTheStopToTheEnd() throws {
        var fixture = MachineFixture(.transferring)
        let completed = fixture.machine.attemptCompleted(fixture.attempt, nothingToDo: true)
        let completion = try #require(completed)
        #expect(completion.inline && !fixture.machine.stopPosted)
        let end = fixture.machine.finish(
            .failure(ImageDownloaderError.cancelled), cancelTransfer: false, alsoPosting: [.finish])
        #expect(end.finishNotifications == [.imageDownloadStop, .imageDownloadFinish])
    }

    @Test func aFinalStepCompletionPostsTheStopItselfAndTheEndDoesNot() throws {
        var fixture = MachineFixture(.transferring)
        fixture.machine.callerJoined(reportsProgress: false, decodes: true, wantsPartialImages: false)
        let completed = fixture.machine.attemptCompleted(fixture.attempt, nothingToDo: true)
        let completion = try #require(completed)
        #expect(!completion.inline && fixture.machine.stopPosted)
        let end = fixture.machine.finish(.failure(ImageDownloaderError.cancelled), cancelTransfer: false)
        #expect(end.finishNotifications == [])
    }

    @Test func aRejectedCacheAnswerLeavesTheStopToTheEnd() {
        var fixture = MachineFixture(.starting)
        let (_, answer) = fixture.machine.servedFromCache(MachineFixture.cached(status: 404))
        #expect(answer.rejected && !fixture.machine.stopPosted)
        #expect(fixture.machine.metrics.source == .httpCache && fixture.machine.metrics.attemptCount == 0)
    }

    @Test func attemptsAreCountedOnceRetriesAndReSendsIncluded() {
        var fixture = MachineFixture(.transferring)
        #expect(fixture.machine.requestsSent == 1)
        // The transport re-sent the request on a fresh connection: the server saw two.
        var sent = TransferMetrics()
        sent.requestsSent = 2
        _ = fixture.machine.transferCompleted(fixture.transfer, metrics: sent, minimumBodySize: 0)
        #expect(fixture.machine.failedAttempt(fixture.transfer)?.attempt == 2)
        _ = fixture.machine.retryScheduled(
            fixture.transfer, error: .invalidDownloadStatusCode(503), wait: fixture.wait, delay: 1, cancelTransfer: false)
        let fired = fixture.machine.retryTimerFired(fixture.wait)
        #expect(fired)
        let second = newAttempt()
        _ = fixture.machine.beginAttempt(second)
        _ = fixture.machine.transferCompleted(second.transfer, metrics: TransferMetrics(), minimumBodySize: 0)
        #expect(fixture.machine.metrics.attemptCount == 3)
    }

    @Test func aRefetchCountsTheRequestOfBothTransfers() {
        var fixture = MachineFixture(.transferring)
        let (_, replaced) = fixture.machine.refetchRequested(replacing: fixture.transfer)
        #expect(replaced)
        let refetch = newAttempt()
        _ = fixture.machine.beginAttempt(refetch)
        // The old transfer's late completion is stale: it counts nothing.
        let late = fixture.machine.transferCompleted(fixture.transfer, metrics: TransferMetrics(), minimumBodySize: 0)
        #expect(late.1 == nil)
        _ = fixture.machine.transferCompleted(refetch.transfer, metrics: TransferMetrics(), minimumBodySize: 0)
        #expect(fixture.machine.metrics.attemptCount == 2)
    }

    @Test func aCancelWhileStartingEndsTheAttemptItBegins() {
        var fixture = MachineFixture(.starting)
        let point = fixture.machine.cancel()
        #expect(point == .beforeStart)
        let attempt = newAttempt()
        guard case .finish(let end) = fixture.machine.beginAttempt(attempt).0 else {
            Issue.record("no finish")
            return
        }
        #expect(end.transferToCancel === attempt.transfer)
        // The first attempt's stop was never posted: the end posts it (as before the machine).
        #expect(end.notifications.names == [.imageDownloadStop])
    }

    @Test func clocksOfAnAttemptThatEndedDuringItsStartAreStoppedAtOnce() {
        var fixture = MachineFixture(.transferring)
        _ = fixture.machine.finish(.failure(ImageDownloaderError.cancelled), cancelTransfer: true)
        let action = fixture.machine.clocksStarted(MachineFixture.clocks, for: fixture.transfer)
        #expect(action == .stopClocks(MachineFixture.clocks))
    }

    @Test func progressIsThrottledByTheMinimumInterval() {
        var fixture = MachineFixture(.transferring)
        fixture.machine.callerJoined(reportsProgress: true, decodes: false, wantsPartialImages: false)
        fixture.machine.minimumProgressInterval = 0.5
        let response = MachineFixture.response()
        _ = fixture.machine.responseArrived(
            response, server: response, fromCache: nil, from: fixture.transfer, maximumResponseSize: 1000)
        fixture.machine.responseAccepted(fixture.transfer, expected: 100, maximumReserved: 1000)
        var reports: [Int] = []
        for _ in 0..<10 {
            let (_, verdict) = fixture.feed(10)
            if case .accept(let report?, _, _) = verdict { reports.append(report.received) }
        }
        #expect(reports == [50, 100])
        #expect(fixture.machine.metrics.receivedBytes == 100 && fixture.attempt.buffer.count == 100)
    }

    @Test func theIntervalIsClampedToZeroThroughOne() {
        var machine = MachineFixture(.pending).machine
        machine.minimumProgressInterval = 3
        #expect(machine.minimumProgressInterval == 1)
        machine.minimumProgressInterval = -1
        #expect(machine.minimumProgressInterval == 0)
    }

    @Test func aStartAfterACancelFinishesWithoutNotifications() {
        var machine = MachineFixture(.pending).machine
        let point = machine.cancel()
        #expect(point == .beforeStart)
        let (action, _) = machine.start(cancelledBefore: false)
        #expect(action.finishNotifications == [])
        #expect(machine.phase == .finished)
    }

    @Test func theEndReleasesTheTransportOnce() {
        var fixture = MachineFixture(.starting)
        fixture.machine.adoptTransport(
            URLSessionTransport(borrowing: URLSession(configuration: .ephemeral)), owned: false)
        guard case .finish(let end) = fixture.machine.finish(.failure(ImageDownloaderError.cancelled), cancelTransfer: false)
        else { Issue.record("no finish"); return }
        #expect(end.release.transport != nil && fixture.machine.transport == nil)
    }

    @Test func aResponseAwaitingItsAuthenticationRetryKeepsNoBodyUntilTheNextResponse() {
        var fixture = MachineFixture(.transferring)
        let unauthorized = MachineFixture.response(status: 401)
        _ = fixture.machine.responseArrived(
            unauthorized, server: unauthorized, fromCache: nil, from: fixture.transfer, maximumResponseSize: 1000)
        fixture.machine.awaitAuthenticationRetry(fixture.transfer)
        guard case .drop = fixture.feed(5).1 else { Issue.record("401 body kept"); return }
        let ok = MachineFixture.response()
        _ = fixture.machine.responseArrived(ok, server: ok, fromCache: nil, from: fixture.transfer, maximumResponseSize: 1000)
        guard case .accept(_, _, let offset) = fixture.feed(5).1 else { Issue.record("body dropped"); return }
        #expect(offset == 0 && fixture.machine.metrics.statusCode == 200)
    }

    @Test func aRevalidatedResponseDeliversTheStoredBodyAndStoresNothing() throws {
        var fixture = MachineFixture(.transferring)
        let cached = MachineFixture.cached()
        let notModified = MachineFixture.response(status: 304)
        _ = fixture.machine.responseArrived(
            TransportResponse(cached.response), server: notModified, fromCache: cached, from: fixture.transfer,
            maximumResponseSize: 1000)
        guard case .drop = fixture.feed(5).1 else { Issue.record("body of a revalidated response kept"); return }
        let completed = fixture.machine.attemptCompleted(fixture.attempt, nothingToDo: false)
        let completion = try #require(completed)
        #expect(completion.data == cached.data && completion.toStore == nil)
        #expect(fixture.machine.metrics.receivedBytes == cached.data.count)
    }

    /// Bytes a caller saw do not stop a retry (progress starts again from the next attempt's first byte); a
    /// cancel does.
    @Test func anAttemptThatReportedBytesIsStillRetriedUnlessCancelled() {
        var fixture = MachineFixture(.transferring)
        fixture.machine.callerJoined(reportsProgress: true, decodes: false, wantsPartialImages: false)
        _ = fixture.feed(5)
        #expect(fixture.machine.failedAttempt(fixture.transfer)?.attempt == 1)
        _ = fixture.machine.cancel()
        #expect(fixture.machine.failedAttempt(fixture.transfer) == nil)  // cancelled: no retry at all
    }

    /// Equality looks at every field of an action: one changed field makes it another action.
    @Test func actionsAreEqualOnlyWhenEveryFieldIs() {
        let fixture = MachineFixture(.transferring)
        typealias Finish = DownloadStateMachine.Finish
        let base = Finish(
            ending: .failure(ImageDownloaderError.cancelled), notifications: .stop, retryWait: fixture.wait,
            clocks: MachineFixture.clocks, transferToCancel: fixture.transfer, release: .init(),
            observed: .init(source: .network, servedStale: false, started: true, attempts: 1))
        #expect(DownloadStateMachine.Action.finish(base) == .finish(base))
        var changes: [(String, (inout Finish) -> Void)] = [
            ("ending", { $0.ending = .failure(ImageDownloaderError.badImageData(.emptyBody)) }),
            ("notifications", { $0.notifications = [] }),
            ("retry wait", { $0.retryWait = RetryWait() }),
            ("clocks", { $0.clocks = nil }),
            ("transfer", { $0.transferToCancel = InertTransfer() }),
            ("release", { $0.release.ownsTransport = true }),
            ("observed", { $0.observed.attempts = 2 }),
        ]
        changes.append(("observed source", { $0.observed.source = .httpCache }))
        for (field, change) in changes {
            var other = base
            change(&other)
            #expect(DownloadStateMachine.Action.finish(base) != .finish(other), "\(field)")
        }
        let retry = DownloadStateMachine.Retry(wait: fixture.wait, delay: 1, clocks: nil, transferToCancel: fixture.transfer)
        #expect(DownloadStateMachine.Action.waitToRetry(retry) == .waitToRetry(retry))
        #expect(DownloadStateMachine.Action.waitToRetry(retry) != .waitToRetry(.init(wait: fixture.wait, delay: 2, clocks: nil, transferToCancel: fixture.transfer)))
        #expect(DownloadStateMachine.Action.cancelTransfer(fixture.transfer) != .cancelTransfer(InertTransfer()))
        #expect(DownloadStateMachine.Action.none != .stopClocks(MachineFixture.clocks))
    }
}

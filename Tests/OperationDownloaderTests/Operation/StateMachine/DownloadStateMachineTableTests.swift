import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import OperationDownloader

/// Every event of `DownloadStateMachine` in every phase: the whole action it returns (payload included, in
/// `MachineFixture.describe`'s words), or its result, and the phase after it. One row per event; the six columns are the phases in `Phase.allCases` order (pending, starting,
/// transferring, waitingToRetry, completing, finished). Impossible transitions run with traps off: the table
/// shows their release-build outcome.
@Suite struct DownloadStateMachineTableTests {
    typealias Phase = DownloadStateMachine.Phase

    struct Event: Sendable, CustomStringConvertible {
        let name: String
        /// Applies the event to the fixture and describes what came back.
        let apply: @Sendable (inout MachineFixture) -> String
        /// "result → phase", per phase in `Phase.allCases` order.
        let expected: [String]
        var description: String { name }
    }

    static let events: [Event] = [
        Event(name: "start", apply: { f in
            let (action, decision) = f.machine.start(cancelledBefore: false)
            return "\(f.describe(action)) \(decision)"
        }, expected: [
            "none begin → starting", "none alreadyStarted → starting", "none alreadyStarted → transferring",
            "none alreadyStarted → waitingToRetry", "none alreadyStarted → completing", "none alreadyStarted → finished",
        ]),
        Event(name: "start after Operation.cancel", apply: { f in
            let (action, decision) = f.machine.start(cancelledBefore: true)
            return "\(f.describe(action)) \(decision)"
        }, expected: [
            finish("cancelled", posts: "", started: false) + " alreadyStarted → finished",
            "none alreadyStarted → starting",
            "none alreadyStarted → transferring",
            "none alreadyStarted → waitingToRetry",
            "none alreadyStarted → completing",
            "none alreadyStarted → finished",
        ]),
        Event(name: "cancel (also the last caller leaving)", apply: { f in "\(f.machine.cancel())" }, expected: [
            "beforeStart → pending", "beforeStart → starting", "running → transferring",
            "running → waitingToRetry", "running → completing", "over → finished",
        ]),
        Event(name: "begin attempt", apply: { f in
            let (action, reports) = f.machine.beginAttempt(Attempt(
                transfer: InertTransfer(), timeouts: MachineFixture.timeouts, sniffs: false, request: MachineFixture.request))
            return "\(f.describe(action)) \(reports.map { "\($0)" } ?? "stop")"
        }, expected: [
            "cancelTransfer(another transfer) stop → pending",
            "none false → transferring",
            finish("cancelled", clocks: "clocks", cancels: "transfer") + " stop → finished",
            finish("cancelled", posts: "", wait: "wait") + " stop → finished",
            finish("cancelled", posts: "") + " stop → finished",
            "cancelTransfer(another transfer) stop → finished",
        ]),
        Event(name: "clocks started", apply: { f in
            let action = f.machine.clocksStarted(MachineFixture.clocks, for: f.transfer)
            return f.describe(action)
        }, expected: [
            "stopClocks(clocks) → pending",
            "stopClocks(clocks) → starting",
            "none → transferring",
            "stopClocks(clocks) → waitingToRetry",
            "stopClocks(clocks) → completing",
            "stopClocks(clocks) → finished",
        ]),
        Event(name: "response", apply: { f in
            let response = MachineFixture.response()
            let (_, check) = f.machine.responseArrived(
                response, server: response, fromCache: nil, from: f.transfer, maximumResponseSize: 100)
            return check == nil ? "stale" : "check"
        }, expected: staleExceptWhileTransferring("check")),
        Event(name: "bytes", apply: { f in
            let (action, verdict) = f.feed(4, limit: 100)
            guard case .accept(_, _, let offset) = verdict else { return "\(f.describe(action)) drop" }
            return "\(f.describe(action)) accept@\(offset)"
        }, expected: [
            "none drop → pending", "none drop → starting", "none accept@0 → transferring",
            "none drop → waitingToRetry", "none drop → completing", "none drop → finished",
        ]),
        Event(name: "bytes over the size limit", apply: { f in
            let (action, _) = f.feed(4, limit: 3)
            return f.describe(action)
        }, expected: [
            "none → pending",
            "none → starting",
            finish("response too large: 4 bytes, more than maximumResponseSize", clocks: "clocks", cancels: "transfer") + " → finished",
            "none → waitingToRetry",
            "none → completing",
            "none → finished",
        ]),
        Event(name: "redirect proposed", apply: { f in
            f.machine.redirectProposed(f.transfer, now: 1, downloaderTransport: nil).map { "\($0.count)" } ?? "stale"
        }, expected: staleExceptWhileTransferring("1")),
        Event(name: "challenge", apply: { f in
            f.machine.credential = URLCredential(user: "u", password: "p", persistence: .none)
            let challenge = TransferChallenge(
                host: "127.0.0.1", port: 80, authenticationMethod: NSURLAuthenticationMethodHTTPBasic, realm: nil,
                previousFailureCount: 0)
            let answer = f.machine.challengeReceived(challenge, from: f.transfer, now: 1, originalHost: "127.0.0.1")
            return answer == nil ? "stale" : "credential"
        }, expected: staleExceptWhileTransferring("credential")),
        Event(name: "transfer completed", apply: { f in
            let (action, ended) = f.machine.transferCompleted(f.transfer, metrics: TransferMetrics(), minimumBodySize: 0)
            return "\(f.describe(action)) \(ended == nil ? "stale" : "ended")"
        }, expected: [
            "none stale → pending",
            "none stale → starting",
            "stopClocks(clocks) ended → transferring",
            "none stale → waitingToRetry",
            "none stale → completing",
            "none stale → finished",
        ]),
        Event(name: "idle or total timeout (no retry)", apply: { f in
            let action = f.machine.finish(
                .failure(ImageDownloaderError.network(URLError(.timedOut))), cancelTransfer: true, ifRunning: f.transfer)
            return f.describe(action)
        }, expected: [
            "none → pending",
            "none → starting",
            finish("timed out", clocks: "clocks", cancels: "transfer") + " → finished",
            "none → waitingToRetry",
            "none → completing",
            "none → finished",
        ]),
        Event(name: "retry scheduled", apply: { f in
            let action = f.machine.retryScheduled(
                f.transfer, error: .invalidDownloadStatusCode(503), wait: RetryWait(), delay: 1, cancelTransfer: true)
            return f.describe(action)
        }, expected: [
            "none → pending",
            "none → starting",
            "waitToRetry(wait another wait, 1.0 s, clocks clocks, cancels transfer) → waitingToRetry",
            "none → waitingToRetry",
            "none → completing",
            "none → finished",
        ]),
        Event(name: "retry timer", apply: { f in "\(f.machine.retryTimerFired(f.wait))" }, expected: [
            "false → pending", "false → starting", "false → transferring",
            "true → starting", "false → completing", "false → finished",
        ]),
        Event(name: "refetch (304 without a match)", apply: { f in
            let (action, replaced) = f.machine.refetchRequested(replacing: f.transfer)
            return "\(f.describe(action)) \(replaced)"
        }, expected: [
            "none false → pending",
            "none false → starting",
            "stopClocks(clocks) true → starting",
            "none false → waitingToRetry",
            "none false → completing",
            "none false → finished",
        ]),
        Event(name: "attempt completed", apply: { f in
            f.machine.attemptCompleted(f.attempt, nothingToDo: false) == nil ? "stale" : "final step"
        }, expected: [
            "stale → pending", "stale → starting", "final step → completing",
            "stale → waitingToRetry", "stale → completing", "stale → finished",
        ]),
        Event(name: "HTTP cache answer (no request)", apply: { f in
            let (action, answer) = f.machine.servedFromCache(MachineFixture.cached())
            return "\(f.describe(action)) cancelled=\(answer.cancelled)"
        }, expected: [
            "none cancelled=true → pending",
            "none cancelled=false → completing",
            finish("cancelled", clocks: "clocks", cancels: "transfer") + " cancelled=true → finished",
            finish("cancelled", posts: "", wait: "wait") + " cancelled=true → finished",
            finish("cancelled", posts: "") + " cancelled=true → finished",
            "none cancelled=true → finished",
        ]),
        Event(name: "stale answer instead of an error", apply: { f in
            let (action, served) = f.machine.servingStale(MachineFixture.cached(), insteadOf: f.transfer)
            return "\(f.describe(action)) \(served == nil ? "stale" : "served")"
        }, expected: [
            "none stale → pending",
            "none stale → starting",
            "stopClocks(clocks) served → transferring",
            "none stale → waitingToRetry",
            "none stale → completing",
            "none stale → finished",
        ]),
        Event(name: "final decode due", apply: { f in f.machine.finalDecodeDue().map { "\($0.decodes)" } ?? "ended" }, expected: [
            "ended → pending", "ended → starting", "ended → transferring",
            "ended → waitingToRetry", "false → completing", "ended → finished",
        ]),
        Event(name: "decode finished (the end)", apply: { f in
            let action = f.machine.finish(.failure(ImageDownloaderError.badImageData(.emptyBody)), cancelTransfer: false)
            return f.describe(action)
        }, expected: [
            "none → pending",
            finish("bad image data: the response body is empty", started: false) + " → finished",
            finish("bad image data: the response body is empty", clocks: "clocks") + " → finished",
            finish("bad image data: the response body is empty", posts: "", wait: "wait") + " → finished",
            finish("bad image data: the response body is empty", posts: "") + " → finished",
            "none → finished",
        ]),
        Event(name: "waiting for another process's fetch", apply: { f in
            f.machine.waitingForSharedFetch()
            return "waited \(f.machine.metrics.waitedForSharedFetch)"
        }, expected: Phase.allCases.map { "waited true → \($0)" }),
        Event(name: "401 awaiting its authentication retry, then bytes", apply: { f in
            f.machine.awaitAuthenticationRetry(f.transfer)
            let (action, verdict) = f.feed(4, limit: 100)
            let sniffer = f.machine.snifferToFeed(f.transfer) == nil ? "no sniffer" : "sniffer"
            guard case .accept = verdict else { return "\(f.describe(action)) drop, \(sniffer)" }
            return "\(f.describe(action)) accept, \(sniffer)"
        }, expected: Phase.allCases.map { "none drop, no sniffer → \($0)" }),
        Event(name: "the next response after a 401", apply: { f in
            f.machine.awaitAuthenticationRetry(f.transfer)
            let response = MachineFixture.response()
            _ = f.machine.responseArrived(response, server: response, fromCache: nil, from: f.transfer, maximumResponseSize: 100)
            return f.machine.snifferToFeed(f.transfer) == nil ? "no sniffer" : "sniffer"
        }, expected: Phase.allCases.map { $0 == .transferring ? "sniffer → transferring" : "no sniffer → \($0)" }),
        Event(name: "sniffer fed: undecided, then not an image", apply: { f in
            guard let sniffer = f.machine.snifferToFeed(f.transfer) else { return "no sniffer" }
            f.machine.snifferFed(f.transfer, sniffer, verdict: .undecided)
            let kept = f.machine.snifferToFeed(f.transfer) != nil
            f.machine.snifferFed(f.transfer, sniffer, verdict: .notAnImage("an HTML page"))
            return "kept \(kept), then \(f.machine.snifferToFeed(f.transfer) == nil ? "done" : "kept")"
        }, expected: staleExceptWhileTransferring("kept true, then done").map { $0.replacingOccurrences(of: "stale", with: "no sniffer") }),
        Event(name: "response accepted (room for the announced body)", apply: { f in
            f.machine.responseAccepted(f.transfer, expected: 10, maximumReserved: 100)
            return "expected \(f.machine.metrics.expectedBytes)"
        }, expected: Phase.allCases.map { "expected 10 → \($0)" }),
        Event(name: "request for an attempt (no resume point)", apply: { f in
            let (request, resuming) = f.machine.requestForAttempt(MachineFixture.request)
            return request == MachineFixture.request && resuming == nil ? "as given" : "changed"
        }, expected: Phase.allCases.map { "as given → \($0)" }),
        Event(name: "caller joined", apply: { f in
            f.machine.callerJoined(reportsProgress: true, decodes: true, wantsPartialImages: true)
            return "\(f.machine.hasProgressHandlers && f.machine.anyCallerDecodes && f.machine.anyCallerWantsPartialImages)"
        }, expected: [
            "true → pending", "true → starting", "true → transferring",
            "true → waitingToRetry", "true → completing", "true → finished",
        ]),
    ]

    /// A finish in `MachineFixture.describe`'s words: what differs between the rows are the arguments.
    static func finish(
        _ ending: String, posts: String = "Stop", wait: String = "nil", clocks: String = "nil", cancels: String = "nil",
        started: Bool = true
    ) -> String {
        "finish(failure(\(ending)), posts [\(posts)], wait \(wait), clocks \(clocks), cancels \(cancels), "
            + "releases (transport nil, owned false, background task nil), "
            + "observed (network, stale false, started \(started), attempts 1))"
    }

    /// "stale" in every phase but transferring, where the event yields `live`.
    static func staleExceptWhileTransferring(_ live: String) -> [String] {
        Phase.allCases.map { $0 == .transferring ? "\(live) → transferring" : "stale → \($0)" }
    }

    @Test(arguments: events, Phase.allCases)
    func eventInPhase(_ event: Event, _ phase: Phase) throws {
        let column = try #require(Phase.allCases.firstIndex(of: phase))
        var fixture = MachineFixture(phase)
        let result = event.apply(&fixture)
        #expect("\(result) → \(fixture.machine.phase)" == event.expected[column], "\(event.name) in \(phase)")
    }

    @Test func everyRowHasEveryPhase() {
        for event in Self.events { #expect(event.expected.count == Phase.allCases.count, "\(event.name)") }
    }
}

import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import OperationDownloader

/// Every event of `DownloadStateMachine` in every phase: the action (or result) it returns and the phase after
/// it. One row per event; the six columns are the phases in `Phase.allCases` order (pending, starting,
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
            return "\(action.kind) \(decision)"
        }, expected: [
            "none begin → starting", "none alreadyStarted → starting", "none alreadyStarted → transferring",
            "none alreadyStarted → waitingToRetry", "none alreadyStarted → completing", "none alreadyStarted → finished",
        ]),
        Event(name: "start after Operation.cancel", apply: { f in
            let (action, decision) = f.machine.start(cancelledBefore: true)
            return "\(action.kind) \(decision)"
        }, expected: [
            "finish alreadyStarted → finished", "none alreadyStarted → starting", "none alreadyStarted → transferring",
            "none alreadyStarted → waitingToRetry", "none alreadyStarted → completing", "none alreadyStarted → finished",
        ]),
        Event(name: "cancel (also the last caller leaving)", apply: { f in "\(f.machine.cancel())" }, expected: [
            "beforeStart → pending", "beforeStart → starting", "running → transferring",
            "running → waitingToRetry", "running → completing", "over → finished",
        ]),
        Event(name: "begin attempt", apply: { f in
            let (action, reports) = f.machine.beginAttempt(Attempt(
                transfer: InertTransfer(), timeouts: MachineFixture.timeouts, sniffs: false, request: MachineFixture.request))
            return "\(action.kind) \(reports.map { "\($0)" } ?? "stop")"
        }, expected: [
            "cancelTransfer stop → pending", "none false → transferring", "finish stop → finished",
            "finish stop → finished", "finish stop → finished", "cancelTransfer stop → finished",
        ]),
        Event(name: "clocks started", apply: { f in
            f.machine.clocksStarted(MachineFixture.clocks, for: f.transfer).kind
        }, expected: [
            "stopClocks → pending", "stopClocks → starting", "none → transferring",
            "stopClocks → waitingToRetry", "stopClocks → completing", "stopClocks → finished",
        ]),
        Event(name: "response", apply: { f in
            let response = MachineFixture.response()
            let (_, check) = f.machine.responseArrived(
                response, server: response, fromCache: nil, from: f.transfer, maximumResponseSize: 100)
            return check == nil ? "stale" : "check"
        }, expected: staleExceptWhileTransferring("check")),
        Event(name: "bytes", apply: { f in
            let (action, verdict) = [UInt8](repeating: 7, count: 4).withUnsafeBytes {
                f.machine.bytesArrived($0, from: f.transfer, now: 1, limit: 100)
            }
            guard case .accept(_, _, let offset) = verdict else { return "\(action.kind) drop" }
            return "\(action.kind) accept@\(offset)"
        }, expected: [
            "none drop → pending", "none drop → starting", "none accept@0 → transferring",
            "none drop → waitingToRetry", "none drop → completing", "none drop → finished",
        ]),
        Event(name: "bytes over the size limit", apply: { f in
            let (action, _) = [UInt8](repeating: 7, count: 4).withUnsafeBytes {
                f.machine.bytesArrived($0, from: f.transfer, now: 1, limit: 3)
            }
            return action.kind
        }, expected: [
            "none → pending", "none → starting", "finish → finished",
            "none → waitingToRetry", "none → completing", "none → finished",
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
            return "\(action.kind) \(ended == nil ? "stale" : "ended")"
        }, expected: [
            "none stale → pending", "none stale → starting", "stopClocks ended → transferring",
            "none stale → waitingToRetry", "none stale → completing", "none stale → finished",
        ]),
        Event(name: "idle or total timeout (no retry)", apply: { f in
            f.machine.finish(
                .failure(ImageDownloaderError.network(URLError(.timedOut))), cancelTransfer: true, ifRunning: f.transfer
            ).kind
        }, expected: [
            "none → pending", "none → starting", "finish → finished",
            "none → waitingToRetry", "none → completing", "none → finished",
        ]),
        Event(name: "retry scheduled", apply: { f in
            f.machine.retryScheduled(
                f.transfer, error: .invalidDownloadStatusCode(503), wait: RetryWait(), delay: 1, cancelTransfer: true
            ).kind
        }, expected: [
            "none → pending", "none → starting", "waitToRetry → waitingToRetry",
            "none → waitingToRetry", "none → completing", "none → finished",
        ]),
        Event(name: "retry timer", apply: { f in "\(f.machine.retryTimerFired(f.wait))" }, expected: [
            "false → pending", "false → starting", "false → transferring",
            "true → starting", "false → completing", "false → finished",
        ]),
        Event(name: "refetch (304 without a match)", apply: { f in
            let (action, replaced) = f.machine.refetchRequested(replacing: f.transfer)
            return "\(action.kind) \(replaced)"
        }, expected: [
            "none false → pending", "none false → starting", "stopClocks true → starting",
            "none false → waitingToRetry", "none false → completing", "none false → finished",
        ]),
        Event(name: "attempt completed", apply: { f in
            f.machine.attemptCompleted(f.attempt, nothingToDo: false) == nil ? "stale" : "final step"
        }, expected: [
            "stale → pending", "stale → starting", "final step → completing",
            "stale → waitingToRetry", "stale → completing", "stale → finished",
        ]),
        Event(name: "HTTP cache answer (no request)", apply: { f in
            let (action, answer) = f.machine.servedFromCache(MachineFixture.cached())
            return "\(action.kind) cancelled=\(answer.cancelled)"
        }, expected: [
            "none cancelled=true → pending", "none cancelled=false → completing", "finish cancelled=true → finished",
            "finish cancelled=true → finished", "finish cancelled=true → finished", "none cancelled=true → finished",
        ]),
        Event(name: "stale answer instead of an error", apply: { f in
            let (action, served) = f.machine.servingStale(MachineFixture.cached(), insteadOf: f.transfer)
            return "\(action.kind) \(served == nil ? "stale" : "served")"
        }, expected: [
            "none stale → pending", "none stale → starting", "stopClocks served → transferring",
            "none stale → waitingToRetry", "none stale → completing", "none stale → finished",
        ]),
        Event(name: "final decode due", apply: { f in f.machine.finalDecodeDue().map { "\($0.decodes)" } ?? "ended" }, expected: [
            "ended → pending", "ended → starting", "ended → transferring",
            "ended → waitingToRetry", "false → completing", "ended → finished",
        ]),
        Event(name: "decode finished (the end)", apply: { f in
            f.machine.finish(.failure(ImageDownloaderError.badImageData(.emptyBody)), cancelTransfer: false).kind
        }, expected: [
            "none → pending", "finish → finished", "finish → finished",
            "finish → finished", "finish → finished", "none → finished",
        ]),
        Event(name: "caller joined", apply: { f in
            f.machine.callerJoined(reportsProgress: true, decodes: true, wantsPartialImages: true)
            return "\(f.machine.hasProgressHandlers && f.machine.anyCallerDecodes && f.machine.anyCallerWantsPartialImages)"
        }, expected: [
            "true → pending", "true → starting", "true → transferring",
            "true → waitingToRetry", "true → completing", "true → finished",
        ]),
    ]

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

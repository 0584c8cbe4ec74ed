import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import OperationDownloader

/// A transfer that does nothing: the machine only compares transfers by identity.
final class InertTransfer: TransportTransfer {
    func resume() {}
    func cancel() {}
    func suspendReading() {}
    func resumeReading() {}
    func setPriority(_ priority: Float) {}
}

/// A `DownloadStateMachine` driven as a plain value into one of its phases: no transport, no clock, no lock.
struct MachineFixture {
    typealias Phase = DownloadStateMachine.Phase

    var machine = DownloadStateMachine(metrics: ImageDownloadMetrics(queuedAt: Date(timeIntervalSince1970: 0)))
    /// The running (or last) attempt's transfer, and the attempt.
    let transfer = InertTransfer()
    let attempt: Attempt
    let wait = RetryWait()
    static let timeouts = TransferTimeouts(monitor: .shared, idle: 15, maximumDuration: nil)
    static let request = URLRequest(url: URL(string: "http://127.0.0.1/a.png")!)
    static let clocks = DownloadStateMachine.Clocks(timeouts: timeouts, running: .init(idle: nil, total: nil))

    /// A fresh machine moved into `phase` by the events the operation sends to get there.
    init(_ phase: Phase) {
        attempt = Attempt(transfer: transfer, timeouts: Self.timeouts, sniffs: false, request: Self.request)
        machine.trapsOnImpossibleTransitions = false
        if phase == .pending { return }
        _ = machine.start(cancelledBefore: false)
        switch phase {
        case .pending, .starting:
            return
        case .finished:
            _ = machine.finish(.failure(ImageDownloaderError.cancelled), cancelTransfer: false)
            return
        case .transferring, .waitingToRetry, .completing:
            _ = machine.beginAttempt(attempt)
            _ = machine.clocksStarted(Self.clocks, for: transfer)
        }
        if phase == .waitingToRetry {
            _ = machine.retryScheduled(
                transfer, error: .invalidDownloadStatusCode(503), wait: wait, delay: 1, cancelTransfer: false)
        } else if phase == .completing {
            _ = machine.attemptCompleted(attempt, nothingToDo: false)
        }
        precondition(machine.phase == phase, "fixture reached \(machine.phase), not \(phase)")
    }

    /// An HTTP response as a transport reports it.
    static func response(status: Int = 200) -> TransportResponse {
        TransportResponse(
            url: URL(string: "http://127.0.0.1/a.png")!, statusCode: status, httpVersion: "HTTP/1.1",
            fields: [(name: "Content-Type", value: "image/png")])
    }

    /// A stored HTTP-cache entry of `status`.
    static func cached(status: Int = 200) -> CachedHTTPResponse {
        let entry = HTTPCacheEntryFile(
            kind: .response, key: "http://127.0.0.1:80/a.png", statusCode: status,
            headers: HTTPHeaderFields([(name: "Cache-Control", value: "max-age=600")]), varyValues: [:],
            requestDate: Date(timeIntervalSince1970: 0), responseDate: Date(timeIntervalSince1970: 0),
            body: Data("png".utf8))
        return CachedHTTPResponse(entry: entry, url: URL(string: "http://127.0.0.1/a.png")!, fileName: "f")!
    }
}

extension DownloadStateMachine.Action {
    /// The action's kind, for the tables.
    var kind: String {
        switch self {
        case .none: "none"
        case .stopClocks: "stopClocks"
        case .cancelTransfer: "cancelTransfer"
        case .finish: "finish"
        case .waitToRetry: "waitToRetry"
        }
    }

    /// The notifications a finish posts before the answers (nil: not a finish).
    var finishNotifications: [Notification.Name]? {
        if case .finish(let end) = self { return end.notifications.names }
        return nil
    }
}

extension DownloadNotifications {
    /// The names, in the order they are posted.
    var names: [Notification.Name] {
        var names: [Notification.Name] = []
        forEachName { names.append($0) }
        return names
    }
}

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
        // It sniffs its body: the sniffer rows of the table need one (nothing else in the machine reads it).
        attempt = Attempt(transfer: transfer, timeouts: Self.timeouts, sniffs: true, request: Self.request)
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
    /// The notifications a finish posts before the answers (nil: not a finish).
    var finishNotifications: [Notification.Name]? {
        if case .finish(let end) = self { return end.notifications.names }
        return nil
    }
}

extension MachineFixture {
    /// `count` body bytes of the fixture's transfer arrive, with the response-size `limit`.
    mutating func feed(_ count: Int, limit: Int = 1000) -> (DownloadStateMachine.Action, DownloadStateMachine.BodyVerdict) {
        [UInt8](repeating: 1, count: count).withUnsafeBytes {
            machine.bytesArrived($0, from: transfer, now: 1, limit: limit)
        }
    }

    /// The whole action in words, payload included, for the tables: the fixture's own objects by name ("transfer",
    /// "wait", "clocks"), any other one as "another …".
    func describe(_ action: DownloadStateMachine.Action) -> String {
        switch action {
        case .none: "none"
        case .stopClocks(let clocks): "stopClocks(\(name(clocks)))"
        case .cancelTransfer(let cancelled): "cancelTransfer(\(name(cancelled)))"
        case .finish(let end):
            "finish(\(name(end.ending)), posts [\(end.notifications.names.map(\.shortName).joined(separator: ","))], "
                + "wait \(name(end.retryWait)), clocks \(name(end.clocks)), cancels \(name(end.transferToCancel)), "
                + "releases \(name(end.release)), observed \(name(end.observed)))"
        case .waitToRetry(let retry):
            "waitToRetry(wait \(name(retry.wait)), \(retry.delay) s, clocks \(name(retry.clocks)), "
                + "cancels \(name(retry.transferToCancel)))"
        }
    }

    private func name(_ transfer: (any TransportTransfer)?) -> String {
        guard let transfer else { return "nil" }
        return transfer === self.transfer ? "transfer" : "another transfer"
    }

    private func name(_ clocks: DownloadStateMachine.Clocks?) -> String {
        guard let clocks else { return "nil" }
        return clocks == Self.clocks ? "clocks" : "other clocks"
    }

    private func name(_ wait: RetryWait?) -> String {
        guard let wait else { return "nil" }
        return wait === self.wait ? "wait" : "another wait"
    }

    private func name(_ ending: DownloadEnding) -> String {
        switch ending {
        case .failure(let error): "failure(\(error))"
        case .images: "images"
        }
    }

    private func name(_ release: DownloadStateMachine.Release) -> String {
        "(transport \(release.transport == nil ? "nil" : "a transport"), owned \(release.ownsTransport), "
            + "background task \(release.backgroundTask.map { String($0.id) } ?? "nil"))"
    }

    private func name(_ observed: DownloadObservation.Ending) -> String {
        "(\(observed.source), stale \(observed.servedStale), started \(observed.started), attempts \(observed.attempts))"
    }
}

extension Notification.Name {
    /// "start", "stop", …: the name without the package's prefix.
    var shortName: String {
        rawValue.replacingOccurrences(of: "OperationDownloader.", with: "").replacingOccurrences(of: "imageDownload", with: "")
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

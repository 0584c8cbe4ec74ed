import Foundation

// What the machine returns compares as a whole (issue 40): the table tests assert each action with its payload.
// Objects it hands out (transfers, transports, retry waits, final images) compare by identity; errors by type and
// description (`any Error` has no equality of its own).

extension DownloadStateMachine.Action: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.none, .none): true
        case (.stopClocks(let a), .stopClocks(let b)): a == b
        case (.cancelTransfer(let a), .cancelTransfer(let b)): a === b
        case (.finish(let a), .finish(let b)): a == b
        case (.waitToRetry(let a), .waitToRetry(let b)): a == b
        default: false
        }
    }
}

extension DownloadStateMachine.Clocks: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.timeouts.monitor === rhs.timeouts.monitor && lhs.timeouts.idle == rhs.timeouts.idle
            && lhs.timeouts.maximumDuration == rhs.timeouts.maximumDuration
            && lhs.running.idle == rhs.running.idle && lhs.running.total == rhs.running.total
    }
}

extension DownloadStateMachine.Finish: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.ending == rhs.ending && lhs.notifications == rhs.notifications && lhs.retryWait === rhs.retryWait
            && lhs.clocks == rhs.clocks && lhs.transferToCancel === rhs.transferToCancel && lhs.release == rhs.release
            && lhs.observed == rhs.observed
    }
}

extension DownloadStateMachine.Retry: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.wait === rhs.wait && lhs.delay == rhs.delay && lhs.clocks == rhs.clocks
            && lhs.transferToCancel === rhs.transferToCancel
    }
}

extension DownloadStateMachine.Release: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.transport === rhs.transport && lhs.ownsTransport == rhs.ownsTransport
            && lhs.backgroundTask?.id == rhs.backgroundTask?.id
            && lhs.backgroundTask.map { type(of: $0.provider) } == rhs.backgroundTask.map { type(of: $0.provider) }
    }
}

extension DownloadEnding: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.images(let a), .images(let b)): a === b
        case (.failure(let a), .failure(let b)): type(of: a) == type(of: b) && String(reflecting: a) == String(reflecting: b)
        default: false
        }
    }
}

extension DownloadObservation.Ending: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.source == rhs.source && lhs.servedStale == rhs.servedStale && lhs.started == rhs.started
            && lhs.attempts == rhs.attempts
    }
}

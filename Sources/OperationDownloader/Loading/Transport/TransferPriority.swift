import Foundation

extension TransferRequest {
    /// The transfer priority for an operation's queue priority (Docs/Options.md): `.highPriority` 0.75, `.lowPriority`
    /// 0.25, otherwise 0.5 (URLSessionTask's scale).
    static func priority(for queuePriority: Operation.QueuePriority) -> Float {
        switch queuePriority {
        case .veryHigh, .high: return 0.75
        case .veryLow, .low: return 0.25
        default: return 0.5
        }
    }
}

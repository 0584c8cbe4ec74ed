import Foundation

extension Notification.Name {
    /// An operation started its network task. Object: the operation.
    public static let imageDownloadStart = Notification.Name("OperationDownloader.imageDownloadStart")
    /// An operation accepted a response. Object: the operation.
    public static let imageDownloadReceiveResponse = Notification.Name("OperationDownloader.imageDownloadReceiveResponse")
    /// An operation's network task stopped (success, failure or cancel). Object: the operation.
    public static let imageDownloadStop = Notification.Name("OperationDownloader.imageDownloadStop")
    /// An operation's network task completed without error. Object: the operation.
    public static let imageDownloadFinish = Notification.Name("OperationDownloader.imageDownloadFinish")
}

/// Which of the four notifications one step posts. A set, not an array of names: arrays cost every download
/// four small allocations (Docs/Transports.md, "Fewer runtime calls per download"). Posted in SPEC order,
/// start → receiveResponse → stop → finish, which is the order of the bits.
struct DownloadNotifications: OptionSet, Sendable {
    let rawValue: UInt8

    static let start = DownloadNotifications(rawValue: 1 << 0)
    static let receiveResponse = DownloadNotifications(rawValue: 1 << 1)
    static let stop = DownloadNotifications(rawValue: 1 << 2)
    static let finish = DownloadNotifications(rawValue: 1 << 3)

    /// Calls `body` with each name in the set, in the order they are posted.
    func forEachName(_ body: (Notification.Name) -> Void) {
        if contains(.start) { body(.imageDownloadStart) }
        if contains(.receiveResponse) { body(.imageDownloadReceiveResponse) }
        if contains(.stop) { body(.imageDownloadStop) }
        if contains(.finish) { body(.imageDownloadFinish) }
    }
}

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

import Decoding
import Foundation
import OperationDownloader

/// One URL's terminal preview pane: the `ImageTarget` that `DownloadCommand` downloads each URL into.
///
/// The image-target API gives the pane one active download at a time, hides late results of a cancelled
/// download, and hands partial (`--progressive`) and final images to `displayImage(_:)`. Everything arrives
/// on the command's serial queue (`imageDeliveryQueue`), so the pane touches the command's records directly.
final class PreviewPane: ImageTarget {
    let index: Int
    /// Weak: the command keeps its panes alive (the target registry holds them weakly), not the reverse.
    private weak var command: DownloadCommand?
    private let queue: DispatchQueue

    init(index: Int, command: DownloadCommand, queue: DispatchQueue) {
        self.index = index
        self.command = command
        self.queue = queue
    }

    var imageDeliveryQueue: DispatchQueue? { queue }

    func displayImage(_ image: DecodedImage?) {
        command?.pane(index, displays: image)
    }
}

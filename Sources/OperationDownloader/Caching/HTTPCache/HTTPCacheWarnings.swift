import Foundation

/// Where one cache's warnings go (`HTTPImageCache.warningHandler`, standard error without one): its layer's
/// write refusals and its Redis connections' outages. Made before either, so both can hold it.
final class HTTPCacheWarnings: @unchecked Sendable {  // `_handler` guarded by `lock`
    private let lock = NSLock()
    private var _handler: (@Sendable (String) -> Void)?

    var handler: (@Sendable (String) -> Void)? {
        get { lock.withLock { _handler } }
        set { lock.withLock { _handler = newValue } }
    }

    func emit(_ message: String) {
        if let handler {
            handler(message)
        } else {
            FileHandle.standardError.write(Data((message + "\n").utf8))
        }
    }
}

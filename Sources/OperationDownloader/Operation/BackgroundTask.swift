import Foundation
#if canImport(UIKit)
import UIKit
#endif

/// Asks the platform to keep running while the app is in the background (`.continueInBackground`).
///
/// The operation begins one when it starts and ends it when it finishes; if the platform's time runs out,
/// `expiration` cancels the download.
public protocol BackgroundTaskProvider: Sendable {
    /// Begins a background task; returns an identifier to end it with, or nil when none could be begun.
    func beginBackgroundTask(expiration: @escaping @Sendable () -> Void) -> Int?
    /// Ends a task begun with `beginBackgroundTask`.
    func endBackgroundTask(_ identifier: Int)
}

/// Where operations get their background-task provider from.
public enum BackgroundTasks {
    private static let storage = Locked<(any BackgroundTaskProvider)?>(platformDefault())

    /// The provider new operations use: UIKit's application on UIKit platforms, none elsewhere (Linux has
    /// no app lifecycle). Replaceable, for example in tests.
    public static var provider: (any BackgroundTaskProvider)? {
        get { storage.current }
        set { storage.withLock { $0 = newValue } }
    }

    private static func platformDefault() -> (any BackgroundTaskProvider)? {
        #if canImport(UIKit) && !os(watchOS)
        return UIApplicationBackgroundTaskProvider()
        #else
        return nil
        #endif
    }
}

#if canImport(UIKit) && !os(watchOS)
/// `UIApplication.beginBackgroundTask` behind `BackgroundTaskProvider`.
struct UIApplicationBackgroundTaskProvider: BackgroundTaskProvider {
    func beginBackgroundTask(expiration: @escaping @Sendable () -> Void) -> Int? {
        let box = Locked<UIBackgroundTaskIdentifier>(.invalid)
        let begin: @Sendable () -> UIBackgroundTaskIdentifier = {
            MainActor.assumeIsolated {
                UIApplication.shared.beginBackgroundTask {
                    expiration()
                    let id = box.current
                    if id != .invalid { UIApplication.shared.endBackgroundTask(id) }
                }
            }
        }
        // UIApplication is main-thread only; avoid sync-to-main deadlock when already there.
        let id = Thread.isMainThread ? begin() : DispatchQueue.main.sync(execute: begin)
        box.withLock { $0 = id }
        return id == .invalid ? nil : id.rawValue
    }

    func endBackgroundTask(_ identifier: Int) {
        DispatchQueue.main.async {
            MainActor.assumeIsolated {
                UIApplication.shared.endBackgroundTask(UIBackgroundTaskIdentifier(rawValue: identifier))
            }
        }
    }
}
#endif

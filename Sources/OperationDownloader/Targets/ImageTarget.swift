import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Something that shows one image at a time: a view, a UI cell, a terminal preview pane, a server-side
/// render slot. Conforming adds AFNetworking's `UIImageView+AFNetworking` model to it:
/// `setImage(with:placeholder:options:context:downloader:progress:completed:)` and `cancelImageDownload()`.
///
/// Each target has at most one active download (AFNetworking's receipt), kept outside the object in a
/// lock-guarded table that holds the target weakly, so any class can conform, including classes you did not
/// write (an extension is enough; no stored properties are needed):
///
/// - a new URL cancels the target's previous download: its caller gets `ImageDownloaderError.cancelled`
///   and the target never shows that image, even if it already arrived;
/// - the same URL while it is still loading does not start a second request;
/// - a memory-cache hit is shown before `setImage` returns; otherwise the placeholder is shown at once;
/// - results, partial images (`.progressiveLoad`) and completions arrive on the callback queue.
///
/// `displayImage(_:)` calls for one target never overlap: they run under that target's lock, which is what
/// makes "a late result never overwrites a newer one" hold when `setImage` is called from several threads.
/// So `displayImage(_:)` must not wait for another thread that sets images on the same target.
public protocol ImageTarget: AnyObject {
    /// Shows `image` (`nil` clears). Called with the placeholder and memory-cache hits on the thread that
    /// called `setImage`, with downloaded and partial images on the delivery queue.
    func displayImage(_ image: DecodedImage?)

    /// Where this target's downloads deliver their results and completions when the call's context names no
    /// queue. `nil` (the default) means the downloader's callback queue. UIKit views answer `.main`.
    var imageDeliveryQueue: DispatchQueue? { get }
}

/// Called once per `setImage` call with the image shown, or the error (`ImageDownloaderError.cancelled` when a
/// later `setImage` or `cancelImageDownload()` superseded the call).
public typealias ImageTargetCompletedHandler = @Sendable (_ result: Result<ImageTargetResult, any Error>) -> Void

extension ImageTarget {
    public var imageDeliveryQueue: DispatchQueue? { nil }

    /// The downloader `setImage` uses when it is given none (AFNetworking's `sharedImageDownloader`). Set per
    /// conforming type; a type that never set one uses `ImageDownloader.shared`.
    public static var sharedImageDownloader: ImageDownloader {
        get { ImageTargetRegistry.shared.downloader(for: Self.self) }
        set { ImageTargetRegistry.shared.setDownloader(newValue, for: Self.self) }
    }

    /// The URL this target is loading, or `nil` when nothing is in flight.
    public var activeImageURL: URL? {
        ImageTargetRegistry.shared.existingState(for: self)?.activeURL
    }

    /// Downloads `url` and shows it on this target.
    ///
    /// - The same URL (and context `cacheIdentifier`) already loading for this target: no new request; this
    ///   call's handlers join the download in flight (its placeholder and options are ignored).
    /// - Otherwise the previous download of this target is cancelled (its caller gets `.cancelled`).
    /// - A memory-cache hit is shown and `completed` runs before this method returns. Otherwise `placeholder`
    ///   is shown before this method returns (`nil` clears the target) and the downloaded image replaces it;
    ///   on failure the placeholder stays. A nil or unsupported URL shows the placeholder and completes at once
    ///   with `.invalidURL`.
    /// - With `.progressiveLoad`, partial images are shown as they decode. `.avoidDecodeImage` is ignored: a
    ///   target needs an image.
    /// - `progress` and `completed` run on the delivery queue: the context's `callbackQueue`, else the
    ///   target's `imageDeliveryQueue`, else the downloader's callback queue.
    ///
    /// - Parameter downloader: the downloader to use; `nil` means `Self.sharedImageDownloader`.
    public func setImage(
        with url: URL?, placeholder: DecodedImage? = nil, options: ImageDownloaderOptions = [],
        context: ImageDownloaderContext? = nil, downloader: ImageDownloader? = nil,
        progress: ImageDownloaderProgressHandler? = nil, completed: ImageTargetCompletedHandler? = nil
    ) {
        ImageTargetRegistry.shared.state(for: self).load(
            .url(url), placeholder: placeholder, options: options, context: context,
            downloader: downloader ?? Self.sharedImageDownloader, progress: progress, completed: completed)
    }

    /// Like `setImage(with:...)` for a full request (its headers win over the downloader's; its cache policy
    /// decides whether the memory cache is consulted).
    public func setImage(
        with request: URLRequest, placeholder: DecodedImage? = nil, options: ImageDownloaderOptions = [],
        context: ImageDownloaderContext? = nil, downloader: ImageDownloader? = nil,
        progress: ImageDownloaderProgressHandler? = nil, completed: ImageTargetCompletedHandler? = nil
    ) {
        ImageTargetRegistry.shared.state(for: self).load(
            .request(request), placeholder: placeholder, options: options, context: context,
            downloader: downloader ?? Self.sharedImageDownloader, progress: progress, completed: completed)
    }

    /// Cancels this target's download, if one is in flight: its caller gets `.cancelled`, the target keeps
    /// what it shows (usually the placeholder).
    public func cancelImageDownload() {
        ImageTargetRegistry.shared.existingState(for: self)?.cancel()
    }
}

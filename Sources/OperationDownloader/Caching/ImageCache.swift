import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An in-memory store of decoded images by string identifier (AFNetworking's `AFImageCache`).
public protocol ImageCache: AnyObject, Sendable {
    /// Stores `image` under `identifier`, replacing what was there.
    func add(_ image: DecodedImage, withIdentifier identifier: String)
    /// Removes the image under `identifier`; returns whether there was one.
    @discardableResult func removeImage(withIdentifier identifier: String) -> Bool
    /// Removes every image; returns whether anything was removed.
    @discardableResult func removeAllImages() -> Bool
    /// The image under `identifier`, if any (refreshes its last-access time).
    func image(withIdentifier identifier: String) -> DecodedImage?
    /// Called when the downloader starts decoding an image it will add, with that image's cost (width × height
    /// × 4), before the pixel memory exists: a cache with a capacity evicts now what adding the image would
    /// evict, so the images it holds and the one being decoded for it stay within that capacity together.
    /// The default does nothing.
    func makeRoom(forCost cost: UInt64)
}

extension ImageCache {
    public func makeRoom(forCost cost: UInt64) {}
}

/// An `ImageCache` keyed by request: the identifier is the request's absolute URL plus an optional
/// additional identifier (AFNetworking's `AFImageRequestCache`).
public protocol ImageRequestCache: ImageCache {
    /// Whether `image` downloaded for `request` should be stored (default: yes).
    func shouldCache(_ image: DecodedImage, for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool
    /// Stores `image` for `request`.
    func add(_ image: DecodedImage, for request: URLRequest, withAdditionalIdentifier identifier: String?)
    /// Removes the image stored for `request`; returns whether there was one.
    @discardableResult func removeImage(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool
    /// The image stored for `request`, if any.
    func image(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> DecodedImage?
}

extension ImageRequestCache {
    public func shouldCache(_ image: DecodedImage, for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool {
        true
    }
    public func add(_ image: DecodedImage, for request: URLRequest, withAdditionalIdentifier identifier: String?) {
        guard let key = imageCacheKey(for: request, additionalIdentifier: identifier) else { return }
        add(image, withIdentifier: key)
    }
    @discardableResult
    public func removeImage(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool {
        guard let key = imageCacheKey(for: request, additionalIdentifier: identifier) else { return false }
        return removeImage(withIdentifier: key)
    }
    public func image(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> DecodedImage? {
        guard let key = imageCacheKey(for: request, additionalIdentifier: identifier) else { return nil }
        return image(withIdentifier: key)
    }
}

/// The memory-cache key: the absolute URL, then U+001F and the additional identifier if any. An absolute URL
/// never contains U+001F, so the two parts never run together (AFNetworking's plain concatenation made
/// ".../a" + "b" the key of ".../ab"). The downloader's additional identifier carries the caller's cache
/// identifier and its variant (thumbnail size, scale, transformer...; see `ImageVariant`).
public func imageCacheKey(for request: URLRequest, additionalIdentifier: String?) -> String? {
    guard let url = request.url?.absoluteString else { return nil }
    guard let extra = additionalIdentifier, !extra.isEmpty else { return url }
    return url + "\u{1F}" + extra
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
@testable import OperationDownloader

/// A custom operation class that is not an `ImageDownloaderOperation` subclass and needs no network: when the
/// queue runs it, it answers every caller with `image`. It takes at most `capacity` callers (the URL's
/// `capacity` query item; default unbounded) and then refuses more, as a class may.
final class ScriptedForeignOperation: Operation, ImageDownloaderOperationProtocol, @unchecked Sendable {  // `lock` guards `callers`
    /// The image every caller gets: 3×1 pixels.
    static let image = DecodedImage(width: 3, height: 1, pixels: [UInt8](repeating: 200, count: 12), format: .undefined)
    /// Every operation made, by URL (lock-guarded).
    static let made = Locked<[String: Int]>([:])

    let request: URLRequest?
    var response: URLResponse? { nil }
    var dataTask: URLSessionTask? { nil }
    var credential: URLCredential?
    var minimumProgressInterval: Double = 0
    var acceptableStatusCodes: IndexSet?
    var acceptableContentTypes: Set<String>?
    var metrics: ImageDownloadMetrics? { nil }

    private final class Caller {
        let completed: ImageDownloaderCompletedHandler?
        init(_ completed: ImageDownloaderCompletedHandler?) { self.completed = completed }
    }

    private let lock = NSLock()
    private var callers: [Caller] = []
    private var closed = false
    private let capacity: Int

    init(request: URLRequest, session: URLSession?, options: ImageDownloaderOptions, context: ImageDownloaderContext?) {
        self.request = request
        let items = request.url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false)?.queryItems } ?? []
        capacity = items.first { $0.name == "capacity" }?.value.flatMap(Int.init) ?? .max
        super.init()
        Self.made.withLock { $0[request.url?.absoluteString ?? "", default: 0] += 1 }
    }

    func addHandlers(forProgress: ImageDownloaderProgressHandler?, completed: ImageDownloaderCompletedHandler?) -> AnyObject? {
        lock.withLock {
            guard !closed, callers.count < capacity else { return nil }
            let caller = Caller(completed)
            callers.append(caller)
            return caller
        }
    }

    func cancel(_ token: AnyObject?) -> Bool {
        let (removed, wasLast): (Caller?, Bool) = lock.withLock {
            guard let index = callers.firstIndex(where: { $0 === token }) else { return (nil, false) }
            let removed = callers.remove(at: index)
            if callers.isEmpty { closed = true }
            return (removed, callers.isEmpty)
        }
        removed?.completed?(nil, nil, ImageDownloaderError.cancelled, true)
        if wasLast { cancel() }
        return wasLast
    }

    override func main() {
        let answered: [Caller] = lock.withLock {
            closed = true
            return callers
        }
        for caller in answered {
            if isCancelled {
                caller.completed?(nil, nil, ImageDownloaderError.cancelled, true)
            } else {
                caller.completed?(Self.image, nil, nil, true)
            }
        }
    }
}

/// A memory cache that counts what is added to it (and keeps it, so later lookups hit).
final class CountingImageCache: ImageRequestCache, @unchecked Sendable {  // `lock` guards `added` and `images`
    private let lock = NSLock()
    private var added: [String?] = []
    private var images: [String: DecodedImage] = [:]

    /// The additional identifier of every `add`, in order.
    var additions: [String?] { lock.withLock { added } }

    private func key(_ request: URLRequest, _ identifier: String?) -> String {
        (request.url?.absoluteString ?? "") + "|" + (identifier ?? "")
    }

    func shouldCache(_ image: DecodedImage, for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool {
        true
    }

    func add(_ image: DecodedImage, for request: URLRequest, withAdditionalIdentifier identifier: String?) {
        lock.withLock {
            added.append(identifier)
            images[key(request, identifier)] = image
        }
    }

    func removeImage(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool {
        lock.withLock { images.removeValue(forKey: key(request, identifier)) != nil }
    }

    func image(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> DecodedImage? {
        lock.withLock { images[key(request, identifier)] }
    }

    func add(_ image: DecodedImage, withIdentifier identifier: String) {
        lock.withLock { images[identifier] = image }
    }

    func removeImage(withIdentifier identifier: String) -> Bool {
        lock.withLock { images.removeValue(forKey: identifier) != nil }
    }

    func removeAllImages() -> Bool {
        lock.withLock {
            defer { images = [:] }
            return !images.isEmpty
        }
    }

    func image(withIdentifier identifier: String) -> DecodedImage? {
        lock.withLock { images[identifier] }
    }
}

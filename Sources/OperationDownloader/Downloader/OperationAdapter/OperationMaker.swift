import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Makes a downloader's operations of its configured class (`ImageDownloaderConfiguration.operationClass`), each
/// as a `DownloadOperationHandle`. The one place that looks at the class, once, when the downloader is made.
struct OperationMaker: Sendable {
    private enum Kind {
        /// `ImageDownloaderOperation` or a subclass: its own handle.
        case native(ImageDownloaderOperation.Type)
        /// Any other class: wrapped (ForeignOperation).
        case foreign(any ImageDownloaderOperationProtocol.Type)
    }

    private let kind: Kind

    init(operationClass: (any ImageDownloaderOperationProtocol.Type)?) {
        if let operationClass {
            if let native = operationClass as? ImageDownloaderOperation.Type {
                kind = .native(native)
            } else {
                kind = .foreign(operationClass)
            }
        } else {
            kind = .native(ImageDownloaderOperation.self)
        }
    }

    /// Whether callers that want different variants of one URL (thumbnail size, scale, transformer) need an
    /// operation each: another class may ignore a caller's own context (the protocol's default
    /// `addHandlers` does), so each variant gets its own download and memory-cache entry. This package's
    /// operation decodes each caller's variant from one transfer.
    var separatesVariants: Bool {
        if case .foreign = kind { return true }
        return false
    }

    /// Why a downloader whose transport has no URLSession (curl) cannot run these operations, or nil when it
    /// can: a class that is not an `ImageDownloaderOperation` creates its own task in the `URLSession` it is
    /// given. Its downloads fail with `.unsupportedOnPlatform` instead of silently going through URLSession,
    /// which would drop what curl was chosen for (the CA file, the pins, the proxy).
    var reasonItNeedsURLSession: String? {
        guard case .foreign(let type) = kind else { return nil }
        return "the operation class \(type) is not an ImageDownloaderOperation subclass and needs "
            + "a URLSession: set ImageDownloaderConfiguration.transport = .urlSession to use it"
    }

    /// A new operation of `request` with the filled `context` (which it takes through `init`; its plumbing
    /// carries the download's one memory-cache writer) and the configuration's per-operation settings.
    func make(
        request: URLRequest, session: URLSession?, options: ImageDownloaderOptions,
        context: consuming ImageDownloaderContext?, configuration: ImageDownloaderConfiguration
    ) -> any DownloadOperationHandle {
        let priority = ImageDownloader.priority(for: options)
        switch kind {
        case .native(let type):
            let operation = type.init(request: request, session: session, options: options, context: context)
            // A fresh operation of this class already has the defaults: only what differs is set (each setter
            // takes the operation's lock, and the queue priority's notifies observers).
            if let credential = configuration.effectiveCredential { operation.credential = credential }
            if configuration.minimumProgressInterval != 0 {
                operation.minimumProgressInterval = configuration.minimumProgressInterval
            }
            if let codes = configuration.acceptableStatusCodes { operation.acceptableStatusCodes = codes }
            if let types = configuration.acceptableContentTypes { operation.acceptableContentTypes = types }
            if priority != .normal { operation.queuePriority = priority }
            return operation
        case .foreign(let type):
            // The wrapper writes the memory cache; the class gets the rest of the plumbing, as any context.
            let memoryCache = context?.plumbing?.memoryCache
            context?.plumbing?.memoryCache = nil
            let operation = type.init(request: request, session: session, options: options, context: context)
            operation.credential = configuration.effectiveCredential
            operation.minimumProgressInterval = configuration.minimumProgressInterval
            operation.acceptableStatusCodes = configuration.acceptableStatusCodes
            operation.acceptableContentTypes = configuration.acceptableContentTypes
            operation.queuePriority = priority
            return ForeignOperation(operation, memoryCache: memoryCache)
        }
    }
}

import Foundation

/// What a curl transport is made with, resolved once from the downloader's configuration.
struct CurlTransportSettings: Sendable {
    /// Connections per host (`CURLMOPT_MAX_HOST_CONNECTIONS`); transfers beyond wait inside libcurl for one
    /// to free up. HTTP/2 multiplexes every transfer to a host over one connection.
    var maximumConnectionsPerHost = 6
    /// Transfers running at once; later ones wait in priority order (nil: no limit of the transport's own,
    /// libcurl's per-host queue is first come, first served).
    var maximumActiveTransfers: Int?
    var tls = ImageDownloaderTLSConfiguration.systemDefault
    var proxy = ImageDownloaderProxyConfiguration.environment
    /// `CURLOPT_BUFFERSIZE`: the most body bytes one write callback (one `didReceive data`) carries.
    var receiveBufferSize = 64 * 1024

    init() {}

    /// The downloader's settings: as many connections per host as downloads run at once.
    init(configuration: ImageDownloaderConfiguration) {
        maximumConnectionsPerHost = max(1, configuration.maxConcurrentDownloads)
        tls = configuration.tls
        proxy = configuration.proxy
    }
}

/// The libcurl transport (`ImageDownloaderTransport.curl`): one multi handle driven by one thread, easy
/// handles reused, per-host connection cap, HTTP/2 multiplexing over TLS, keep-alive, IPv6, content
/// decoding, TLS and proxy settings, and libcurl's transfer metrics.
///
/// It moves bytes and reports what came back; the operation keeps the rules (redirect policy, credentials,
/// cookies, the HTTP cache, timeouts) through the seam. Events are delivered on the curl thread.
final class CurlTransport: DownloadTransport {
    let settings: CurlTransportSettings
    /// nil when libcurl cannot be used here (`unavailableReason` says why).
    private let driver: CurlMultiDriver?
    private let unavailableReason: String?
    private let invalidated = Locked(false)

    /// `library` is the process's libcurl; tests pass a failure to check the unavailable path.
    init(settings: CurlTransportSettings, library: Result<CurlLibraryInfo, CurlLibraryUnavailable> = CurlAvailability.library) {
        self.settings = settings
        switch library {
        case .success(let info):
            driver = CurlMultiDriver(settings: settings, library: info)
            unavailableReason = driver == nil ? "libcurl could not create a multi handle" : nil
        case .failure(let failure):
            driver = nil
            unavailableReason = failure.description
        }
    }

    convenience init(configuration: ImageDownloaderConfiguration) {
        self.init(settings: CurlTransportSettings(configuration: configuration))
    }

    /// Why a downloader on curl cannot run operations of `operationClass`, or nil when it can: a class that is
    /// not an `ImageDownloaderOperation` creates its own task in the `URLSession` it is given, and there is no
    /// session on curl. Its downloads fail with `.unsupportedOnPlatform` instead of silently going through
    /// URLSession, which would drop what curl was chosen for (the CA file, the pins, the proxy).
    static func unsupportedOperationClass(_ operationClass: (any ImageDownloaderOperationProtocol.Type)?) -> String? {
        guard let operationClass, !(operationClass is ImageDownloaderOperation.Type) else { return nil }
        return "the operation class \(operationClass) is not an ImageDownloaderOperation subclass and needs "
            + "a URLSession: set ImageDownloaderConfiguration.transport = .urlSession to use it"
    }

    deinit {
        // Transfers still running finish first; the thread then ends by itself.
        driver?.post(.shutdown(cancellingTransfers: false))
    }

    func makeTransfer(_ request: TransferRequest, client: any TransferClient) -> any TransportTransfer {
        if let unavailableReason {
            return CurlTransfer(request: request, client: client, driver: nil,
                                failure: ImageDownloaderError.unsupportedOnPlatform(unavailableReason))
        }
        if invalidated.withLock({ $0 }) {
            return CurlTransfer(request: request, client: client, driver: nil,
                                failure: CurlErrorMapping.urlError(.cancelled, "the curl transport was invalidated",
                                                                   url: request.urlRequest.url))
        }
        return CurlTransfer(request: request, client: client, driver: driver, failure: nil)
    }

    func invalidate(cancellingTransfers: Bool) {
        let first = invalidated.withLock { flag -> Bool in
            defer { flag = true }
            return !flag
        }
        guard first else { return }
        driver?.post(.shutdown(cancellingTransfers: cancellingTransfers))
    }
}

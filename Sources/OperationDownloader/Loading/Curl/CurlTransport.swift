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

    deinit {
        // Transfers still running finish first; the thread then ends by itself.
        driver?.post(.shutdown(cancellingTransfers: false))
    }

    func makeTransfer(_ request: TransferRequest, client: any TransferClient) -> any TransportTransfer {
        // A transfer that cannot run is the seam's one failed transfer, as on every transport.
        guard let driver else {
            let reason = unavailableReason ?? "libcurl could not create a multi handle"
            return FailedTransfer(client: client, error: ImageDownloaderError.unsupportedOnPlatform(reason))
        }
        if invalidated.withLock({ $0 }) {
            return FailedTransfer(client: client, error: CurlErrorMapping.urlError(
                .cancelled, "the curl transport was invalidated", url: request.urlRequest.url))
        }
        return CurlTransfer(request: request, client: client, driver: driver)
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

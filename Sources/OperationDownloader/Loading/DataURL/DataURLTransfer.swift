import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `data:` URL served by the package, the same on every transport (libcurl loads only http(s), and corelibs'
/// URLSession hangs on a data: URL whose base64 is invalid). Docs/Transports.md says what it reports.
///
/// Shaped like a network transfer, so the operation treats it like one: a response (a plain `URLResponse`
/// with the media type, `expectedContentLength` = the decoded size, `textEncodingName` = the charset), the
/// body in chunks, then the end, delivered one at a time on a global queue. The size is known before any byte
/// is decoded, so `maximumResponseSize` rejects a huge payload at the response, as an honest Content-Length
/// would. A payload that is not valid (bad base64, no comma) ends the transfer with `URLError(.badURL)` saying
/// why.
final class DataURLTransfer: TransportTransfer, @unchecked Sendable {  // `lock` guards `stage`
    private enum Stage { case created, running, ended }

    /// Body bytes per event (a network transfer delivers similar pieces; progress and the size check see each).
    static let chunkSize = 64 * 1024

    let request: TransferRequest
    private weak var client: (any TransferClient)?
    private let lock = NSLock()
    private var stage = Stage.created

    init(request: TransferRequest, client: any TransferClient) {
        self.request = request
        self.client = client
    }

    /// Whether this transfer serves `url` (its scheme is `data`).
    static func serves(_ url: URL?) -> Bool {
        // On every download's path: "http"/"https" are ruled out by the first byte of the URL's text (the scheme
        // comes first), which is stored, where `scheme` would parse the URL again on every download.
        guard let url, let first = url.absoluteString.utf8.first, first | 0x20 == UInt8(ascii: "d") else { return false }
        return url.scheme?.lowercased() == "data"
    }

    func resume() {
        let starts: Bool = lock.withLock {
            guard stage == .created else { return false }
            stage = .running
            return true
        }
        guard starts else { return }
        DispatchQueue.global(qos: .userInitiated).async { [self] in run() }
    }

    func cancel() {
        lock.withLock { stage = .ended }
    }

    /// Nothing to hold back: the payload is already in memory (in the URL), and the size check bounds the copy.
    func suspendReading() {}
    func resumeReading() {}
    func setPriority(_ priority: Float) {}

    private var isRunning: Bool { lock.withLock { stage == .running } }

    private func run() {
        let started = DispatchTime.now().uptimeNanoseconds
        var metrics = TransferMetrics()
        func end(_ error: URLError?) {
            metrics.totalDuration = Double(DispatchTime.now().uptimeNanoseconds &- started) / 1e9
            let live: Bool = lock.withLock {
                guard stage == .running else { return false }
                stage = .ended
                return true
            }
            guard live, let client else { return }
            client.transfer(self, didCompleteWith: error, metrics: metrics)
        }
        guard let url = request.urlRequest.url else {
            end(URLError(.badURL))
            return
        }
        let parsed: DataURL
        let length: Int
        do {
            parsed = try DataURL(url)
            length = try parsed.validate()
        } catch {
            end(URLError(.badURL, userInfo: [NSLocalizedDescriptionKey: String(describing: error), NSURLErrorFailingURLErrorKey: url]))
            return
        }
        let response = URLResponse(
            url: url, mimeType: parsed.mimeType, expectedContentLength: length, textEncodingName: parsed.charset)
        guard isRunning, let client else { return }
        metrics.timeToFirstByte = Double(DispatchTime.now().uptimeNanoseconds &- started) / 1e9
        client.transfer(self, didReceive: TransportResponse(response))
        guard length <= request.maximumResponseSize else {
            // The client rejects the announced size itself; without one that does, the transfer stops here.
            end(URLError(.dataLengthExceedsMaximum))
            return
        }
        var received = 0
        parsed.decode(chunkSize: Self.chunkSize) { chunk in
            guard isRunning, let client = self.client else { return false }
            received += chunk.count
            client.transfer(self, didReceive: chunk)
            return true
        }
        metrics.bytesReceived = received
        end(nil)
    }
}

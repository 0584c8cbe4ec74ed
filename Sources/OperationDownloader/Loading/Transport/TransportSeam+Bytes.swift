import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TransferClient {
    /// Default: the bytes copied into a `Data`, delivered through `transfer(_:didReceive:)`, so that a client
    /// implementing only that method works with every transport.
    func transfer(_ transfer: any TransportTransfer, didReceiveBytes bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        self.transfer(transfer, didReceive: Data(bytes: base, count: bytes.count))
    }

    /// A Foundation response (URLSession's, a `data:` URL's, a test's), handed through as it is.
    func transfer(_ transfer: any TransportTransfer, didReceive response: URLResponse) {
        self.transfer(transfer, didReceive: TransportResponse(response))
    }
}

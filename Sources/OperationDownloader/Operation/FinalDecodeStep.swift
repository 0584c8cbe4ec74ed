import Foundation
import Decoding
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The last step of a download, once its bytes are complete (on the coder queue, or on the transport's thread
/// when nobody wants an image): empty body, `.ignoreCachedResponse`, the decryptor, then one image per variant
/// the callers want (`FinalImages`).
struct FinalDecodeStep {
    let url: URL?
    /// The decryptor, the coders and the pixel limit are the transfer's.
    let transfer: TransferOptions
    let transaction: HTTPCacheTransaction?
    /// Cancelled with the operation (a decode waiting for the decode memory budget stops waiting); set when the
    /// decode is due (`DownloadStateMachine.finalDecodeDue`).
    var decodeCancellation: ImageDecodingCancellation? = nil
    /// Times each decode and its budget wait (nil without telemetry).
    var observation: DownloadObservation? = nil

    /// How the download ends. `callers`: decoded for them while the store is still open (a caller joining
    /// later gets its variant decoded when it is answered); nil when nobody wants an image. `response` is
    /// read only for a decryptor (a Foundation response is made on demand: TransportResponse.swift).
    func run(
        _ received: Data, response: @autoclosure () -> URLResponse?, incremental: IncrementalDecoding?, callers: [CallbackRecord]?
    ) -> DownloadEnding {
        guard !received.isEmpty else { return .failure(ImageDownloaderError.badImageData(.emptyBody)) }
        if transaction?.isCachedBody(received) == true { return .failure(ImageDownloaderError.cacheNotModified) }
        var data = received
        if let decryptor = transfer.decryptor {
            guard let decrypted = decryptor.decryptedData(with: received, response: response()), !decrypted.isEmpty else {
                return .failure(ImageDownloaderError.badImageData(.decryptorFailed))
            }
            data = decrypted
        }
        let coders = transfer.codersManager
        var finished: [ImageVariant.Decoding: FinalImages.Outcome] = [:]
        for (decoding, outcome) in incremental?.finish() ?? [:] {
            let scale = decoding.options(url: url, defaultMaximumPixelCount: nil).scaleFactor
            finished[decoding] = FinalImages.checked(outcome, data: data, scale: scale, coders: coders.coders)
        }
        var makeRoom: (@Sendable (Int) -> Void)?
        // The memory cache the images will be added to is told each decode's image size before its pixels exist.
        if let memoryCache = transfer.plumbing?.memoryCache { makeRoom = { memoryCache.makeRoom(forBytes: $0) } }
        let images = FinalImages(
            data: data, url: url, manager: coders, maximumPixelCount: transfer.maximumPixelCount, finishedIncrementally: finished,
            cancellation: decodeCancellation, makeRoom: makeRoom, observation: observation,
            decodingBudget: transfer.plumbing?.resources.decodingBudget ?? .shared)
        if let callers { images.prepare(callers) }
        return .images(images)
    }
}

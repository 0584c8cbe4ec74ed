import Foundation
import Decoding

/// Partial images, per caller: only callers that asked for them (`.progressiveLoad` in their own options) get
/// them, and incremental decoders run only for their variants. A caller that asks joins a transfer already
/// running (with or without partial images) and gets an incremental decoder fed the bytes received so far;
/// the others share the transfer and get the final image alone (Docs/Options.md, "Per transfer or per caller").
extension ImageDownloaderOperation {
    /// At the start of an attempt: one incremental decoder per distinct decoding variant among the callers so
    /// far that want partial images (later ones add theirs when they join). None of them: nothing is made.
    func startIncrementalDecoding() {
        // The common download (nobody asked) costs one uncontended lock here, no snapshot of the callers.
        guard modifyState({ $0.anyCallerWantsPartialImages }) else { return }
        let wanted = Set(callers.snapshot.lazy.filter(\.wantsPartialImages).compactMap(\.variant.decoding))
        for decoding in wanted { addIncrementalStream(for: decoding) }
    }

    /// Adds an incremental decoder for `decoding` while an attempt runs, making the attempt's
    /// `IncrementalDecoding` with the first one. Under the lock that orders the chunks, so the stream's prefix
    /// and the chunks fed later fit together. Between attempts nothing is made: the next attempt's start looks
    /// at its callers.
    func addIncrementalStream(for decoding: ImageVariant.Decoding) {
        guard transferOptions.mayDecodeIncrementally else { return }
        let url = requestURL
        let (manager, interval) = (transferOptions.codersManager, transferOptions.progressiveDecodingInterval)
        let options = decoding.options(url: url, defaultMaximumPixelCount: nil)
        modifyState {
            $0.addIncrementalStream(for: decoding, options: options) { queue, after in
                IncrementalDecoding(queue: queue, manager: manager, interval: interval, partialImagesAfter: after) {
                    [weak self] image, decoding, decoders in self?.deliverPartial(image, decoding: decoding, from: decoders)
                }
            }
        }
    }

    /// A partial image of the running attempt's decoders (those of a body that started over are dropped).
    private func deliverPartial(_ image: DecodedImage, decoding: ImageVariant.Decoding, from decoders: IncrementalDecoding) {
        guard modifyState({ $0.attempt != nil && $0.incremental === decoders }) else { return }
        callers.deliverPartial(image, decoding: decoding)
    }

    /// Decoding (partial and final) runs here, never on the transport's thread. Created on first use: a
    /// download that needs no decoding, decryptor or cache write never makes one.
    var coderQueue: DispatchQueue {
        modifyState { $0.madeCoderQueue() }
    }
}

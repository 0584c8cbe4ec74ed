import Foundation
import Decoding

/// Turns a decoded image into another one, after the (thumbnail) decode (Docs/Options.md; SDWebImage's
/// `SDImageTransformer`, Nuke's `ImageProcessing`).
///
/// Set one in `ImageDownloaderContext.transformer`. Callers of one URL with different transformers share one
/// network request; each gets its own transform and its own memory-cache entry, keyed by `key`. The
/// transformer also runs on partial images of a progressive load, so a caller never sees untransformed pixels.
/// A transformer that throws fails only its own caller, with `ImageDownloaderError.badImageData(
/// .transformerFailed(key:error:))` carrying the error it threw, and nothing is cached.
public protocol ImageTransformer: Sendable {
    /// Identifies what the transformer does, with its parameters ("resize(fit,256x256)"): equal keys must mean
    /// equal output for equal input. Part of the memory-cache key, so keep it stable across releases.
    var key: String { get }

    /// The transformed image. Throw for input it cannot handle; never trap.
    func transform(_ image: DecodedImage) throws -> DecodedImage
}

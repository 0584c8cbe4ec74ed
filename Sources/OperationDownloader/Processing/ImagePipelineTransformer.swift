import Decoding
import Foundation

/// Runs transformers in order (SDWebImage's `SDImagePipelineTransformer`; Nuke's `ImageProcessors.Composition`).
///
/// Its key joins the parts' keys with `|` (a `|` or `\` inside a part's key is escaped with `\`, so two
/// different sequences never share a key). Nested pipelines are flattened; an empty pipeline returns the
/// image unchanged and has the key `identity`.
///
/// ```swift
/// context.transformer = ImagePipelineTransformer([
///     ImageResizingTransformer(width: 128, height: 128, mode: .fill),
///     ImageRoundCornerTransformer(radius: 16),
/// ])   // key "resize(fill,128x128,lanczos3)|roundCorners(16.0,15)"
/// ```
public struct ImagePipelineTransformer: ImageTransformer {
    public let transformers: [any ImageTransformer]

    public init(_ transformers: [any ImageTransformer]) {
        self.transformers = transformers.flatMap { part -> [any ImageTransformer] in
            (part as? ImagePipelineTransformer)?.transformers ?? [part]
        }
    }

    public var key: String {
        guard !transformers.isEmpty else { return "identity" }
        return transformers.map { Self.escaped($0.key) }.joined(separator: "|")
    }

    public func transform(_ image: DecodedImage) throws -> DecodedImage {
        var result = image
        for transformer in transformers { result = try transformer.transform(result) }
        return result
    }

    private static func escaped(_ key: String) -> String {
        guard key.contains(where: { $0 == "|" || $0 == "\\" }) else { return key }
        return key.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "|", with: "\\|")
    }
}

/// A valid image that uses a feature this machine's decoder cannot handle, for example lossless JPEG (SOF3)
/// with libjpeg-turbo before 3.0. Thrown instead of `ImageDecodingError.corrupt`, so that callers can tell
/// "well-formed, but not decodable here" (install or upgrade something) from damaged data.
///
/// A separate type rather than a new `ImageDecodingError` case: code that switches over that enum exhaustively
/// keeps compiling.
public struct UnsupportedImageFeature: Error, Sendable, Equatable, CustomStringConvertible {
    /// The container format, e.g. `.jpeg`.
    public let format: ImageFormat
    /// What the image uses, e.g. "lossless JPEG (SOF3)".
    public let feature: String
    /// What would decode it, e.g. "libjpeg-turbo 3.0 or later (this build uses libjpeg-turbo 2.1.5)".
    public let requirement: String

    public init(format: ImageFormat, feature: String, requirement: String) {
        self.format = format
        self.feature = feature
        self.requirement = requirement
    }

    public var description: String { "unsupported \(feature): decoding it needs \(requirement)" }
}

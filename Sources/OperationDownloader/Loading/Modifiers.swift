import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Rewrites a request before it is sent (SDWebImage's `SDWebImageDownloaderRequestModifier`).
/// Returning `nil` fails the download with `ImageDownloaderError.invalidDownloadOperation`.
public protocol ImageDownloaderRequestModifier: Sendable {
    func modifiedRequest(with request: URLRequest) -> URLRequest?
}

/// Rewrites a response before it is validated. Returning `nil` fails the download with
/// `ImageDownloaderError.invalidDownloadResponse`.
public protocol ImageDownloaderResponseModifier: Sendable {
    func modifiedResponse(with response: URLResponse) -> URLResponse?
}

/// Turns the downloaded bytes into image bytes (for example decrypts them) before decoding.
/// Returning `nil` (or no bytes) fails the download with `ImageDownloaderError.badImageData(.decryptorFailed)`.
public protocol ImageDownloaderDecryptor: Sendable {
    func decryptedData(with data: Data, response: URLResponse?) -> Data?
}

/// A request modifier backed by a closure.
public struct ImageDownloaderRequestModifierBlock: ImageDownloaderRequestModifier {
    private let block: @Sendable (URLRequest) -> URLRequest?

    public init(_ block: @escaping @Sendable (URLRequest) -> URLRequest?) {
        self.block = block
    }

    /// A modifier that sets `headers` on every request (replacing values already present).
    public init(headers: [String: String]) {
        self.block = { request in
            var request = request
            for (field, value) in headers { request.setValue(value, forHTTPHeaderField: field) }
            return request
        }
    }

    public func modifiedRequest(with request: URLRequest) -> URLRequest? { block(request) }
}

/// A response modifier backed by a closure.
public struct ImageDownloaderResponseModifierBlock: ImageDownloaderResponseModifier {
    private let block: @Sendable (URLResponse) -> URLResponse?

    public init(_ block: @escaping @Sendable (URLResponse) -> URLResponse?) {
        self.block = block
    }

    public func modifiedResponse(with response: URLResponse) -> URLResponse? { block(response) }
}

/// A decryptor backed by a closure.
public struct ImageDownloaderDecryptorBlock: ImageDownloaderDecryptor {
    private let block: @Sendable (Data, URLResponse?) -> Data?

    public init(_ block: @escaping @Sendable (Data, URLResponse?) -> Data?) {
        self.block = block
    }

    /// A decryptor that decodes a Base64 body (SDWebImage's `base64Decryptor`).
    public static var base64: ImageDownloaderDecryptorBlock {
        ImageDownloaderDecryptorBlock { data, _ in Data(base64Encoded: data, options: .ignoreUnknownCharacters) }
    }

    public func decryptedData(with data: Data, response: URLResponse?) -> Data? { block(data, response) }
}

extension ImageDownloaderRequestModifier where Self == ImageDownloaderRequestModifierBlock {
    /// `downloader.requestModifier = .block { request in ... }`
    public static func block(_ block: @escaping @Sendable (URLRequest) -> URLRequest?) -> Self { Self(block) }
}

extension ImageDownloaderResponseModifier where Self == ImageDownloaderResponseModifierBlock {
    /// `downloader.responseModifier = .block { response in ... }`
    public static func block(_ block: @escaping @Sendable (URLResponse) -> URLResponse?) -> Self { Self(block) }
}

extension ImageDownloaderDecryptor where Self == ImageDownloaderDecryptorBlock {
    /// `downloader.decryptor = .block { data, response in ... }`
    public static func block(_ block: @escaping @Sendable (Data, URLResponse?) -> Data?) -> Self { Self(block) }
}

// The example of Docs/Usage.md, "Errors" (see AsyncExamples.swift for how the doc quotes it).
import Foundation
import OperationDownloader

// snippet: errors
/// A message for people, one per case. The switch has no `default`: a case added to `ImageDownloaderError`
/// stops this from compiling until it is handled.
public func userMessage(for error: any Error) -> String {
    if error is CancellationError { return "cancelled" }
    guard let error = error as? ImageDownloaderError else {
        return "the image could not be processed: \(error)"  // what your transformer threw
    }
    switch error {
    case .invalidURL: return "that is not an image address"
    case .badImageData(.decoding(let cause)): return "the image could not be decoded (\(cause))"
    case .badImageData(let why): return "the server did not send a usable image (\(why))"
    case .cacheNotModified, .notModified: return "the image has not changed"
    case .invalidDownloadOperation: return "the download could not start"
    case .invalidDownloadStatusCode(let status): return "the server answered \(status)"
    case .invalidDownloadContentType(let type): return "the server sent \(type ?? "something") instead of an image"
    case .invalidDownloadResponse: return "the server's answer was unusable"
    case .responseTooLarge(let bytes): return "the image is too large (\(bytes) bytes)"
    case .cancelled: return "cancelled"
    case .unsupportedOnPlatform(let why): return "not possible here: \(why)"
    case .network(let urlError) where urlError.code == .timedOut: return "the server did not answer in time"
    case .network(let urlError): return "network error \(urlError.code.rawValue)"
    }
}
// end snippet

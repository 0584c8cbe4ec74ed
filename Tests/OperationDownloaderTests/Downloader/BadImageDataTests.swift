import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Decoding
@testable import OperationDownloader

/// Issue 20, point 1: every "these bytes are not a usable image" is `.badImageData(reason)`, the typed cause
/// inside (SDWebImage's bad image data; Kingfisher's nested reasons), with plain messages.
@Suite struct BadImageDataTests {
    let server = FixtureServer.shared

    private func download(
        _ transport: ImageDownloaderTransport, _ path: String, options: ImageDownloaderOptions = [],
        context: ImageDownloaderContext? = nil
    ) async -> DownloadRecorder {
        let (downloader, queue) = makeDownloader(transport)
        let separator = path.contains("?") ? "&" : "?"
        let recorder = DownloadRecorder()
        downloader.downloadImage(
            server.url(path + separator + "tag=\(newTag())"), options: options, context: context,
            completed: recorder.completed)
        await recorder.waitForCompletion()
        await drain(queue)
        return recorder
    }

    // MARK: - End to end

    /// The peer scenario: 10 bytes of a JPEG (its signature, nothing decodable) are truncated bad image data.
    @Test(arguments: TestTransports.all)
    func tenBytesOfAJPEGAreTruncated(_ transport: ImageDownloaderTransport) async {
        let recorder = await download(transport, "/images/baseline.jpg?truncate=10")
        guard case .truncated(let received, let partial)? = recorder.badImageDataReason else {
            Issue.record("got \(String(describing: recorder.error))")
            return
        }
        #expect(received == 10 && !partial)
        #expect(recorder.badImageDataReason?.decodingError == .truncated)
        #expect(recorder.final?.image == nil && recorder.final?.data == nil)
    }

    /// A coder that throws an error of its own type: kept as thrown, inside `.coderFailed`.
    @Test(arguments: TestTransports.all)
    func aThrowingCustomCoderKeepsItsError(_ transport: ImageDownloaderTransport) async {
        let manager = ImageCodersManager(coders: [ThrowingTestCoder()])
        let recorder = await download(transport, "/images/tiny.png", context: ImageDownloaderContext(codersManager: manager))
        guard case .coderFailed(let thrown)? = recorder.badImageDataReason else {
            Issue.record("got \(String(describing: recorder.error))")
            return
        }
        #expect(thrown as? ThrowingTestCoder.Failure == ThrowingTestCoder.Failure())
        #expect(recorder.badImageDataReason?.underlyingError is ThrowingTestCoder.Failure)
    }

    /// A progressive download's failed final decode is bad image data with the decoder's cause, as one-shot.
    @Test(arguments: TestTransports.all)
    func aFailedFinalProgressiveDecodeIsBadImageData(_ transport: ImageDownloaderTransport) async {
        let oneShot = await download(transport, "/images/corrupt.jpg")
        let progressive = await download(transport, "/images/corrupt.jpg", options: .progressiveLoad)
        for recorder in [oneShot, progressive] {
            #expect(recorder.downloaderError?.caseName == "badImageData", "got \(String(describing: recorder.error))")
            #expect(recorder.badImageDataReason?.decodingError != nil, "got \(String(describing: recorder.error))")
        }
    }

    // MARK: - The reason

    @Test func decoderErrorsMapToOneCasePerConcept() {
        func reason(_ error: any Error) -> BadImageDataReason { .decoderThrew(error, receivedBytes: 42) }
        guard case .truncated(42, false) = reason(ImageDecodingError.truncated) else {
            Issue.record("\(reason(ImageDecodingError.truncated))")
            return
        }
        #expect(reason(ImageDecodingError.zeroPixels).caseName == "zeroPixels")
        #expect(reason(ImageDecodingError.corrupt("bad marker")).decodingError == .corrupt("bad marker"))
        #expect(reason(ImageDecodingError.tooLarge(width: 9, height: 9)).decodingError == .tooLarge(width: 9, height: 9))
        #expect(reason(ImageDecodingError.unsupportedFormat).decodingError == .unsupportedFormat)
        #expect(reason(ThrowingTestCoder.Failure()).caseName == "coderFailed")
        #expect(reason(ThrowingTestCoder.Failure()).decodingError == nil)
        #expect(BadImageDataReason.truncated(receivedBytes: 1, partialImageAvailable: true).decodingError == nil)
    }

    @Test func everyReasonHasAPlainMessageAlsoAsLocalizedDescription() {
        let reasons: [BadImageDataReason] = [
            .emptyBody, .notAnImage("an HTML page"), .truncated(receivedBytes: 10, partialImageAvailable: false),
            .truncated(receivedBytes: 30000, partialImageAvailable: true), .zeroPixels,
            .decoding(.corrupt("bad marker length")), .coderFailed(ThrowingTestCoder.Failure()),
            .transformerFailed(key: "crop", error: ImageProcessingError.emptyCrop), .decryptorFailed, .noImage,
        ]
        let expected = [
            "the response body is empty", "not an image: the body is an HTML page",
            "truncated: the data (10 bytes) ends before any pixel",
            "truncated: the data (30000 bytes) ends before the image is complete; set allowsIncompleteImages to receive the partial image",
            "the image has zero width or height", "cannot decode the image: corrupt image data: bad marker length",
            "the coder failed: the test coder refuses", "transformer \"crop\" failed: \(ImageProcessingError.emptyCrop)",
            "the decryptor returned no data", "the download produced no image",
        ]
        for (reason, text) in zip(reasons, expected) {
            #expect(reason.description == text)
            let error: any Error = ImageDownloaderError.badImageData(reason)
            #expect(error.localizedDescription == "bad image data: " + text)
            #expect((error as? ImageDownloaderError)?.badImageDataReason?.caseName == reason.caseName)
        }
    }

    /// Every error's `localizedDescription` is its plain description, never Foundation's "The operation could
    /// not be completed" text.
    @Test func everyErrorIsLocalizedWithItsDescription() {
        let errors: [ImageDownloaderError] = [
            .invalidURL, .badImageData(.emptyBody), .cacheNotModified, .notModified, .invalidDownloadOperation,
            .invalidDownloadStatusCode(404), .invalidDownloadContentType("text/html"), .invalidDownloadResponse,
            .responseTooLarge(1 << 20), .cancelled, .unsupportedOnPlatform("needs libwebp"),
            .network(URLError(.httpTooManyRedirects)), .network(URLError(.cannotConnectToHost)),
        ]
        for error in errors {
            let text = (error as any Error).localizedDescription
            #expect(text == error.description)
            #expect(!text.isEmpty && !text.contains("could not be completed"), "\(text)")
        }
        #expect(ImageDownloaderError.responseTooLarge(1 << 20).description.contains("1048576 bytes"))
        #expect(ImageDownloaderError.network(URLError(.cannotConnectToHost)).description == "connection refused")
    }

    @Test func theTransformersErrorStaysReachable() {
        let error = ImageDownloaderError.badImageData(.transformerFailed(key: "crop", error: ImageProcessingError.emptyCrop))
        guard case .badImageData(.transformerFailed(let key, let thrown)) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(key == "crop")
        #expect(thrown as? ImageProcessingError == .emptyCrop)
        #expect(error.badImageDataReason?.underlyingError as? ImageProcessingError == .emptyCrop)
    }
}

/// Throws an error of its own type for anything it is asked to decode.
struct ThrowingTestCoder: ImageCoder {
    struct Failure: Error, Equatable, CustomStringConvertible {
        var description: String { "the test coder refuses" }
    }

    func canDecode(_ data: Data) -> Bool { true }
    func decode(_ data: Data, options: ImageDecodingOptions) throws -> DecodedImage { throw Failure() }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Decoding
@testable import OperationDownloader

/// Issue 12, points 5 and 6: truncated data is never a complete image; non-images fail fast and say what they
/// are; "no decoder" only when a decoder is really missing, naming the library to install.
@Suite struct BodyCheckTests {
    let server = FixtureServer.shared

    private func download(
        _ transport: ImageDownloaderTransport, _ path: String, options: ImageDownloaderOptions = [],
        context: ImageDownloaderContext? = nil,
        configure: (inout ImageDownloaderConfiguration) -> Void = { _ in }
    ) async -> (DownloadRecorder, String) {
        let (downloader, queue) = makeDownloader(transport, configure)
        let tag = newTag()
        let separator = path.contains("?") ? "&" : "?"
        let recorder = DownloadRecorder()
        downloader.downloadImage(
            server.url(path + separator + "tag=\(tag)"), options: options, context: context,
            progress: recorder.progress, completed: recorder.completed)
        await recorder.waitForCompletion(timeout: 60)
        await drain(queue)
        return (recorder, tag)
    }

    private func message(_ recorder: DownloadRecorder) -> String {
        switch recorder.downloaderError {
        case .badImageData(let reason)?: return reason.description
        case .unsupportedOnPlatform(let why)?: return why
        default: return String(describing: recorder.error)
        }
    }

    // MARK: - Truncation (point 5)

    @Test(arguments: TestTransports.all)
    func aTruncatedJPEGIsBadImageDataNamingTheTruncation(_ transport: ImageDownloaderTransport) async {
        let (recorder, _) = await download(transport, "/images/baseline.jpg?truncate=30000")
        guard case .truncated(let received, let partial)? = recorder.badImageDataReason else {
            Issue.record("got \(String(describing: recorder.error))")
            return
        }
        #expect(received == 30000 && partial)
        #expect(message(recorder).contains("truncated") && message(recorder).contains("allowsIncompleteImages"),
                "\(message(recorder))")
        #expect(recorder.final?.image == nil)
    }

    @Test(arguments: TestTransports.all)
    func allowsIncompleteImagesDeliversTheTruncatedImageMarkedIncompleteAndNeverCachesIt(
        _ transport: ImageDownloaderTransport
    ) async throws {
        let cache = AutoPurgingImageCache()
        let (recorder, _) = await download(transport, "/images/baseline.jpg?truncate=30000") {
            $0.allowsIncompleteImages = true
            $0.imageCache = cache
        }
        let image = try #require(recorder.final?.image, "got \(String(describing: recorder.error))")
        #expect(image.width == 640 && image.isIncomplete)
        #expect(cache.count == 0)
        // Per caller, the context wins; a progressive load says the same at the end.
        let (progressive, _) = await download(
            transport, "/images/baseline.jpg?truncate=30000", options: .progressiveLoad,
            context: ImageDownloaderContext(allowsIncompleteImages: false)) { $0.allowsIncompleteImages = true }
        #expect(progressive.badImageDataReason?.caseName == "truncated", "got \(String(describing: progressive.error))")
    }

    // MARK: - Non-images (point 6)

    @Test(arguments: TestTransports.all)
    func htmlServedAsAnImageSaysItIsAnHTMLPage(_ transport: ImageDownloaderTransport) async {
        let (recorder, _) = await download(transport, "/html")
        guard case .notAnImage(let what)? = recorder.badImageDataReason else {
            Issue.record("got \(String(describing: recorder.error))")
            return
        }
        #expect(what == "an HTML page")
        #expect(message(recorder).contains("HTML"), "\(message(recorder))")
    }

    @Test(arguments: TestTransports.all) func jsonAndTextSayWhatTheyAre(_ transport: ImageDownloaderTransport) async {
        let json = "%7B%22error%22%3A%20%22not%20found%22%2C%20%22detail%22%3A%20%22no%20such%20image%20here%22%7D"
        let (asJSON, _) = await download(transport, "/status/200?ct=image/jpeg&body=\(json)")
        #expect(asJSON.badImageDataReason?.caseName == "notAnImage")
        #expect(message(asJSON).contains("JSON"), "\(message(asJSON))")
        let text = "Service%20temporarily%20unavailable%2C%20try%20later"
        let (asText, _) = await download(transport, "/status/200?ct=image/png&body=\(text)")
        #expect(asText.badImageDataReason?.caseName == "notAnImage")
        #expect(message(asText).contains("text"), "\(message(asText))")
    }

    /// 200 MiB of zeros as image/jpeg: decided after the first few KB, and the transfer is cancelled.
    @Test(arguments: TestTransports.all)
    func twoHundredMebibytesOfZerosFailFastAndTheClientGoesAway(_ transport: ImageDownloaderTransport) async throws {
        let size = 200 * 1024 * 1024
        let (recorder, tag) = await download(transport, "/bytes?n=\(size)&fill=zero&ct=image/jpeg&delay_ms=5")
        #expect(recorder.badImageDataReason?.caseName == "notAnImage", "got \(String(describing: recorder.error))")
        #expect(message(recorder).contains("zeros"), "\(message(recorder))")
        #expect((recorder.progressList.map(\.0).max() ?? 0) < 8 * 1024 * 1024)
        // The server saw the client go away: the response ended long before its 200 MiB.
        let logged = try #require(await server.awaitRequests(tag: tag, count: 1, finished: true).first)
        #expect((logged.bytesSent ?? size) < 32 * 1024 * 1024, "\(String(describing: logged.bytesSent)) bytes sent")
    }

    @Test(arguments: TestTransports.all)
    func aDataOnlyCallerStillGetsTheBytesOfANonImage(_ transport: ImageDownloaderTransport) async {
        let (recorder, _) = await download(transport, "/html", options: .avoidDecodeImage)
        #expect(recorder.final?.error == nil)
        #expect(recorder.final?.data?.isEmpty == false)
    }

    /// A custom coder claiming the bytes is never overruled by the sniffing.
    @Test(arguments: TestTransports.all)
    func aCoderThatClaimsTextIsNeverOverruled(_ transport: ImageDownloaderTransport) async {
        let manager = ImageCodersManager(coders: [TextImageCoder()])
        let (recorder, _) = await download(transport, "/html", context: ImageDownloaderContext(codersManager: manager))
        #expect(recorder.final?.image?.width == 1, "got \(String(describing: recorder.error))")
    }

    /// "No decoder" only when a decoder is really missing, and then naming the library to install.
    @Test(arguments: TestTransports.all)
    func aMissingCodecLibraryIsUnsupportedOnPlatformNamingIt(_ transport: ImageDownloaderTransport) async {
        let manager = ImageCodersManager(coders: [WebPCoder(soname: "libwebp-missing-for-test.so.7")])
        let (recorder, _) = await download(transport, "/images/image.webp", context: ImageDownloaderContext(codersManager: manager))
        #expect(recorder.downloaderError?.caseName == "unsupportedOnPlatform", "got \(String(describing: recorder.error))")
        #expect(message(recorder).contains("libwebp") && message(recorder).contains("apt-get install"), "\(message(recorder))")
    }

    @Test(arguments: TestTransports.all)
    func anImageFormatNoRegisteredCoderKnowsKeepsTheTypedCause(_ transport: ImageDownloaderTransport) async {
        let manager = ImageCodersManager(coders: [])
        let (recorder, _) = await download(transport, "/images/tiny.png", context: ImageDownloaderContext(codersManager: manager))
        if case .badImageData(.decoding(let cause))? = recorder.downloaderError {
            #expect(cause == .unsupportedFormat)
        } else {
            Issue.record("got \(String(describing: recorder.error))")
        }
    }

    @Test func theSnifferDecidesFromThePrefix() {
        let coders: () -> [any ImageCoder] = { ImageCodersManager.shared.coders }
        func verdict(_ bytes: [UInt8], complete: Bool = false) -> BodySniffer.Verdict {
            var sniffer = BodySniffer()
            return sniffer.feed(Data(bytes), isComplete: complete, coders: coders)
        }
        #expect(verdict(Array("<!DOCTYPE html><html><body>404 Not Found</body></html>".utf8)) == .notAnImage("an HTML page"))
        #expect(verdict(Array("  \n{\"error\": \"not found\", \"code\": 404, \"x\": 1}".utf8)) == .notAnImage("JSON"))
        #expect(verdict(Array("<?xml version=\"1.0\"?><root>aaaaaaaaaaaaaaa</root>".utf8)) == .notAnImage("XML"))
        #expect(verdict([0xFF, 0xD8, 0xFF]) == .undecided)
        #expect(verdict([0xFF, 0xD8, 0xFF], complete: true) == .mayBeImage)
        #expect(verdict(Array(repeating: 0, count: 100)) == .undecided)
        #expect(verdict(Array(repeating: 0, count: 100), complete: true) == .notAnImage("100 zero bytes"))
        #expect(verdict((0..<200).map { UInt8($0) }) == .mayBeImage)  // unknown binary: left to the decoder
        #expect(verdict(Array("Hi".utf8), complete: true) == .notAnImage("text"))
    }
}

/// Decodes anything that starts with "<" into one pixel.
private struct TextImageCoder: ImageCoder {
    func canDecode(_ data: Data) -> Bool { data.first == UInt8(ascii: "<") }
    func decode(_ data: Data, options: ImageDecodingOptions) throws -> DecodedImage {
        DecodedImage(width: 1, height: 1, pixels: [0, 0, 0, 255], format: .undefined)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import Testing
@testable import OperationDownloader

/// `data:` URLs are served by the package on every transport (issue 20, point 4), shaped like a network
/// download: notifications, progress, metrics, the size limit, typed errors for hostile payloads.
@Suite struct DataURLDownloadTests {
    private static func png() throws -> Data { try FixtureServer.fixtureData("image.png") }

    private static func percentEncoded(_ data: Data) -> String {
        data.map { byte in
            let c = Character(Unicode.Scalar(byte))
            return byte < 0x80 && (c.isLetter || c.isNumber) ? String(c) : String(format: "%%%02X", byte)
        }.joined()
    }

    /// Observes the four notifications of downloads whose URL contains `marker`.
    private func observe(_ marker: String) -> (Locked<[String]>, [any NSObjectProtocol]) {
        let seen = Locked<[String]>([])
        let names: [(Notification.Name, String)] = [
            (.imageDownloadStart, "start"), (.imageDownloadReceiveResponse, "response"),
            (.imageDownloadStop, "stop"), (.imageDownloadFinish, "finish"),
        ]
        let observers = names.map { name, label in
            NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { note in
                guard let operation = note.object as? any ImageDownloaderOperationProtocol,
                      operation.request?.url?.absoluteString.hasSuffix(marker) == true else { return }
                seen.withLock { $0.append(label) }
            }
        }
        return (seen, observers)
    }

    @Test(arguments: TestTransports.all)
    func base64AndPercentEncodedImagesDecodeLikeANetworkDownload(_ transport: ImageDownloaderTransport) async throws {
        let png = try Self.png()
        let marker = newTag().prefix(8).lowercased()
        for text in [
            "data:image/png;base64," + png.base64EncodedString() + "#" + marker,
            "data:image/png;name=a," + Self.percentEncoded(png) + "#" + marker,
        ] {
            let url = try #require(URL(string: text))
            let (downloader, queue) = makeDownloader(transport) { $0.imageCache = nil }
            let (seen, observers) = observe(String(marker))
            defer { observers.forEach(NotificationCenter.default.removeObserver) }
            let recorder = DownloadRecorder()
            let token = downloader.downloadImage(url, progress: recorder.progress, completed: recorder.completed)
            await recorder.waitForCompletion()
            await drain(queue)
            let image = try #require(recorder.final?.image, "got \(String(describing: recorder.error))")
            #expect(image.width == 160 && image.height == 120)
            #expect(recorder.final?.data == png)
            #expect(seen.current == ["start", "response", "stop", "finish"])
            // Progress as for a body with a Content-Length: unknown at the start, then the size, then bytes.
            let progress = recorder.progressList
            #expect(progress.first.map { [$0.0, $0.1] } == [0, -1])
            #expect(progress.dropFirst().first.map { [$0.0, $0.1] } == [0, png.count])
            #expect(progress.last.map { [$0.0, $0.1] } == [png.count, png.count])
            // What a data: download reports (Docs/Transports.md): a plain URLResponse, no status.
            let response = try #require(token?.response)
            #expect(!(response is HTTPURLResponse))
            #expect(response.mimeType == "image/png")
            #expect(response.expectedContentLength == Int64(png.count))
            let metrics = try #require(token?.metrics)
            #expect(metrics.statusCode == nil && metrics.httpVersion == nil && metrics.remoteAddress == nil)
            #expect(metrics.receivedBytes == png.count && metrics.expectedBytes == png.count)
            #expect(metrics.attemptCount == 1 && metrics.redirectCount == 0)
            #expect(metrics.startedAt != nil && metrics.responseAt != nil && metrics.firstByteAt != nil && metrics.finishedAt != nil)
        }
    }

    /// `image(for:)` gives no HTTP response for a data: URL, and the same image.
    @Test(arguments: TestTransports.all)
    func theAsyncAPIServesDataURLs(_ transport: ImageDownloaderTransport) async throws {
        let png = try Self.png()
        let (downloader, _) = makeDownloader(transport)
        let result = try await downloader.image(for: try #require(URL(string: "data:image/png;base64," + png.base64EncodedString())))
        #expect(result.image?.width == 160)
        #expect(result.response == nil)
        #expect(result.data == png)
    }

    /// The same size limit as a network download: the size is announced before any byte is decoded, so a
    /// huge payload is refused at once with its exact decoded size.
    @Test(arguments: TestTransports.all)
    func theSizeLimitAppliesBeforeDecoding(_ transport: ImageDownloaderTransport) async throws {
        let payload = String(repeating: "AAAA", count: 2 << 20)  // 8 MiB of text, 6 MiB decoded
        let url = try #require(URL(string: "data:image/png;base64," + payload))
        let (downloader, queue) = makeDownloader(transport) { $0.maximumResponseSize = 1 << 20 }
        let recorder = DownloadRecorder()
        downloader.downloadImage(url, progress: recorder.progress, completed: recorder.completed)
        await recorder.waitForCompletion()
        await drain(queue)
        guard case .responseTooLarge(let size)? = recorder.downloaderError else {
            Issue.record("got \(String(describing: recorder.error))")
            return
        }
        #expect(size == 6 << 20)
        #expect(recorder.progressList.allSatisfy { $0.0 == 0 })  // no byte was delivered
    }

    /// Bad base64 is a typed error saying why, with the start and stop notifications of a failed download.
    @Test(arguments: TestTransports.all)
    func invalidBase64FailsWithBadURLSayingWhy(_ transport: ImageDownloaderTransport) async throws {
        let marker = newTag().prefix(8).lowercased()
        let url = try #require(URL(string: "data:image/png;base64,iVBORw0KGgo@@@@#" + marker))
        let (downloader, queue) = makeDownloader(transport)
        let (seen, observers) = observe(String(marker))
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        let recorder = DownloadRecorder()
        downloader.downloadImage(url, completed: recorder.completed)
        await recorder.waitForCompletion()
        await drain(queue)
        #expect(recorder.finals.count == 1)
        #expect(recorder.downloaderError?.caseName == "network\(URLError.Code.badURL.rawValue)",
                "got \(String(describing: recorder.error))")
        let message = recorder.downloaderError.map(String.init(describing:)) ?? ""
        #expect(message.contains("invalid base64") && message.contains("'@'"), "\(message)")
        #expect(seen.current == ["start", "stop"])
    }

    /// An empty payload is an empty body, as from a server.
    @Test(arguments: TestTransports.all)
    func anEmptyPayloadIsAnEmptyBody(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let recorder = DownloadRecorder()
        downloader.downloadImage(URL(string: "data:image/png;base64,"), completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.badImageDataReason?.caseName == "emptyBody", "got \(String(describing: recorder.error))")
    }

    /// A large payload arrives in several chunks (progress and the size check see each).
    @Test(arguments: TestTransports.all)
    func aLargePayloadArrivesInChunks(_ transport: ImageDownloaderTransport) async throws {
        let bytes = Data((0..<(300 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let url = try #require(URL(string: "data:application/octet-stream;base64," + bytes.base64EncodedString()))
        let (downloader, queue) = makeDownloader(transport)
        let recorder = DownloadRecorder()
        downloader.downloadImage(url, options: .avoidDecodeImage, progress: recorder.progress, completed: recorder.completed)
        await recorder.waitForCompletion()
        await drain(queue)
        #expect(recorder.final?.data == bytes, "got \(String(describing: recorder.error))")
        let received = recorder.progressList.map(\.0).filter { $0 > 0 }
        #expect(received.count == (bytes.count + DataURLTransfer.chunkSize - 1) / DataURLTransfer.chunkSize)
    }
}

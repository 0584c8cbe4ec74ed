import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import OperationDownloader
import Testing

/// Request/response modifiers, decryptors, and redirects.
@Suite struct ModifierAndRedirectTests {
    let server = FixtureServer.shared

    @Test(arguments: TestTransports.all)
    func requestModifierAddsAHeader(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        downloader.requestModifier = .block { request in
            var request = request
            request.setValue("Bearer token-1", forHTTPHeaderField: "Authorization")
            return request
        }
        let tag = newTag()
        _ = try await downloader.image(for: server.url("/images/tiny.png?tag=\(tag)"))
        #expect(server.requests(tag: tag).first?.headers["authorization"] == "Bearer token-1")
    }

    @Test(arguments: TestTransports.all)
    func contextRequestModifierWinsOverTheDownloaders(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        downloader.requestModifier = ImageDownloaderRequestModifierBlock(headers: ["X-Which": "global"])
        let tag = newTag()
        let context = ImageDownloaderContext(requestModifier: ImageDownloaderRequestModifierBlock(headers: ["X-Which": "context"]))
        _ = try await downloader.image(for: server.url("/images/tiny.png?tag=\(tag)"), context: context)
        #expect(server.requests(tag: tag).first?.headers["x-which"] == "context")
    }

    @Test(arguments: TestTransports.all)
    func requestModifierReturningNilFailsSynchronously(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        downloader.requestModifier = .block { _ in nil }
        let tag = newTag()
        let recorder = DownloadRecorder()
        let token = downloader.downloadImage(server.url("/images/tiny.png?tag=\(tag)"), completed: recorder.completed)
        #expect(token == nil)
        #expect(recorder.finals.count == 1)
        #expect(recorder.downloaderError?.caseName == "invalidDownloadOperation")
        #expect(server.stats(tag: tag).count == 0)
    }

    @Test(arguments: TestTransports.all)
    func responseModifierReturningNilFails(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        downloader.responseModifier = .block { _ in nil }
        let recorder = DownloadRecorder()
        downloader.downloadImage(server.url("/images/tiny.png?tag=\(newTag())"), completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.downloaderError?.caseName == "invalidDownloadResponse")
    }

    @Test(arguments: TestTransports.all)
    func responseModifierCanRewriteTheStatus(_ transport: ImageDownloaderTransport) async throws {
        // A 404 turned into a 200 by the modifier is accepted (the modified response is what gets validated).
        let (downloader, _) = makeDownloader(transport)
        downloader.responseModifier = .block { response in
            guard let http = response as? HTTPURLResponse, let url = http.url else { return response }
            return HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "image/png"])
        }
        let recorder = DownloadRecorder()
        downloader.downloadImage(server.url("/status/404?tag=\(newTag())"), completed: recorder.completed)
        await recorder.waitForCompletion()
        // The body is "status 404": accepted as a response, rejected as text.
        #expect(recorder.downloaderError?.caseName == "badImageData")
        #expect(recorder.badImageDataReason?.caseName == "notAnImage", "got \(String(describing: recorder.error))")
    }

    @Test(arguments: TestTransports.all)
    func decryptorTransformsTheBody(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let calls = Locked(0)
        let tiny = try Data(contentsOf: TestCoders.fixtureFile("tiny.png"))
        // The "encrypted" body is image.png; the decryptor turns it into tiny.png.
        downloader.decryptor = .block { data, response in
            calls.withLock { $0 += 1 }
            return data.count == 55916 && response != nil ? tiny : nil
        }
        let result = try await downloader.image(for: server.url("/images/image.png?tag=\(newTag())"))
        #expect(calls.current == 1)
        #expect(result.image?.width == 1)
        #expect(result.data == tiny)
    }

    @Test(arguments: TestTransports.all)
    func decryptorReturningNilFails(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let recorder = DownloadRecorder()
        let context = ImageDownloaderContext(decryptor: ImageDownloaderDecryptorBlock { _, _ in nil })
        downloader.downloadImage(server.url("/images/tiny.png?tag=\(newTag())"), context: context, completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.badImageDataReason?.caseName == "decryptorFailed", "got \(String(describing: recorder.error))")
    }

    @Test(arguments: TestTransports.all)
    func redirectsKeepTheDownloadersHeaders(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        downloader.setValue("kept", forHTTPHeaderField: "X-Custom")
        let tag = newTag()
        let target = "/images/tiny.png?tag=\(tag)&final=1"
        // /redirect/n answers n + 1 redirects: n hops, then /redirect/0 points at `to`.
        let url = server.url("/redirect/2?tag=\(tag)&to=\(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")")
        let result = try await downloader.image(for: url)
        #expect(result.image?.width == 1)
        #expect(result.metrics?.redirectCount == 3)
        let logged = server.requests(tag: tag)
        #expect(logged.count == 4)
        #expect(logged.allSatisfy { $0.headers["x-custom"] == "kept" && $0.headers["accept"] == "image/*,*/*;q=0.8" })
    }

    @Test(arguments: TestTransports.all)
    func crossHostRedirectDropsAuthorization(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        downloader.setValue("Basic c2VjcmV0", forHTTPHeaderField: "Authorization")
        let tag = newTag()
        let target = server.localhostURL("/images/tiny.png?tag=\(tag)&final=1").absoluteString
        let url = server.url("/redirect/0?tag=\(tag)&to=\(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")")
        let result = try await downloader.image(for: url)
        #expect(result.image?.width == 1)
        let logged = server.requests(tag: tag)
        #expect(logged.count == 2)
        #expect(logged.first?.headers["authorization"] == "Basic c2VjcmV0")
        #expect(logged.last?.query["final"] == "1")
        #expect(logged.last?.headers["authorization"] == nil)
        #expect(logged.last?.headers["accept"] == "image/*,*/*;q=0.8")
    }

    @Test(arguments: TestTransports.all) func redirectLoopFails(_ transport: ImageDownloaderTransport) async throws {
        let (downloader, _) = makeDownloader(transport)
        let recorder = DownloadRecorder()
        downloader.downloadImage(server.url("/redirect/60?tag=\(newTag())"), completed: recorder.completed)
        await recorder.waitForCompletion()
        #expect(recorder.downloaderError?.caseName == "network\(URLError.Code.httpTooManyRedirects.rawValue)")
        // Said in plain words, with the count (issue 20, point 7), on both transports.
        #expect(recorder.downloaderError.map(String.init(describing:)) == "too many redirects (20)",
                "got \(String(describing: recorder.error))")
        #expect(recorder.error?.localizedDescription == "too many redirects (20)")
    }
}

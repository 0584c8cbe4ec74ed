import Decoding
import Foundation
import OperationDownloader
import Testing

/// `ImageDownloaderConfiguration.defaultOptions` (every call gets them) and `.thumbnail(maxPixelSize:)` (issue 26).
@Suite struct DefaultOptionsTests {
    let server = FixtureServer.shared

    /// `.useURLCache` by default: the second downloader on the directory is answered by the HTTP cache although
    /// no call passed the option; a downloader without the default does not read the cache.
    @Test(arguments: TestTransports.all)
    func defaultOptionsApplyToEveryCall(_ transport: ImageDownloaderTransport) async throws {
        let directory = TemporaryCacheDirectory()
        defer { directory.remove() }
        let tag = newTag()
        let url = server.url("/images/tiny.png?cc=max-age%3D600&tag=\(tag)")
        func downloader(defaults: ImageDownloaderOptions) -> ImageDownloader {
            makeDownloader(transport) {
                $0.httpCache = HTTPImageCache(directory: directory.url)
                $0.defaultOptions = defaults
            }.0
        }
        #expect(try await downloader(defaults: .useURLCache).image(for: url).metrics?.source == .network)
        #expect(try await downloader(defaults: .useURLCache).image(for: url).metrics?.source == .httpCache)
        #expect(try await downloader(defaults: []).image(for: url).metrics?.source == .network)
        #expect(server.stats(tag: tag).count == 2)
        // Added to the call's own options, in the callback API as well.
        let tiny = try FixtureServer.fixtureData("tiny.png").count
        let dataOnly = downloader(defaults: .avoidDecodeImage)
        let (image, data) = await withCheckedContinuation { continuation in
            dataOnly.downloadImage(server.url("/images/tiny.png?tag=\(tag)&b"), options: .highPriority, completed: { image, data, _, finished in
                if finished { continuation.resume(returning: (image, data)) }
            })
        }
        #expect(image == nil && data?.count == tiny)
    }

    @Test func theThumbnailContextFitsTheBox() async throws {
        #expect(ImageDownloaderContext.thumbnail(maxPixelSize: 96).thumbnailPixelSize == CGSize(width: 96, height: 96))
        let url = server.url("/images/baseline.jpg?tag=\(newTag())")
        let image = try #require(try await makeDownloader().0.image(for: url, context: .thumbnail(maxPixelSize: 96)).image)
        #expect(max(image.width, image.height) == 96)
    }
}

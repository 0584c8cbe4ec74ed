import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import OperationDownloader
import Testing

/// AFAutoPurgingImageCache semantics: cost, LRU by last access, purge to the preferred size.
@Suite struct AutoPurgingImageCacheTests {
    private func image(_ width: Int, _ height: Int, frames: Int = 0) -> DecodedImage {
        let pixels = [UInt8](repeating: 7, count: width * height * 4)
        return DecodedImage(
            width: width, height: height, pixels: pixels, format: .png,
            frames: (0..<frames).map { _ in ImageFrame(pixels: pixels, duration: 0.1) })
    }

    @Test func costIsPixelsTimesFourOverAllFrames() {
        let cache = AutoPurgingImageCache()
        cache.add(image(10, 10), withIdentifier: "still")
        #expect(cache.memoryUsage == 400)
        cache.add(image(10, 10, frames: 3), withIdentifier: "animated")
        #expect(cache.memoryUsage == 400 + 1200)
        cache.add(image(5, 5), withIdentifier: "still")  // replacing subtracts the old cost
        #expect(cache.memoryUsage == 100 + 1200)
        #expect(cache.removeImage(withIdentifier: "animated"))
        #expect(!cache.removeImage(withIdentifier: "animated"))
        #expect(cache.memoryUsage == 100)
        #expect(cache.removeAllImages())
        #expect(cache.memoryUsage == 0)
        #expect(!cache.removeAllImages())
    }

    @Test func purgesLeastRecentlyAccessedDownToThePreferredSize() {
        // Each image costs 400; capacity 1000 holds two, a third triggers a purge down to 500 (one image).
        let cache = AutoPurgingImageCache(memoryCapacity: 1000, preferredMemoryUsageAfterPurge: 500)
        cache.add(image(10, 10), withIdentifier: "a")
        cache.add(image(10, 10), withIdentifier: "b")
        #expect(cache.image(withIdentifier: "a") != nil)  // a is now more recent than b
        cache.add(image(10, 10), withIdentifier: "c")
        #expect(cache.memoryUsage <= 500)
        #expect(cache.image(withIdentifier: "c") != nil)
        #expect(cache.image(withIdentifier: "b") == nil)
        #expect(cache.image(withIdentifier: "a") == nil)
    }

    /// 1×1 images cost 4 bytes each: without a count limit a crawler's cache grew by ~500 bytes per URL forever.
    @Test func tinyImagesAreBoundedByTheCountLimit() {
        let cache = AutoPurgingImageCache(countLimit: 8)
        for index in 0..<100 { cache.add(image(1, 1), withIdentifier: "tiny-\(index)") }
        #expect(cache.count <= 8)
        #expect(cache.image(withIdentifier: "tiny-99") != nil)  // the newest survive
        #expect(cache.image(withIdentifier: "tiny-0") == nil)
        // A purge frees a quarter of the limit, so it does not run (and sort) on every insertion.
        let cleared = AutoPurgingImageCache(countLimit: 8)
        for index in 0..<9 { cleared.add(image(1, 1), withIdentifier: "t\(index)") }
        #expect(cleared.count == 6)
    }

    @Test func requestKeysIncludeTheAdditionalIdentifier() throws {
        let cache = AutoPurgingImageCache()
        let request = URLRequest(url: try #require(URL(string: "https://example.com/a.png")))
        cache.add(image(1, 1), for: request, withAdditionalIdentifier: "thumb")
        #expect(cache.image(for: request, withAdditionalIdentifier: nil) == nil)
        #expect(cache.image(for: request, withAdditionalIdentifier: "thumb") != nil)
        #expect(cache.image(withIdentifier: "https://example.com/a.png\u{1F}thumb") != nil)
        #expect(cache.image(withIdentifier: "https://example.com/a.pngthumb") == nil)
        #expect(cache.removeImage(for: request, withAdditionalIdentifier: "thumb"))
    }

    @Test func concurrentReadsAndWritesStayConsistent() async {
        let cache = AutoPurgingImageCache(memoryCapacity: 40_000, preferredMemoryUsageAfterPurge: 20_000)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<500 {
                        let key = "k\((worker * 31 + index) % 64)"
                        if index % 3 == 0 { cache.add(self.image(10, 10), withIdentifier: key) }
                        _ = cache.image(withIdentifier: key)
                        if index % 17 == 0 { cache.removeImage(withIdentifier: key) }
                    }
                }
            }
        }
        #expect(cache.memoryUsage <= 40_000)
        #expect(cache.memoryUsage == UInt64(cache.count * 400))
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
@testable import OperationDownloader
import Testing

/// The memory cache makes room for an image when its decode starts (`ImageCache.makeRoom(forCost:)`), so the
/// bitmaps it holds and the one being decoded for it stay within its capacity together; what it holds after
/// the image is added is the same as without that call.
@Suite struct MemoryCacheRoomTests {
    private func image(_ width: Int, _ height: Int) -> DecodedImage {
        DecodedImage(width: width, height: height, pixels: [UInt8](repeating: 1, count: width * height * 4), format: .png)
    }

    // MARK: - AutoPurgingImageCache.makeRoom

    @Test func roomWithinTheCapacityEvictsNothing() {
        let cache = AutoPurgingImageCache(memoryCapacity: 1000, preferredMemoryUsageAfterPurge: 500)
        cache.add(image(10, 10), withIdentifier: "a")  // 400
        cache.makeRoom(forCost: 600)  // 400 + 600 = the capacity, not above it
        #expect(cache.memoryUsage == 400)
        #expect(cache.image(withIdentifier: "a") != nil)
    }

    @Test func roomAboveTheCapacityEvictsLeastRecentlyUsedFirst() {
        let cache = AutoPurgingImageCache(memoryCapacity: 1000, preferredMemoryUsageAfterPurge: 800)
        cache.add(image(10, 10), withIdentifier: "a")
        cache.add(image(10, 10), withIdentifier: "b")
        #expect(cache.image(withIdentifier: "a") != nil)  // b is now the least recently used
        cache.makeRoom(forCost: 400)  // 800 + 400 > 1000: down to 800 - 400
        #expect(cache.memoryUsage == 400)
        #expect(cache.image(withIdentifier: "b") == nil)
        #expect(cache.image(withIdentifier: "a") != nil)
    }

    @Test func anImageLargerThanThePreferredSizeEmptiesTheCache() {
        let cache = AutoPurgingImageCache(memoryCapacity: 1000, preferredMemoryUsageAfterPurge: 300)
        cache.add(image(10, 10), withIdentifier: "a")
        cache.makeRoom(forCost: 900)
        #expect(cache.memoryUsage == 0)
        #expect(cache.count == 0)
    }

    /// Room made first, then the add of an image the cache does not hold (what a download adds): the same
    /// images remain as with the add alone, whatever the order of adds, reads and sizes (two caches driven side
    /// by side through a fixed pseudo-random sequence).
    @Test func makingRoomFirstLeavesWhatTheAddAloneLeaves() {
        let plain = AutoPurgingImageCache(memoryCapacity: 10_000, preferredMemoryUsageAfterPurge: 6_000)
        let roomy = AutoPurgingImageCache(memoryCapacity: 10_000, preferredMemoryUsageAfterPurge: 6_000)
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ bound: Int) -> Int {  // xorshift: deterministic
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(state % UInt64(bound))
        }
        var added = 0
        for step in 0..<400 {
            if added > 0, next(3) == 0 {
                let key = "k\(next(added))"  // a read refreshes the access order in both
                #expect((plain.image(withIdentifier: key) == nil) == (roomy.image(withIdentifier: key) == nil), "step \(step)")
                continue
            }
            let side = 5 + next(34)  // up to 38² × 4 = 5,776 bytes: never above the preferred size alone
            let image = image(side, side)
            roomy.makeRoom(forCost: UInt64(side * side * 4))
            roomy.add(image, withIdentifier: "k\(added)")
            plain.add(image, withIdentifier: "k\(added)")
            added += 1
            #expect(plain.memoryUsage == roomy.memoryUsage && plain.count == roomy.count, "step \(step)")
        }
        for index in 0..<added {
            #expect((plain.image(withIdentifier: "k\(index)") == nil) == (roomy.image(withIdentifier: "k\(index)") == nil))
        }
    }

    // MARK: - The downloader

    /// An `ImageRequestCache` that records, in order, each `makeRoom` and each `add` with the image's cost.
    final class RecordingCache: ImageRequestCache, @unchecked Sendable {  // `lock` guards `log`
        private let lock = NSLock()
        private var log: [String] = []
        var events: [String] { lock.withLock { log } }

        func makeRoom(forCost cost: UInt64) { lock.withLock { log.append("room \(cost)") } }
        func add(_ image: DecodedImage, withIdentifier identifier: String) {
            lock.withLock { log.append("add \(image.width * image.height * 4)") }
        }
        func removeImage(withIdentifier identifier: String) -> Bool { false }
        func removeAllImages() -> Bool { false }
        func image(withIdentifier identifier: String) -> DecodedImage? { nil }
    }

    @Test func theDownloaderMakesRoomForEachImageBeforeAddingIt() async throws {
        let png = ScriptedHarness.fixture("image.png")  // 160×120
        let cache = RecordingCache()
        let harness = ScriptedHarness {
            $0.httpCache = nil
            $0.imageCache = cache
        }
        let url = ScriptedHarness.url("room-\(UUID().uuidString).png")
        let (plain, _) = harness.download(url)
        let (thumbnail, _) = harness.download(url, context: .thumbnail(maxPixelSize: 40))  // 40×30
        let transfer = try #require(await harness.transport.transfer(0))
        transfer.respond(headers: ["Content-Type": "image/png", "Content-Length": "\(png.count)"])
        transfer.send(png)
        transfer.complete()
        await plain.completion()
        await thumbnail.completion()
        #expect(plain.final?.image?.width == 160 && thumbnail.final?.image?.width == 40)
        let events = cache.events
        let full = "\(160 * 120 * 4)", small = "\(40 * 30 * 4)"
        #expect(events.sorted() == ["add \(full)", "add \(small)", "room \(full)", "room \(small)"].sorted(), "\(events)")
        for size in [full, small] {
            let room = try #require(events.firstIndex(of: "room \(size)"))
            let add = try #require(events.firstIndex(of: "add \(size)"))
            #expect(room < add, "room made before the image was added: \(events)")
        }
    }

    @Test func aDownloadWithoutDecodingMakesNoRoom() async throws {
        let png = ScriptedHarness.fixture("image.png")
        let cache = RecordingCache()
        let harness = ScriptedHarness {
            $0.httpCache = nil
            $0.imageCache = cache
        }
        let (recorder, _) = harness.download(ScriptedHarness.url("raw-\(UUID().uuidString).png"), options: [.avoidDecodeImage])
        let transfer = try #require(await harness.transport.transfer(0))
        transfer.respond(headers: ["Content-Type": "image/png", "Content-Length": "\(png.count)"])
        transfer.send(png)
        transfer.complete()
        await recorder.completion()
        #expect(recorder.final?.data?.count == png.count)
        #expect(cache.events.isEmpty)
    }
}

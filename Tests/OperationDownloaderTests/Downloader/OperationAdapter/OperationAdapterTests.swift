import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
@testable import OperationDownloader
import Testing

/// The downloader talks to every operation through one interface (`DownloadOperationHandle`): this package's
/// operation natively, another class wrapped once (`ForeignOperation`). What they share is checked here, on the
/// scripted transport: one memory-cache writer (each variant's image once per download), callers refused by an
/// operation getting a new one, and the one place that looks at the class (`OperationMaker`).
@Suite struct OperationAdapterTests {
    private static let png = ScriptedHarness.fixture("tiny.png")

    /// A URL no other test uses (`ScriptedForeignOperation.made` is shared by parallel tests).
    private func uniqueURL(_ name: String, query: String = "") -> URL {
        ScriptedHarness.url("\(name)-\(UUID().uuidString).png\(query)")
    }

    /// A downloader making `ScriptedForeignOperation`s, suspended so callers can join before anything starts
    /// (with `cache` as its memory cache when given, else the default one).
    private func suspendedForeignHarness(cache: CountingImageCache? = nil) -> ScriptedHarness {
        let harness = ScriptedHarness {
            if let cache { $0.imageCache = cache }
            $0.operationClass = ScriptedForeignOperation.self
        }
        harness.downloader.isSuspended = true
        return harness
    }

    private func made(_ url: URL) -> Int {
        ScriptedForeignOperation.made.withLock { $0[url.absoluteString] ?? 0 }
    }

    // MARK: - One memory-cache writer

    @Test func ourOperationCachesEachVariantOnce() async throws {
        let cache = CountingImageCache()
        let harness = ScriptedHarness {
            $0.httpCache = nil
            $0.imageCache = cache
        }
        let url = uniqueURL("native")
        let (first, _) = harness.download(url)
        let (second, _) = harness.download(url)
        let (thumbnail, _) = harness.download(url, context: .thumbnail(maxPixelSize: 1))
        let transfer = try #require(await harness.transport.transfer(0))
        transfer.respond(headers: ["Content-Type": "image/png", "Content-Length": "\(Self.png.count)"])
        transfer.send(Self.png)
        transfer.complete()
        for recorder in [first, second, thumbnail] { await recorder.completion() }
        #expect(harness.transport.transfers.count == 1, "one transfer for the three callers")
        #expect(first.final?.image != nil && second.final?.image != nil && thumbnail.final?.image != nil)
        let additions = cache.additions
        #expect(additions.count == 2, "the plain image and the thumbnail, once each: \(additions)")
        #expect(Set(additions).count == 2)
    }

    @Test func aForeignClassesImageLandsInTheMemoryCacheOnce() async {
        let cache = CountingImageCache()
        let harness = suspendedForeignHarness(cache: cache)
        let url = uniqueURL("foreign-once")
        let (first, _) = harness.download(url)
        let (second, _) = harness.download(url)
        #expect(made(url) == 1, "the second caller joined the first operation")
        harness.downloader.isSuspended = false
        await first.completion()
        await second.completion()
        #expect(first.final?.image?.width == 3 && second.final?.image?.width == 3)
        #expect(cache.additions == [nil], "one write, under the plain variant's identifier")
        // A request made after the answer hits the memory cache: answered at once, nothing made.
        let (third, token) = harness.download(url)
        #expect(token == nil)
        #expect(third.finals.count == 1 && third.final?.image?.width == 3)
        #expect(made(url) == 1)
    }

    @Test func aForeignClassGetsAnOperationPerVariant() async {
        let cache = CountingImageCache()
        let harness = suspendedForeignHarness(cache: cache)
        let url = uniqueURL("foreign-variants")
        let (plain, _) = harness.download(url)
        let (thumbnail, _) = harness.download(url, context: .thumbnail(maxPixelSize: 1))
        // The class may ignore a caller's own context, so each variant has an operation (and cache entry) of its own.
        #expect(made(url) == 2)
        harness.downloader.isSuspended = false
        await plain.completion()
        await thumbnail.completion()
        #expect(cache.additions.count == 2 && Set(cache.additions).count == 2, "\(cache.additions)")
    }

    // MARK: - Callers an operation refuses

    @Test func aForeignOperationThatRefusesACallerGetsANewOne() async {
        let harness = suspendedForeignHarness()
        let url = uniqueURL("foreign-refusing", query: "?capacity=1")
        let (first, firstToken) = harness.download(url)
        let (second, secondToken) = harness.download(url)
        #expect(made(url) == 2, "refused by the first, the second caller got an operation of its own")
        #expect(firstToken != nil && secondToken != nil)
        #expect(firstToken?.operation !== secondToken?.operation)
        #expect(harness.downloader.currentDownloadCount == 2)
        harness.downloader.isSuspended = false
        await first.completion()
        await second.completion()
        #expect(first.final?.image?.width == 3 && second.final?.image?.width == 3)
    }

    @Test func cancellingAForeignOperationsLastCallerClosesIt() async throws {
        let harness = suspendedForeignHarness()
        let url = uniqueURL("foreign-cancel")
        let (first, firstToken) = harness.download(url)
        try #require(firstToken).cancel()
        await first.completion()
        #expect(first.downloaderError?.caseName == "cancelled")
        // Its operation was cancelled and forgotten: the next caller gets a new one, which runs.
        let (second, secondToken) = harness.download(url)
        #expect(made(url) == 2)
        #expect(secondToken?.operation.isCancelled == false)
        harness.downloader.isSuspended = false
        await second.completion()
        #expect(second.final?.image?.width == 3)
        #expect(first.finals.count == 1, "the cancelled caller is answered once")
    }

    // MARK: - The class, looked at once

    @Test func theMakerTellsTheClassesApart() {
        let ours = OperationMaker(operationClass: nil)
        let subclass = OperationMaker(operationClass: CountingOperation.self)
        let foreign = OperationMaker(operationClass: ScriptedForeignOperation.self)
        #expect(ours.reasonItNeedsURLSession == nil && subclass.reasonItNeedsURLSession == nil)
        #expect(!ours.separatesVariants && !subclass.separatesVariants)
        let reason = foreign.reasonItNeedsURLSession ?? ""
        #expect(reason.contains("ScriptedForeignOperation") && reason.contains(".urlSession"), "\(reason)")
        #expect(foreign.separatesVariants)
    }
}

@testable import Decoding
import Foundation
import TestRequirements
import Testing

/// The decode memory budget: FIFO waits, a waiter needing the whole budget, cancellation, typed errors for a
/// canvas larger than the budget, shrink-on-load under a small budget, and decodes that wait instead of
/// failing. Waits are observed through the ledger's wait hook, never by polling or sleeping.
@Suite(.serialized, .offThePool) struct DecodingBudgetTests {
    static let mib = 1 << 20

    /// Signals once per reservation that starts waiting.
    static func observedBudget(limit: Int) -> (ImageDecodingBudget, DispatchSemaphore) {
        let budget = ImageDecodingBudget(limitBytes: limit)
        let waiting = DispatchSemaphore(value: 0)
        budget.ledger.observeWaits { waiting.signal() }
        return (budget, waiting)
    }

    static var bound: DispatchTime { .now() + 60 }  // a generous bound against hangs only

    @Test func reservationsAreServedFirstComeFirstServed() throws {
        let (budget, waiting) = Self.observedBudget(limit: 10 * Self.mib)
        let held = try budget.reserve(8 * Self.mib)
        let order = Mismatches()  // reused as a recorder of what was granted
        let done = DispatchGroup()
        DispatchQueue.global().async(group: done) {
            if let r = try? budget.reserve(4 * Self.mib) { order.add(4); r.release() }
        }
        #expect(waiting.wait(timeout: Self.bound) == .success)
        // 1 MiB would fit now, but the 4 MiB request came first: it waits in line.
        DispatchQueue.global().async(group: done) {
            if let r = try? budget.reserve(1 * Self.mib) { order.add(1); r.release() }
        }
        #expect(waiting.wait(timeout: Self.bound) == .success)
        // Both wait, although the second would fit beside what is held: first come, first served.
        #expect(budget.waitingCount == 2 && budget.reservedBytes == 8 * Self.mib)
        held.release()
        #expect(done.wait(timeout: Self.bound) == .success)
        #expect(order.all.sorted() == [1, 4])
        #expect(budget.reservedBytes == 0 && budget.waitingCount == 0)
    }

    @Test func aWaiterNeedingMoreThanTheWholeBudgetGetsAllOfIt() throws {
        let (budget, waiting) = Self.observedBudget(limit: 4 * Self.mib)
        let held = try budget.reserve(1 * Self.mib)
        let granted = Mismatches()
        let done = DispatchGroup()
        DispatchQueue.global().async(group: done) {
            if let r = try? budget.reserve(100 * Self.mib) { granted.add(r.bytes); r.release() }
        }
        #expect(waiting.wait(timeout: Self.bound) == .success)
        held.release()
        #expect(done.wait(timeout: Self.bound) == .success)
        #expect(granted.all == [4 * Self.mib])
    }

    @Test func cancellingEndsAWait() throws {
        let (budget, waiting) = Self.observedBudget(limit: 2 * Self.mib)
        let held = try budget.reserve(2 * Self.mib)
        let cancellation = ImageDecodingCancellation()
        let outcome = Mismatches()
        let done = DispatchGroup()
        DispatchQueue.global().async(group: done) {
            do {
                _ = try budget.reserve(Self.mib, cancellation: cancellation)
                outcome.add(1)
            } catch let error as ImageDecodingError where error == .cancelled {
                outcome.add(0)
            } catch {
                outcome.add(2)
            }
        }
        #expect(waiting.wait(timeout: Self.bound) == .success)
        cancellation.cancel()
        #expect(done.wait(timeout: Self.bound) == .success)
        #expect(outcome.all == [0] && budget.waitingCount == 0)
        #expect(throws: ImageDecodingError.cancelled) { try budget.reserve(1, cancellation: cancellation) }
        held.release()
    }

    /// A decode waits for room instead of failing, and gives the room back when it returns.
    @Test func decodesWaitForTheBudgetAndReleaseIt() throws {
        let (budget, waiting) = Self.observedBudget(limit: 2 * Self.mib)
        let png = try Self.png(width: 300, height: 300)  // 360 KB of RGBA
        let held = try budget.reserve(2 * Self.mib)
        let decoded = Mismatches()
        let done = DispatchGroup()
        DispatchQueue.global().async(group: done) {
            if let image = try? ImageCodersManager.shared.decode(png, options: ImageDecodingOptions(decodingBudget: budget)) {
                decoded.add(image.width)
            }
        }
        #expect(waiting.wait(timeout: Self.bound) == .success)
        #expect(decoded.all.isEmpty)
        held.release()
        #expect(done.wait(timeout: Self.bound) == .success)
        #expect(decoded.all == [300] && budget.reservedBytes == 0)
    }

    @Test func aCanvasLargerThanTheWholeBudgetIsATypedError() throws {
        let budget = ImageDecodingBudget(limitBytes: Self.mib)
        let png = try Self.png(width: 800, height: 600)
        // The refused decode allocates nothing, so the memory cache is not asked to make room for it.
        let heard = Mismatches()
        var options = ImageDecodingOptions(decodingBudget: budget)
        options.willAllocateImage = DecodeAllocationHook { heard.add($0) }
        #expect(throws: ImageDecodingError.exceedsDecodingBudget(width: 800, height: 600, bytes: 800 * 600 * 4, budgetBytes: Self.mib)) {
            try ImageCodersManager.shared.decode(png, options: options)
        }
        #expect(budget.reservedBytes == 0 && heard.all.isEmpty)
    }

    /// JPEG shrinks while loading (DCT scaling), so a thumbnail of a canvas larger than the budget decodes.
    @Test func jpegThumbnailsShrinkOnLoadUnderASmallBudget() throws {
        let budget = ImageDecodingBudget(limitBytes: Self.mib)
        let pixels = (0..<(800 * 600 * 4)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let jpeg = try ImageCodersManager.shared.encode(DecodedImage(width: 800, height: 600, pixels: pixels, format: .jpeg), format: .jpeg)
        #expect(throws: ImageDecodingError.self) {
            try ImageCodersManager.shared.decode(jpeg, options: ImageDecodingOptions(decodingBudget: budget))
        }
        let thumbnail = try ImageCodersManager.shared.decode(jpeg, options: ImageDecodingOptions(
            thumbnailPixelSize: CGSize(width: 100, height: 100), decodingBudget: budget))
        #expect(thumbnail.width == 100 && thumbnail.height == 75)
    }

    /// Partial decodes never wait: with the budget taken, an incremental decoder fails its early append with a
    /// typed error (the downloader then decodes once at the end), and the final append waits like a decode.
    @Test func incrementalDecodersWaitOnlyOnTheirFinalAppend() throws {
        let (budget, waiting) = Self.observedBudget(limit: 2 * Self.mib)
        let png = try Self.png(width: 300, height: 300)
        let held = try budget.reserve(2 * Self.mib)
        let options = ImageDecodingOptions(decodingBudget: budget)
        let early = try #require(ImageCodersManager.shared.incrementalDecoder(for: png, options: options))
        #expect(throws: ImageDecodingError.decodingBudgetBusy(bytes: 300 * 300 * 4, budgetBytes: 2 * Self.mib)) {
            try early.append(png.prefix(100), isFinal: false)
        }
        let decoded = Mismatches()
        let done = DispatchGroup()
        DispatchQueue.global().async(group: done) {
            guard let final = ImageCodersManager.shared.incrementalDecoder(for: png, options: options) else { return }
            if (try? final.append(png, isFinal: true)) != nil, let image = final.currentImage() { decoded.add(image.width) }
        }
        #expect(waiting.wait(timeout: Self.bound) == .success)
        held.release()
        #expect(done.wait(timeout: Self.bound) == .success)
        #expect(decoded.all == [300] && budget.reservedBytes == 0)
    }

    /// Compositing a frame reserves its working memory: it waits while the budget is taken.
    @Test func frameCompositingWaitsForTheBudget() throws {
        let (budget, waiting) = Self.observedBudget(limit: 2 * Self.mib)
        let data = AnimationBuilders.randomGIF(seed: 5)
        let image = try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(decodingBudget: budget))
        let animation = try #require(image.animation)
        let eager = try ImageCodersManager.shared.decode(data, options: ImageDecodingOptions(preloadAllFrames: true)).frames
        let held = try budget.reserve(2 * Self.mib)
        let rendered = Mismatches()
        let done = DispatchGroup()
        DispatchQueue.global().async(group: done) {
            if (try? animation.frame(at: 5)) == eager[5].pixels { rendered.add(5) }
        }
        #expect(waiting.wait(timeout: Self.bound) == .success)
        held.release()
        #expect(done.wait(timeout: Self.bound) == .success)
        #expect(rendered.all == [5] && budget.reservedBytes == 0)
    }

    @Test func theDefaultLimitIsAQuarterOfTheMachineAtMost512MiB() {
        #expect(ImageDecodingBudget.defaultLimitBytes <= 512 * Self.mib && ImageDecodingBudget.defaultLimitBytes >= 16 * Self.mib)
        #expect(ImageDecodingBudget.shared == ImageDecodingBudget.shared)
        #expect(ImageDecodingBudget(limitBytes: 1) != ImageDecodingBudget.shared)
        #expect(ImageDecodingBudget(limitBytes: 1).limitBytes == Self.mib, "raised to the minimum")
        // The process's default is the rule below applied to what this machine's cgroup files and memory say.
        #expect(ImageDecodingBudget.defaultLimitBytes == ImageDecodingBudget.defaultLimit(available: MachineMemory.available))
    }

    /// The default limit from a cgroup file the test writes: a quarter of cgroup v2's `memory.max` (or v1's
    /// `memory.limit_in_bytes`), never more than the physical memory allows, at most 512 MiB, at least 16 MiB.
    @Test func theDefaultLimitIsAQuarterOfTheCgroupLimit() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("od-cgroup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let v2 = directory.appendingPathComponent("memory.max").path
        let v1 = directory.appendingPathComponent("memory.limit_in_bytes").path
        let gib = 1024 * Self.mib
        /// The default limit with `v2Text` in the v2 file (nil: no such file) and `v1Text` in the v1 file.
        func limit(v2 v2Text: String?, v1 v1Text: String? = nil, physical: Int = 64 * gib) throws -> Int {
            for (path, text) in [(v2, v2Text), (v1, v1Text)] {
                try? FileManager.default.removeItem(atPath: path)
                if let text { try text.write(toFile: path, atomically: true, encoding: .utf8) }
            }
            let cgroup = MachineMemory.cgroupLimit(files: [v2, v1])
            return ImageDecodingBudget.defaultLimit(available: MachineMemory.available(cgroupLimit: cgroup, physical: physical))
        }
        #expect(try limit(v2: "1073741824\n") == 256 * Self.mib, "a quarter of memory.max")
        #expect(try limit(v2: "400000000") == 100_000_000)
        #expect(try limit(v2: "4294967296") == 512 * Self.mib, "at most 512 MiB")
        #expect(try limit(v2: "33554432") == 16 * Self.mib, "at least 16 MiB")
        #expect(try limit(v2: "max") == 512 * Self.mib, "no cgroup limit: a quarter of the physical memory, capped")
        #expect(try limit(v2: "max", physical: 1 * gib) == 256 * Self.mib)
        #expect(try limit(v2: "2147483648", physical: 1 * gib) == 256 * Self.mib, "the physical memory when it is smaller")
        #expect(try limit(v2: nil, v1: "536870912") == 128 * Self.mib, "cgroup v1 when there is no v2 file")
        #expect(try limit(v2: nil, v1: "9223372036854771712", physical: 1 * gib) == 256 * Self.mib, "v1's 'no limit' is capped by the memory")
        #expect(try limit(v2: nil, v1: nil, physical: 1 * gib) == 256 * Self.mib, "no cgroup files")
    }

    /// `willAllocateImage` hears the returned image's bytes once, before the decode's pixels exist: the full
    /// canvas, or the target when the decode scales.
    @Test func theAllocationHookHearsTheImageBytesOnce() throws {
        let data = try Self.png(width: 64, height: 48)
        for (thumbnail, expected) in [(nil, 64 * 48 * 4), (CGSize(width: 16, height: 16), 16 * 12 * 4)] {
            let heard = Mismatches()
            var options = ImageDecodingOptions(thumbnailPixelSize: thumbnail)
            options.willAllocateImage = DecodeAllocationHook { heard.add($0) }
            let image = try ImageCodersManager.shared.decode(data, options: options)
            #expect(heard.all == [expected] && image.width * image.height * 4 == expected)
        }
    }

    static func png(width: Int, height: Int) throws -> Data {
        let pixels = (0..<(width * height * 4)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        return try ImageCodersManager.shared.encode(DecodedImage(width: width, height: height, pixels: pixels, format: .png), format: .png)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import OperationDownloader
import Testing

/// Mixed downloads, cancels, suspends, cancel-alls and invalidations: every completed handler runs exactly
/// once with finished == true.
@Suite struct StressTests {
    let server = FixtureServer.shared

    @Test func everyHandlerRunsExactlyOnce() async throws {
        let (downloader, queue) = makeDownloader { $0.maxConcurrentDownloads = 6 }
        let tag = newTag()
        let paths = [
            "/images/tiny.png", "/images/image.png", "/status/404", "/status/500", "/empty", "/html",
            "/drip/image.png?chunk=8192&delay_ms=2", "/reset/image.png?after=1000", "/images/corrupt.jpg",
        ]
        let count = 400
        var recorders: [DownloadRecorder] = []
        var tokens: [ImageDownloadToken?] = []
        for index in 0..<count {
            let recorder = DownloadRecorder()
            recorders.append(recorder)
            let path = paths[index % paths.count]
            // A few URLs repeat (coalescing), most are distinct.
            let unique = index % 5 == 0 ? "shared\(index % 3)" : "u\(index)"
            let separator = path.contains("?") ? "&" : "?"
            let url: URL? = index % 37 == 0 ? nil : server.url(path + separator + "tag=\(tag)&k=\(unique)")
            let options: ImageDownloaderOptions = index % 4 == 0 ? .progressiveLoad : []
            tokens.append(downloader.downloadImage(url, options: options, progress: recorder.progress, completed: recorder.completed))
            if index % 7 == 3 { tokens[index]?.cancel() }
            if index % 11 == 5, index > 20 { tokens[index - 20]?.cancel() }
        }
        // Some more cancels while things run, and a cancel-all in the middle for a second batch.
        for index in stride(from: 1, to: count, by: 13) { tokens[index]?.cancel() }
        for recorder in recorders { await recorder.waitForCompletion(timeout: 90) }
        // Every operation finished and its callbacks ran: a duplicate answer would be among them.
        await awaitIdle(downloader)
        await drain(queue)
        let counts = recorders.map { $0.finals.count }
        #expect(counts.allSatisfy { $0 == 1 }, "final calls per caller: \(Dictionary(grouping: counts, by: { $0 }).mapValues(\.count))")
        #expect(recorders.allSatisfy { $0.events.last == "final" })
        let succeeded = recorders.filter { $0.final?.image != nil }.count
        let cancelled = recorders.filter { $0.downloaderError?.caseName == "cancelled" }.count
        #expect(succeeded > 50)
        #expect(cancelled > 20)

        // A second batch, cancelled wholesale.
        downloader.isSuspended = true
        let batch = (0..<100).map { index in
            let recorder = DownloadRecorder()
            downloader.downloadImage(server.url("/images/tiny.png?tag=\(tag)&batch=\(index)"), completed: recorder.completed)
            return recorder
        }
        downloader.cancelAllDownloads()
        downloader.isSuspended = false
        for recorder in batch { await recorder.waitForCompletion() }
        await drain(queue)
        #expect(batch.allSatisfy { $0.finals.count == 1 && $0.downloaderError?.caseName == "cancelled" })
        await awaitIdle(downloader)
    }

    /// Thousands of mixed calls from many threads at once against four downloaders (FIFO, LIFO, one
    /// invalidated with cancellation midway, one invalidated letting work finish): downloads of shared
    /// (coalesced) and distinct URLs, token cancels, suspend/resume, cancel-all, header changes.
    /// Every caller is answered exactly once; the surviving downloaders keep working; the invalidated ones
    /// refuse new work. `OD_STRESS_SCALE` multiplies the call count (default 1: 8 threads x 320 calls).
    @Test func mixedCallsFromManyThreads() async throws {
        let scale = max(1, Int(ProcessInfo.processInfo.environment["OD_STRESS_SCALE"] ?? "") ?? 1)
        let threads = 8
        let callsPerThread = 320 * scale
        let downloaders: [(ImageDownloader, DispatchQueue)] = [
            makeDownloader { $0.maxConcurrentDownloads = 6 },
            makeDownloader { $0.maxConcurrentDownloads = 4; $0.executionOrder = .lifo},
            makeDownloader { $0.maxConcurrentDownloads = 3 },
            makeDownloader { $0.maxConcurrentDownloads = 3; $0.imageCache = nil },
        ]
        let tag = newTag()
        let paths = [
            "/images/tiny.png", "/images/image.png", "/images/adam7.png", "/status/404", "/images/corrupt.jpg",
            "/drip/image.png?chunk=8192&delay_ms=2", "/reset/image.png?after=1000", "/empty",
        ]
        let recorders = Locked<[DownloadRecorder]>([])
        let calls = Locked<[String: Int]>([:])
        let baseURL = server.url("/")
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var random = SplitMix(seed: UInt64(thread) &* 0x9E37_79B9 &+ 1)
            var tokens: [ImageDownloadToken] = []
            var local: [String: Int] = [:]
            for call in 0..<callsPerThread {
                let (downloader, _) = downloaders[Int(random.next() % UInt64(downloaders.count))]
                if thread == 0, call == callsPerThread / 2 {
                    downloaders[2].0.invalidate(cancelPendingOperations: true)
                    local["invalidate", default: 0] += 1
                    continue
                }
                if thread == 1, call == callsPerThread * 2 / 3 {
                    downloaders[3].0.invalidate(cancelPendingOperations: false)
                    local["invalidate", default: 0] += 1
                    continue
                }
                switch random.next() % 100 {
                case 0..<62:
                    let path = paths[Int(random.next() % UInt64(paths.count))]
                    let separator = path.contains("?") ? "&" : "?"
                    // A quarter of the URLs are shared between threads (coalescing), the rest distinct.
                    let key = random.next() % 4 == 0 ? "s\(random.next() % 6)" : "t\(thread)-\(call)"
                    let url = URL(string: baseURL.absoluteString + path.dropFirst() + separator + "tag=\(tag)&k=\(key)")
                    let options: ImageDownloaderOptions = random.next() % 3 == 0 ? [.progressiveLoad] : []
                    let recorder = DownloadRecorder()
                    recorders.withLock { $0.append(recorder) }
                    if let token = downloader.downloadImage(url, options: options, progress: recorder.progress, completed: recorder.completed) {
                        tokens.append(token)
                    }
                    local["download", default: 0] += 1
                case 62..<82:
                    if !tokens.isEmpty {
                        tokens[Int(random.next() % UInt64(tokens.count))].cancel()
                    }
                    local["cancel", default: 0] += 1
                case 82..<88:
                    downloader.isSuspended = true
                    downloader.isSuspended = false
                    local["suspend", default: 0] += 1
                case 88..<90:
                    downloader.cancelAllDownloads()
                    local["cancelAll", default: 0] += 1
                case 90..<95:
                    downloader.setValue("v\(call)", forHTTPHeaderField: "X-Stress")
                    _ = downloader.value(forHTTPHeaderField: "X-Stress")
                    local["header", default: 0] += 1
                default:
                    _ = downloader.currentDownloadCount
                    local["count", default: 0] += 1
                }
            }
            calls.withLock { totals in for (key, value) in local { totals[key, default: 0] += value } }
        }
        for (downloader, _) in downloaders { downloader.isSuspended = false }
        let all = recorders.current
        for recorder in all { await recorder.waitForCompletion(timeout: 120) }
        // Every operation finished and its callbacks ran: a duplicate answer would be among them.
        for (downloader, queue) in downloaders {
            await awaitIdle(downloader)
            await drain(queue)
        }

        let finals = all.map { $0.finals.count }
        #expect(finals.allSatisfy { $0 == 1 }, "final calls per caller: \(Dictionary(grouping: finals, by: { $0 }).mapValues(\.count))")
        #expect(all.allSatisfy { $0.events.last == "final" })
        let total = calls.current.values.reduce(0, +)
        #expect(total == threads * callsPerThread)
        #expect(all.contains { $0.final?.image != nil })
        #expect(all.contains { $0.downloaderError?.caseName == "cancelled" })

        for (downloader, _) in downloaders.prefix(2) {
            await awaitIdle(downloader)
            let result = try await downloader.image(for: server.url("/images/tiny.png?tag=\(tag)&after=1"))
            #expect(result.image?.width == 1)
        }
        for (downloader, _) in downloaders.suffix(2) {
            await awaitIdle(downloader)
            let refused = DownloadRecorder()
            downloader.downloadImage(server.url("/images/tiny.png?tag=\(tag)&refused=1"), completed: refused.completed)
            await refused.waitForCompletion()
            #expect(refused.downloaderError?.caseName == "invalidDownloadOperation")
        }
    }
}

/// A small deterministic generator (SplitMix64), so a failing stress run can be replayed.
struct SplitMix {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

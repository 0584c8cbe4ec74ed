import Decoding
import Foundation
import OperationDownloader
import Synchronization
import Testing
import UsageExamples

/// Runs the examples of Docs/Usage.md (Tests/UsageExamples) against the fixture server: the guide's code is not
/// only compiled but does what the guide says. The caching, processing and transport examples are in
/// UsageExampleTests+Caching.swift.
@Suite struct UsageExampleTests {
    let server = FixtureServer.shared

    @Test func firstDownloadDescribesTheImageAndItsOrigin() async throws {
        let description = try await describeImage(at: server.url("/images/image.png?tag=\(newTag())"))
        #expect(description.hasPrefix("png 160x"), "\(description)")
        #expect(description.contains("from network, status 200"), "\(description)")
    }

    @Test(arguments: TestTransports.all)
    func progressGoesFromUnknownOrPartialToWhole(_ transport: ImageDownloaderTransport) async throws {
        let fractions = Mutex<[Double?]>([])
        let url = server.url("/drip/baseline.jpg?chunk=8192&delay_ms=5&tag=\(newTag())")
        let result = try await download(url, with: makeDownloader(transport).0) { fraction in
            fractions.withLock { $0.append(fraction) }
        }
        let seen = fractions.withLock { $0 }
        #expect(result.image?.format == .jpeg)
        #expect(seen.last == 1.0)
        let known = seen.compactMap { $0 }
        #expect(known == known.sorted(), "progress went backwards: \(known)")
        #expect(known.count > 2, "one report per chunk expected: \(seen)")
    }

    @Test(arguments: TestTransports.all)
    func cancellingTheTaskEndsWithCancellationError(_ transport: ImageDownloaderTransport) async throws {
        let hold = newTag()
        let url = server.url("/hold/\(hold)/baseline.jpg?max=60&tag=\(hold)")
        defer { server.release(hold) }
        #expect(await downloadAndCancel(url, with: makeDownloader(transport).0) == "cancelled")
    }

    @Test(arguments: TestTransports.all)
    func eventsEndWithTheCompleteImage(_ transport: ImageDownloaderTransport) async throws {
        let url = server.url("/drip/progressive.jpg?chunk=4096&delay_ms=10&tag=\(newTag())")
        let images = try await progressiveImages(url, with: makeDownloader(transport).0)
        let last = try #require(images.last)
        #expect(!last.isIncomplete && last.format == .jpeg)
        #expect(images.dropLast().allSatisfy { $0.isIncomplete })
    }

    @Test(arguments: TestTransports.all)
    func aFailureTellsItsAttemptsAndLastMetrics(_ transport: ImageDownloaderTransport) async throws {
        let tag = newTag()
        let url = server.url("/flaky/\(tag)/image.png?fail=5&status=503&tag=\(tag)")
        let report = await downloadReportingFailure(url, with: makeDownloader(transport).0)
        #expect(report.hasPrefix("unacceptable HTTP status 503 (Service Unavailable) (after 3 attempts); last attempt: network, status 503"),
                "\(report)")
        #expect(server.stats(tag: tag).count == 3)

        let recovering = newTag()
        let recovered = server.url("/flaky/\(recovering)/image.png?fail=1&status=503&tag=\(recovering)")
        #expect(await downloadReportingFailure(recovered, with: makeDownloader(transport).0) == "ok after 2 attempt(s)")
    }

    @Test(arguments: TestTransports.all)
    func fiftyDownloadsAtOnceEachGetTheirResult(_ transport: ImageDownloaderTransport) async throws {
        let tag = newTag()
        let urls = (0..<50).map { i in
            server.url(i % 10 == 9 ? "/status/404?i=\(i)&tag=\(tag)" : "/images/image.png?i=\(i)&tag=\(tag)")
        }
        let results = await thumbnails(of: urls, with: makeDownloader(transport).0)
        #expect(results.count == 50)
        let images = results.values.compactMap { try? $0.get().image }
        #expect(images.count == 45)
        #expect(images.allSatisfy { max($0.width, $0.height) <= 256 })
        let failures = results.values.compactMap { result -> ImageDownloadFailure? in
            if case .failure(let failure) = result { return failure }
            return nil
        }
        #expect(failures.map(\.downloaderError?.caseName) == Array(repeating: "status404", count: 5))
        #expect(failures.allSatisfy { $0.response?.statusCode == 404 && $0.attemptCount == 1 })
    }

    @Test(arguments: TestTransports.all)
    func callbacksDeliverTheImageOrTheError(_ transport: ImageDownloaderTransport) async throws {
        let downloader = makeDownloader(transport).0
        let tag = newTag()
        let image = await withCheckedContinuation { continuation in
            downloadWithCallbacks(server.url("/images/progressive.jpg?tag=\(tag)"), with: downloader) {
                continuation.resume(returning: $0)
            }
        }
        #expect(try image.get().format == .jpeg)
        let missing = await withCheckedContinuation { continuation in
            downloadWithCallbacks(server.url("/status/404?tag=\(tag)"), with: downloader) { continuation.resume(returning: $0) }
        }
        #expect(throws: ImageDownloaderError.self) { try missing.get() }
    }

    @Test func trailingClosuresReportProgressThenCompletion() async throws {
        let received = Mutex<[Int]>([])
        // Held until the end: a downloader that is released cancels its downloads.
        let downloader = makeDownloader().0
        let error = await withCheckedContinuation { (continuation: CheckedContinuation<(any Error)?, Never>) in
            downloadWithTrailingClosures(
                server.url("/drip/image.png?chunk=8192&delay_ms=5&tag=\(newTag())"), with: downloader,
                progress: { bytes in received.withLock { $0.append(bytes) } },
                done: { continuation.resume(returning: $0) })
        }
        let size = try FixtureServer.fixtureData("image.png").count
        withExtendedLifetime(downloader) {}
        #expect(error == nil)
        #expect(received.withLock { $0.last } == size)
    }

    @Test func aMutexTalliesWhatHandlersReport() async throws {
        let tally = DownloadTally()
        let downloader = makeDownloader().0
        let tag = newTag()
        let urls = ["/images/tiny.png?a&tag=\(tag)", "/images/tiny.png?b&tag=\(tag)", "/status/404?tag=\(tag)"]
        await withTaskGroup(of: Void.self) { group in
            for path in urls {
                let url = server.url(path)
                group.addTask {
                    await withCheckedContinuation { continuation in
                        tally.download(url, with: downloader) { continuation.resume() }
                    }
                }
            }
        }
        let summary = tally.summary
        let tiny = try FixtureServer.fixtureData("tiny.png").count
        #expect(summary.succeeded == 2 && summary.failed == 1 && summary.bytes == 2 * tiny)
    }

    @Test func anActorLogsFailures() async throws {
        let log = FailureLog()
        let tag = newTag()
        await log.download(server.url("/images/tiny.png?tag=\(tag)"), with: makeDownloader().0)
        await log.download(server.url("/status/410?tag=\(tag)"), with: makeDownloader().0)
        #expect(await log.entries == ["410: unacceptable HTTP status 410 (Gone)"])
    }
}

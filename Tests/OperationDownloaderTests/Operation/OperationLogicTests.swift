import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import Testing
@testable import OperationDownloader

/// The operation's logic on a scripted transport (issue 14): every event is delivered by the test, so races
/// that a real server can only provoke by timing are played out exactly. No sleep, no polling.
@Suite struct OperationLogicTests {
    private let png = ScriptedHarness.fixture("image.png")

    @Test func aDownloadDeliversResponseBytesAndOneAnswer() async throws {
        let harness = ScriptedHarness()
        let (recorder, _) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        #expect(transfer.request.urlRequest.url == ScriptedHarness.url())
        transfer.respond(headers: ["Content-Type": "image/png", "Content-Length": "\(png.count)"])
        transfer.send(png, inChunks: 4)
        transfer.complete()
        await recorder.completion()
        await harness.drained()
        #expect(recorder.final?.image?.width == 160)
        #expect(recorder.final?.data == png)
        #expect(recorder.progressList.first.map { $0 == (0, -1) } == true)
        #expect(recorder.progressList.last.map { $0 == (png.count, png.count) } == true)
        #expect(recorder.finals.count == 1)
        #expect(harness.transport.transfers.count == 1)
    }

    @Test func dataAfterCancelIsDropped() async throws {
        let harness = ScriptedHarness()
        let (recorder, token) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        transfer.deliversAfterCancel = true
        transfer.respond()
        transfer.send(png.prefix(1000))
        token?.cancel()
        #expect(transfer.cancelCount == 1)
        // A transport whose events were already on their way: the operation must ignore them.
        #expect(transfer.send(png.dropFirst(1000)))
        #expect(transfer.complete())
        await recorder.completion()
        await harness.drained()
        #expect(recorder.finals.count == 1)
        #expect(recorder.downloaderError?.caseName == "cancelled")
        #expect(recorder.progressList.allSatisfy { $0.0 <= 1000 })
        #expect(recorder.current.events.last == "final")
    }

    @Test func theLastTokenCancelsTheTransferAndOnlyIt() async throws {
        let harness = ScriptedHarness()
        let (first, firstToken) = harness.download()
        let (second, secondToken) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        transfer.respond()
        firstToken?.cancel()
        await first.completion()
        #expect(first.downloaderError?.caseName == "cancelled")
        #expect(transfer.cancelCount == 0)
        secondToken?.cancel()
        await second.completion()
        #expect(second.downloaderError?.caseName == "cancelled")
        #expect(transfer.cancelCount == 1)
        #expect(!transfer.send(png))
        await harness.drained()
        #expect(first.finals.count == 1 && second.finals.count == 1)
        #expect(harness.downloader.currentDownloadCount == 0)
    }

    // MARK: - Authentication

    @Test func a401ThenAChallengeRetriesWithTheCredentialAndDropsThe401Body() async throws {
        let harness = ScriptedHarness {
            $0.username = "user"
            $0.password = "secret"
        }
        let (recorder, _) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        transfer.respond(status: 401, headers: ["Content-Type": "text/plain"])
        transfer.send(Data("unauthorized".utf8))
        let credential = transfer.challenge()
        #expect(credential?.user == "user")
        transfer.respond()
        transfer.send(png)
        transfer.complete()
        await recorder.completion()
        #expect(recorder.final?.image?.width == 160, "got \(String(describing: recorder.final?.error))")
        #expect(recorder.final?.data == png)
    }

    @Test func aChallengeForAnotherHostIsRefusedAndThe401IsTheAnswer() async throws {
        let harness = ScriptedHarness { $0.urlCredential = URLCredential(user: "u", password: "p", persistence: .forSession) }
        let (recorder, _) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        transfer.respond(status: 401, headers: ["Content-Type": "text/plain"])
        #expect(transfer.challenge(host: "elsewhere.test") == nil)
        await recorder.completion()
        #expect(recorder.downloaderError?.caseName == "status401")
    }

    @Test func aSecond401AfterTheCredentialIsFinal() async throws {
        let harness = ScriptedHarness { $0.urlCredential = URLCredential(user: "u", password: "p", persistence: .forSession) }
        let (recorder, _) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        transfer.respond(status: 401)
        #expect(transfer.challenge() != nil)
        transfer.respond(status: 401)
        await recorder.completion()
        #expect(recorder.downloaderError?.caseName == "status401")
        #expect(transfer.cancelCount == 1)
    }

    @Test func a401WithoutACredentialFailsAtTheResponse() async throws {
        let harness = ScriptedHarness()
        let (recorder, _) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        transfer.respond(status: 401)
        await recorder.completion()
        #expect(recorder.downloaderError?.caseName == "status401")
        #expect(transfer.cancelCount == 1)
    }

    // MARK: - Redirects

    @Test func redirectsKeepTheHeadersAndTooManyEndTheDownloadDuringTheDecision() async throws {
        let harness = ScriptedHarness()
        harness.downloader.setValue("kept", forHTTPHeaderField: "X-Kept")
        let (recorder, _) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        for hop in 1...RedirectPolicy.maximumRedirects {
            let next = transfer.redirect(to: ScriptedHarness.url("hop\(hop).png"))
            #expect(next?.value(forHTTPHeaderField: "X-Kept") == "kept")
        }
        #expect(transfer.redirect(to: ScriptedHarness.url("one-too-many.png")) == nil)
        // The refusal cancelled the transfer while the redirect was being decided; the adapter must issue such
        // a cancel after the decision (URLSessionTransfer), which this records.
        #expect(transfer.cancelsDuringDecisions == 1)
        await recorder.completion()
        #expect(recorder.downloaderError?.caseName == "network\(URLError.httpTooManyRedirects.rawValue)")
        #expect(recorder.finals.count == 1)
    }

    @Test func aRedirectArrivingAfterACancelIsNotFollowed() async throws {
        let harness = ScriptedHarness()
        let (recorder, token) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        transfer.deliversAfterCancel = true
        token?.cancel()
        #expect(transfer.redirect(to: ScriptedHarness.url("later.png")) == nil)
        await recorder.completion()
        await harness.drained()
        #expect(recorder.downloaderError?.caseName == "cancelled")
        #expect(recorder.finals.count == 1)
    }

    @Test func aRedirectToASchemeOtherThanHTTPIsRefused() async throws {
        let harness = ScriptedHarness()
        let (recorder, _) = harness.download()
        let transfer = try #require(await harness.transport.transfer())
        #expect(transfer.redirect(to: URL(fileURLWithPath: "/etc/passwd")) == nil)
        await recorder.completion()
        #expect(recorder.downloaderError?.caseName == "network\(URLError.unsupportedURL.rawValue)")
    }

    // MARK: - Joining a download at each phase

    @Test func callersJoinAtEveryPhaseUntilTheAnswerAndOneTransferServesThemAll() async throws {
        let coder = try #require(BlockingCoder.wrapping(fixture: "image.png"))
        let harness = ScriptedHarness { $0.codersManager = TestCoders.manager(with: coder) }
        harness.downloader.isSuspended = true
        let (queued, _) = harness.download()
        let (alsoQueued, _) = harness.download()
        harness.downloader.isSuspended = false
        let transfer = try #require(await harness.transport.transfer())
        let (beforeResponse, _) = harness.download()
        transfer.respond(headers: ["Content-Type": "image/png", "Content-Length": "\(png.count)"])
        transfer.send(png.prefix(20_000))
        let (midBody, _) = harness.download()
        transfer.send(png.dropFirst(20_000))
        transfer.complete()
        await coder.started()
        // The bytes are complete and being decoded: a caller still joins this operation.
        let (duringDecode, _) = harness.download()
        coder.proceed.signal()
        let all = [queued, alsoQueued, beforeResponse, midBody, duringDecode]
        for recorder in all { await recorder.completion() }
        await harness.drained()
        #expect(all.allSatisfy { $0.final?.image?.width == 160 && $0.finals.count == 1 })
        #expect(harness.transport.transfers.count == 1)
        // The mid-body joiner saw progress from where it joined to the end.
        #expect(midBody.progressList.first.map { $0.0 >= 20_000 } == true)
        #expect(midBody.progressList.last.map { $0 == (png.count, png.count) } == true)
        // Once answered, the operation is done: a new caller makes a new transfer.
        harness.download()
        #expect(await harness.transport.transfer(1) != nil)
    }

    /// Cancelling from the first progress callback races with the end of `start()` (a regression once).
    @Test func cancellingFromTheStartProgressCallbackAnswersOnce() async throws {
        let harness = ScriptedHarness()
        let recorder = AsyncRecorder()
        let token = Locked<ImageDownloadToken?>(nil)
        // The progress closure holds this box, and the box the token, which holds the closure: let the token go.
        defer { token.withLock { $0 = nil } }
        let progress = recorder.progress
        token.withLock {
            $0 = harness.downloader.downloadImage(
                ScriptedHarness.url(), progress: { received, expected, url in
                    progress(received, expected, url)
                    token.withLock { $0 }?.cancel()
                }, completed: recorder.completed)
        }
        await recorder.completion()
        await harness.drained()
        #expect(recorder.finals.count == 1)
        #expect(recorder.downloaderError?.caseName == "cancelled")
        #expect(harness.transport.transfers.allSatisfy { $0.cancelCount <= 1 })
    }
}

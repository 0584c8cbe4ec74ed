import Foundation
import OperationDownloader
import Testing
@testable import ImagedlCore

/// `--retry N` and `--input FILE` on the command line, and what `--retry` sets on the downloader.
@Suite struct RetryAndInputArgumentTests {
    private func parse(_ args: [String]) throws -> Command { try ArgumentParser.parse(args) }

    private func usageError(_ args: [String]) -> String? { ParsedArguments.usageError(args) }

    @Test func retryTakesAttemptsAfterTheFirst() throws {
        guard case .download(let options) = try parse(["--retry", "3", "http://a.test/1.png"]) else {
            Issue.record("not a download")
            return
        }
        #expect(options.retry == 3)
        let downloader = try DownloadCommand(options: options).makeDownloader()
        #expect(downloader.configuration.retryPolicy == ImageDownloaderRetryPolicy(maximumAttempts: 4))
        // The default backoff: 0.25 s doubling, at most 30 s.
        #expect(downloader.configuration.retryPolicy.initialDelay == 0.25)
        #expect(downloader.configuration.retryPolicy.maximumDelay == 30)
        downloader.invalidate(cancelPendingOperations: true)

        guard case .download(let plain) = try parse(["http://a.test/1.png"]) else {
            Issue.record("not a download")
            return
        }
        #expect(plain.retry == 0)
        let noRetries = try DownloadCommand(options: plain).makeDownloader()
        #expect(noRetries.configuration.retryPolicy == .never)
        noRetries.invalidate(cancelPendingOperations: true)
    }

    @Test func badRetryValues() {
        for value in ["-1", "101", "two", "1.5", ""] {
            #expect(usageError(["--retry", value, "http://a.test/1.png"])?.contains("--retry") == true, "\(value)")
        }
        #expect(usageError(["http://a.test/1.png", "--retry"]) == "--retry needs a value")
    }

    @Test func inputNeedsNoOperands() throws {
        guard case .download(let options) = try parse(["--input", "urls.txt", "--concurrency", "16", "--json"]) else {
            Issue.record("not a download")
            return
        }
        #expect(options.inputFile == "urls.txt" && options.urls.isEmpty && options.concurrency == 16 && options.json)
        guard case .download(let stdin) = try parse(["--input=-", "http://a.test/first.png"]) else {
            Issue.record("not a download")
            return
        }
        #expect(stdin.inputFile == "-")
        #expect(stdin.urls.map(\.absoluteString) == ["http://a.test/first.png"])
    }

    @Test func inputMisuse() {
        #expect(usageError(["--input", ""]) != nil)
        #expect(usageError(["--demo", "--input", "urls.txt"])?.contains("--input") == true)
        #expect(usageError([]) != nil)
        #expect(usageError(["--json"])?.contains("no URLs") == true)
    }

    @Test func helpMentionsBoth() {
        #expect(HelpText.manual.contains("--retry N"))
        #expect(HelpText.manual.contains("--input FILE"))
    }
}

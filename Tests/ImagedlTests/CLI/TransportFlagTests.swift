import Foundation
@testable import ImagedlCore
import OperationDownloader
import Testing

/// `--transport`, `--insecure`, `--cacert`, `--proxy` (Docs/Options.md): parsed, validated, and turned into
/// configuration values.
@Suite struct TransportFlagTests {
    private func download(_ args: [String]) throws -> DownloadOptions { try ParsedArguments.download(args) }

    private func usageError(_ args: [String]) -> String? { ParsedArguments.usageError(args) }

    @Test func flagsAreParsed() throws {
        let options = try download([
            "https://a.test/1.png", "--transport", "curl", "--insecure", "--cacert", "/tmp/ca.pem",
            "--proxy=http://proxy.test:3128",
        ])
        #expect(options.transport == .curl)
        #expect(options.insecure)
        #expect(options.caFile == "/tmp/ca.pem")
        #expect(options.proxy == URL(string: "http://proxy.test:3128"))
        let plain = try download(["https://a.test/1.png", "--transport=URLSession"])
        #expect(plain.transport == .urlsession && !plain.insecure && plain.caFile == nil && plain.proxy == nil)
    }

    @Test func badValuesAreUsageErrors() {
        #expect(usageError(["https://a.test/1.png", "--transport", "wget"])?.contains("curl or urlsession") == true)
        #expect(usageError(["https://a.test/1.png", "--proxy", "not a url"])?.contains("--proxy") == true)
        #expect(usageError(["https://a.test/1.png", "--cacert", ""])?.contains("--cacert") == true)
        #expect(usageError(["https://a.test/1.png", "--insecure=yes"]) != nil)
        // The curl-only settings are refused with URLSession rather than silently ignored.
        #expect(usageError(["https://a.test/1.png", "--transport", "urlsession", "--cacert", "ca.pem"])?.contains("curl") == true)
        #expect(usageError(["https://a.test/1.png", "--transport", "urlsession", "--proxy", "http://p:1"])?.contains("curl") == true)
    }

    @Test func configurationValues() throws {
        var configuration = ImageDownloaderConfiguration()
        TransportOptions.apply(try download(["https://a.test/1.png", "--cacert", "ca.pem", "--proxy", "http://p.test:8080"]),
                               to: &configuration)
        #expect(configuration.transport == (ImageDownloaderTransport.curl.isAvailable ? .curl : .urlSession))
        #expect(configuration.tls.caFile == "ca.pem")
        #expect(configuration.proxy == .proxy(URL(string: "http://p.test:8080")!))

        var chosen = ImageDownloaderConfiguration()
        TransportOptions.apply(try download(["https://a.test/1.png", "--transport", "urlsession"]), to: &chosen)
        #expect(chosen.transport == .urlSession)
        #expect(chosen.tls == .systemDefault && chosen.proxy == .environment)
    }

    @Test func helpNamesTheFlags() {
        for flag in ["--transport", "--insecure", "--cacert", "--proxy"] {
            #expect(HelpText.manual.contains(flag))
        }
    }

    @Test func networkMetricsInJSON() {
        var metrics = ImageDownloadMetrics(queuedAt: Date())
        metrics.httpVersion = "2"
        var record = DownloadRecord(index: 0, url: URL(string: "https://a.test/1.png")!)
        record.network = NetworkSummary(metrics)
        let text = record.json.serialized()
        #expect(text.contains("\"network\":{\"http_version\":\"2\",\"remote_address\":null"), "\(text)")
        record.network = nil
        #expect(record.json.serialized().contains("\"network\":null"))
    }
}

import Foundation
import Testing
@testable import ImagedlCore

@Suite struct ArgumentParserTests {
    private func download(_ args: [String]) throws -> DownloadOptions { try ParsedArguments.download(args) }

    private func usageError(_ args: [String]) -> String? { ParsedArguments.usageError(args) }

    @Test func defaultsForOneURL() throws {
        let options = try download(["https://example.com/a.jpg"])
        #expect(options.urls == [URL(string: "https://example.com/a.jpg")])
        #expect(options.concurrency == 6)
        #expect(options.timeout == 15)
        #expect(options.maxTime == nil)  // no total cap unless asked (--max-time)
        #expect(!options.lifo && !options.progressive && !options.json && !options.preview && !options.writePNG)
        #expect(options.outputDirectory == nil && options.thumbnail == nil)
        #expect(options.headers.isEmpty && options.user == nil && options.password == nil)
    }

    @Test func everyDownloadFlag() throws {
        let options = try download([
            "http://a.test/1.png", "--concurrency", "3", "--lifo", "--progressive", "--output", "out", "--png",
            "--thumbnail", "320x240", "--json", "--preview", "--timeout", "2.5", "--max-time", "90", "--header", "X-One: 1",
            "--header=Accept: image/png", "--user", "u", "--password", "p:w", "--http-cache", "cache dir",
            "https://b.test/2.gif",
        ])
        #expect(options.urls.map(\.absoluteString) == ["http://a.test/1.png", "https://b.test/2.gif"])
        #expect(options.concurrency == 3)
        #expect(options.lifo && options.progressive && options.json && options.preview && options.writePNG)
        #expect(options.outputDirectory == "out")
        #expect(options.thumbnail == PixelSize(width: 320, height: 240))
        #expect(options.timeout == 2.5)
        #expect(options.maxTime == 90)
        #expect(options.headers == [HTTPHeader(name: "X-One", value: "1"), HTTPHeader(name: "Accept", value: "image/png")])
        #expect(options.user == "u" && options.password == "p:w")
        #expect(options.httpCacheDirectory == "cache dir")
    }

    @Test func httpCacheOption() throws {
        #expect(try download(["http://a.test/1.png"]).httpCacheDirectory == nil)
        #expect(try download(["--http-cache=/tmp/c", "http://a.test/1.png"]).httpCacheDirectory == "/tmp/c")
        // Also with the demo, which passes the options on to its downloads.
        guard case .demo(let demo) = try ArgumentParser.parse(["--demo", "--http-cache", "c"]) else {
            Issue.record("--demo --http-cache is not a demo")
            return
        }
        #expect(demo.httpCacheDirectory == "c")
    }

    @Test func equalsFormAndDoubleDash() throws {
        let options = try download(["--concurrency=2", "--", "http://a.test/--lifo.png"])
        #expect(options.concurrency == 2)
        #expect(!options.lifo)
        #expect(options.urls.first?.absoluteString == "http://a.test/--lifo.png")
    }

    @Test func helpAndVersion() throws {
        #expect(try ArgumentParser.parse(["--help"]) == .help)
        #expect(try ArgumentParser.parse(["-h"]) == .help)
        #expect(try ArgumentParser.parse(["http://a.test/x.png", "--help"]) == .help)
        #expect(try ArgumentParser.parse(["decode", "--help"]) == .help)
        #expect(try ArgumentParser.parse(["--version"]) == .version)
    }

    @Test func helpReadsLikeAManualPage() {
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES"] {
            #expect(HelpText.manual.contains("\n\(section)\n") || HelpText.manual.hasPrefix("\(section)\n"), "missing \(section)")
        }
        for option in ["--concurrency", "--lifo", "--progressive", "--output", "--png", "--thumbnail", "--json",
                       "--preview", "--timeout", "--max-time", "--header", "--user", "--password", "--http-cache", "--demo",
                       "--rgba", "130"] {
            #expect(HelpText.manual.contains(option), "help does not mention \(option)")
        }
    }

    @Test func demo() throws {
        guard case .demo(let options) = try ArgumentParser.parse(["--demo", "--concurrency", "2"]) else {
            Issue.record("expected demo")
            return
        }
        #expect(options.concurrency == 2 && options.urls.isEmpty)
        #expect(usageError(["--demo", "http://a.test/x.png"])?.contains("--demo takes no URLs") == true)
    }

    @Test func decodeCommand() throws {
        let command = try ArgumentParser.parse(["decode", "a.jpg", "--json", "--rgba", "out.rgba", "dir/"])
        var expected = DecodeOptions()
        expected.paths = ["a.jpg", "dir/"]
        expected.json = true
        expected.rgbaOutput = "out.rgba"
        #expect(command == .decode(expected))
        #expect(usageError(["decode"]) == "decode needs at least one FILE")
        #expect(usageError(["decode", "a.jpg", "--rgba"]) == "--rgba needs a value")
        #expect(usageError(["decode", "a.jpg", "--lifo"]) == "unknown option '--lifo'")
    }

    @Test(arguments: [
        (["--concurrency", "0", "http://a.test/"], "--concurrency needs a whole number from 1 to 64, not '0'"),
        (["--concurrency", "x", "http://a.test/"], "--concurrency needs a whole number from 1 to 64, not 'x'"),
        (["--concurrency"], "--concurrency needs a value"),
        (["--timeout", "-1", "http://a.test/"], "--timeout needs a number of seconds above 0, not '-1'"),
        (["--timeout", "nan", "http://a.test/"], "--timeout needs a number of seconds above 0, not 'nan'"),
        (["--max-time", "0", "http://a.test/"], "--max-time needs a number of seconds above 0, not '0'"),
        (["--max-time", "soon", "http://a.test/"], "--max-time needs a number of seconds above 0, not 'soon'"),
        (["http://a.test/", "--max-time"], "--max-time needs a value"),
        (["--thumbnail", "320", "http://a.test/"], "--thumbnail needs WxH in pixels, like 320x240, not '320'"),
        (["--thumbnail", "0x10", "http://a.test/"], "--thumbnail needs WxH in pixels, like 320x240, not '0x10'"),
        (["--header", "NoColon", "http://a.test/"], "--header needs 'Name: value', not 'NoColon'"),
        (["--header", "Bad Name: v", "http://a.test/"], "--header has an invalid name in 'Bad Name: v'"),
        (["--user", "u", "http://a.test/"], "--user needs --password"),
        (["--password", "p", "http://a.test/"], "--password needs --user"),
        (["--png", "http://a.test/"], "--png needs --output DIR"),
        (["--http-cache", "", "http://a.test/"], "--http-cache needs a folder or a Redis URL (redis://, redis-sentinel://, redis-cluster://)"),
        (["http://a.test/", "--http-cache"], "--http-cache needs a value"),
        (["--frobnicate", "http://a.test/"], "unknown option '--frobnicate'"),
        (["--lifo=yes", "http://a.test/"], "--lifo takes no value"),
        (["ftp://a.test/x.png"], "'ftp://a.test/x.png' is not an http:// or https:// URL"),
        (["not a url"], "'not a url' is not an http:// or https:// URL"),
        (["--lifo"], "no URLs given (try 'imagedl --demo', or 'imagedl --help')"),
        ([], "no URLs given (try 'imagedl --demo', or 'imagedl --help')"),
    ])
    func usageErrors(arguments: [String], message: String) {
        #expect(usageError(arguments) == message)
    }

    @Test func usageErrorExitsWithStatus2() {
        #expect(Imagedl.run(arguments: ["--concurrency", "0", "http://a.test/"]) == .usage)
        #expect(ExitCode.usage.rawValue == 2 && ExitCode.interrupted.rawValue == 130)
    }
}

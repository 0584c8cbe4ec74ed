import Decoding
import Foundation
import TestRequirements
import Testing
@testable import ImagedlCore

/// `imagedl --input FILE` end to end against the tool's loopback server: every URL reported once (JSON in
/// completion order, with attempts), bounded work in flight, comments and bad lines, and true streaming from a
/// pipe (results arrive before the input ends).
@Suite(.offThePool) struct InputOptionTests {
    /// Hands every finished record to a closure; nothing else.
    final class CallbackReporter: DownloadReporter, @unchecked Sendable {  // called on the command's queue only
        let onFinished: @Sendable (DownloadRecord) -> Void
        private(set) var endedWith: [DownloadRecord]?
        init(_ onFinished: @escaping @Sendable (DownloadRecord) -> Void) { self.onFinished = onFinished }
        func begin(_ records: [DownloadRecord]) {}
        func update(_ record: DownloadRecord) {}
        func finished(_ record: DownloadRecord) { onFinished(record) }
        func end(_ records: [DownloadRecord], interrupted: Bool) { endedWith = records }
    }

    private static func server() throws -> LoopbackHTTPServer {
        try LoopbackHTTPServer(routes: [
            "/bounce.gif": .init(body: try DemoSamples.data(named: "bounce.gif"), contentType: "image/gif"),
        ])
    }

    private static func temporaryFile(_ text: String) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("imagedl-input-\(UUID().uuidString).txt")
        try Data(text.utf8).write(to: file)
        return file
    }

    @Test func everyURLOfTheFileIsReportedOnceWithBoundedWorkInFlight() throws {
        let server = try Self.server()
        defer { server.stop() }
        var text = "# a list of URLs\n\n"
        for i in 0..<300 {
            text += i % 10 == 9 ? server.url("/missing-\(i).png").absoluteString : server.url("/bounce.gif").absoluteString + "?i=\(i)"
            text += i % 7 == 0 ? "\r\n" : "\n"
        }
        text += "not-a-url\n" + server.url("/bounce.gif").absoluteString + "?i=0\n"  // a bad line, and a repeated URL
        let file = try Self.temporaryFile(text)
        defer { try? FileManager.default.removeItem(at: file) }

        var options = DownloadOptions()
        options.inputFile = file.path
        options.concurrency = 2
        options.json = true
        let lines = LineCollector()
        let command = DownloadCommand(options: options, reporter: JSONReporter(write: lines.add))
        #expect(command.run() == .failure)  // the 404s and the bad line

        let objects = try lines.lines.map { line -> [String: Any] in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(objects.count == 301)
        let ok = objects.filter { $0["status"] as? String == "ok" }
        let failed = objects.filter { $0["status"] as? String == "error" }
        #expect(ok.count == 271 && failed.count == 30)
        #expect(failed.allSatisfy { ($0["error"] as? String)?.hasPrefix("HTTP 404") == true && $0["attempts"] as? Int == 1 })
        // One request per line: streaming keeps no memory cache, so the repeated URL (long finished) is fetched again.
        #expect(objects.allSatisfy { $0["attempts"] as? Int == 1 && $0["cache_hit"] as? Bool == false })
        #expect(Set(objects.compactMap { $0["url"] as? String }).count == 300)
        #expect(server.requestCount("/bounce.gif") == 271)
        // Streaming: never more than the window in flight, and nothing kept once reported.
        #expect(command.peakInFlight <= command.inputWindow)
        #expect(command.peakInFlight >= 2)
        #expect(command.results.isEmpty)
    }

    @Test func operandsComeFirstThenTheFileAndPlainOutputEndsWithTotals() throws {
        let server = try Self.server()
        defer { server.stop() }
        let file = try Self.temporaryFile("\(server.url("/bounce.gif").absoluteString)?i=1\n\(server.url("/nope.png").absoluteString)\n")
        defer { try? FileManager.default.removeItem(at: file) }
        var options = DownloadOptions()
        options.urls = [server.url("/bounce.gif")]
        options.inputFile = file.path
        options.concurrency = 1
        let lines = LineCollector()
        let command = DownloadCommand(options: options, reporter: StreamingReporter(preview: false, write: lines.add))
        #expect(command.run() == .failure)
        let output = lines.lines.joined()
        #expect(output.contains("[1] \(server.url("/bounce.gif").absoluteString)  "))
        #expect(output.contains("[3] \(server.url("/nope.png").absoluteString)  nope.png  failed: HTTP 404"))
        #expect(output.hasSuffix("2 of 3 downloaded, \(Formatting.bytes(2 * (try DemoSamples.data(named: "bounce.gif")).count)) in all; 1 failed or cancelled; cache: 0 memory, 0 HTTP hits, 0 stale, 0 revalidated\n"))
    }

    @Test func resultsArriveBeforeThePipedInputEnds() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let pipe = Pipe()
        var options = DownloadOptions()
        options.inputFile = "/dev/fd/\(pipe.fileHandleForReading.fileDescriptor)"
        let finished = Locked<[String]>([])
        let firstTwo = Signal()
        let reporter = CallbackReporter { record in
            let count = finished.withLock { list -> Int in
                list.append(record.url.absoluteString)
                return list.count
            }
            if count == 2 { firstTwo.fire() }
        }
        let command = DownloadCommand(options: options, reporter: reporter)
        let exit = Signal()
        let status = Locked<ExitCode?>(nil)
        Thread.detachNewThread {
            let code = command.run()
            status.withLock { $0 = code }
            exit.fire()
        }
        let url = server.url("/bounce.gif").absoluteString
        pipe.fileHandleForWriting.write(Data("\(url)?i=1\n\(url)?i=2\n".utf8))
        #expect(await firstTwo.wait(), "the first URLs were not downloaded while the input stayed open")
        #expect(status.current == nil)
        pipe.fileHandleForWriting.write(Data("# more\n\(url)?i=3\n".utf8))
        try pipe.fileHandleForWriting.close()
        #expect(await exit.wait())
        #expect(status.current == .success)
        #expect(finished.current.count == 3)
        #expect(reporter.endedWith?.isEmpty == true)
    }

    @Test func anUnreadableInputFailsBeforeAnyDownload() {
        var options = DownloadOptions()
        options.inputFile = "/nonexistent/urls-\(UUID().uuidString).txt"
        let command = DownloadCommand(options: options, reporter: JSONReporter(write: { _ in }))
        #expect(command.run() == .failure)
        #expect(command.peakInFlight == 0)
    }
}

/// A one-shot event a test awaits without polling (bounded against hangs).
final class Signal: @unchecked Sendable {  // `lock` guards `fired` and `waiters`
    private let lock = NSLock()
    private var fired = false
    private var waiters: [CheckedContinuation<Bool, Never>] = []

    func fire() {
        let ready: [CheckedContinuation<Bool, Never>] = lock.withLock {
            fired = true
            defer { waiters = [] }
            return waiters
        }
        for waiter in ready { waiter.resume(returning: true) }
    }

    /// True once fired; false after `timeout` seconds.
    func wait(timeout: TimeInterval = 60) async -> Bool {
        await withCheckedContinuation { continuation in
            let now: Bool = lock.withLock {
                if fired { return true }
                waiters.append(continuation)
                return false
            }
            if now { continuation.resume(returning: true); return }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
                let late: [CheckedContinuation<Bool, Never>] = lock.withLock {
                    defer { waiters = [] }
                    return waiters
                }
                for waiter in late { waiter.resume(returning: false) }
            }
        }
    }
}

/// A lock-protected value for test closures.
final class Locked<Value>: @unchecked Sendable {  // `lock` guards `value`
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    @discardableResult func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
    var current: Value { withLock { $0 } }
}

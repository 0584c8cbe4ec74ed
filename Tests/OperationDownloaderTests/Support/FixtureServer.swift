import Foundation
import TestRequirements
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// One request as the fixture server logged it (`GET /_log?tag=`).
struct LoggedRequest: Decodable, Sendable {
    let method: String
    /// The decoded path, without the query.
    let path: String
    /// Query parameters (first value of each name).
    let query: [String: String]
    /// Request headers; keys are lower-cased, repeated headers joined with ", ".
    let headers: [String: String]
    /// Seconds since 1970 when the server began handling the request.
    let started: Double
    /// Seconds since 1970 when the response ended (nil while still in flight).
    let finished: Double?
    /// The status the server sent (nil for no response: stall before headers, garbage, in flight).
    let status: Int?
    /// Body bytes the server wrote (nil while in flight).
    let bytesSent: Int?
    /// True when the response ended early: the client went away, or a reset/stall/garbage endpoint broke it.
    let aborted: Bool?
    /// The client's TCP port: requests with equal ports came over one connection.
    let peerPort: Int?
}

/// Request count and peak concurrency for one tag (`GET /_stats?tag=`).
struct FixtureStats: Decodable, Sendable {
    /// Requests seen (in flight or finished).
    let count: Int
    /// The most requests in flight at once.
    let maxConcurrency: Int
    /// Requests in flight now.
    let inFlight: Int?
}

/// The loopback HTTP fixture server (Tests/Support/fixture_server.py), started once per test process.
///
/// Tests run in parallel: each one puts its own `tag=<uuid>` in every URL and reads the log by that tag.
/// When the server cannot start (no python3, script missing, no PORT line in time), every call records a
/// test issue naming the reason, so tests fail clearly instead of hanging.
final class FixtureServer: Sendable {
    /// Started lazily on first use (Swift runs a static initializer once, thread-safely).
    static let shared = FixtureServer()

    /// The server's port on 127.0.0.1 (0 when it failed to start).
    let port: Int
    /// Why the server is not running, or nil when it is.
    let startupFailure: String?

    private let baseURL: URL
    private let localhostBaseURL: URL
    /// The child and its pipes, kept for the life of the test process: the server exits when its stdin
    /// pipe closes, which happens when this process ends, however it ends.
    private let lifeline: Launched?
    private let controlSession: URLSession
    /// For `/_log?wait=` long polls, which send nothing until the server answers: an idle timeout of their own,
    /// above the server's bound on a wait.
    private let longPollSession: URLSession

    /// How long to wait for `PORT <n>`; generous because the machine is shared by parallel builds.
    private static let startupTimeout: TimeInterval = 30
    private static let controlTimeout: TimeInterval = 15
    /// The longest the server holds a `/_log?wait=` call (MAX_LOG_WAIT_SECONDS in fixture_server.py).
    private static let maximumLogWait: TimeInterval = 300

    private init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.timeoutIntervalForRequest = Self.controlTimeout
        controlSession = URLSession(configuration: configuration)
        // The session above keeps its own copy of the configuration.
        configuration.timeoutIntervalForRequest = Self.maximumLogWait + Self.controlTimeout
        longPollSession = URLSession(configuration: configuration)

        let started = Self.launch()
        switch started {
        case .success(let launched):
            port = launched.port
            lifeline = launched
            startupFailure = nil
        case .failure(let failure):
            port = 0
            lifeline = nil
            startupFailure = failure.message
            FileHandle.standardError.write(Data("FixtureServer: \(failure.message)\n".utf8))
        }
        baseURL = URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
        localhostBaseURL = URL(string: "http://localhost:\(port)") ?? URL(fileURLWithPath: "/")
    }

    // MARK: URLs

    /// `http://127.0.0.1:<port>` + `pathAndQuery` (which starts with "/").
    func url(_ pathAndQuery: String, sourceLocation: SourceLocation = #_sourceLocation) -> URL {
        makeURL(base: baseURL, pathAndQuery, sourceLocation: sourceLocation)
    }

    /// `http://localhost:<port>` + `pathAndQuery`: another host name for the same server, for cross-host
    /// redirect tests.
    func localhostURL(_ pathAndQuery: String, sourceLocation: SourceLocation = #_sourceLocation) -> URL {
        makeURL(base: localhostBaseURL, pathAndQuery, sourceLocation: sourceLocation)
    }

    private func makeURL(base: URL, _ pathAndQuery: String, sourceLocation: SourceLocation) -> URL {
        checkRunning(sourceLocation: sourceLocation)
        guard let url = URL(string: base.absoluteString + pathAndQuery) else {
            Issue.record("FixtureServer: not a valid path and query: \(pathAndQuery)", sourceLocation: sourceLocation)
            return base
        }
        return url
    }

    // MARK: Log and control

    /// Logged requests whose query had `tag=<tag>`, in arrival order (control calls are never logged).
    func requests(tag: String, sourceLocation: SourceLocation = #_sourceLocation) -> [LoggedRequest] {
        control("/_log?tag=\(Self.encoded(tag))", as: [LoggedRequest].self, sourceLocation: sourceLocation) ?? []
    }

    /// Request count and peak concurrency for `tag`.
    func stats(tag: String, sourceLocation: SourceLocation = #_sourceLocation) -> FixtureStats {
        control("/_stats?tag=\(Self.encoded(tag))", as: FixtureStats.self, sourceLocation: sourceLocation)
            ?? FixtureStats(count: 0, maxConcurrency: 0, inFlight: nil)
    }

    /// Waits (bounded by `timeout`, not a timing assertion) until at least `count` requests with `tag` have
    /// arrived, e.g. until a held request reached the server; with `finished`, also until every one of them has
    /// ended on the server side.
    ///
    /// Use `finished: true` before asserting `finished`, `bytesSent` or `aborted`: a client can see the
    /// last byte of a response a moment before the server's handler records its end.
    /// Returns the log at that point; records an issue when the condition was not reached.
    ///
    /// One long-poll control call (`/_log?wait=`): the server answers when its log meets the condition (it is
    /// notified of every request's start and end), or at the bound. Polling the log every 20 ms instead kept a
    /// control request and a sleeping task going through every wait, work that a loaded two-core machine could
    /// least spare while the requests waited for were still to be made.
    @discardableResult
    func awaitRequests(
        tag: String, count: Int, finished: Bool = false, timeout: TimeInterval = 60,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async -> [LoggedRequest] {
        let query = "tag=\(Self.encoded(tag))&count=\(count)&finished=\(finished ? 1 : 0)&wait=\(timeout)"
        let log = await loggedRequests("/_log?\(query)", waiting: timeout, sourceLocation: sourceLocation)
        if log.count < count || (finished && !log.allSatisfy({ $0.finished != nil })) {
            let ended = log.filter { $0.finished != nil }.count
            Issue.record(
                "FixtureServer: for tag \(tag), \(log.count) of \(count) requests arrived, \(ended) ended",
                sourceLocation: sourceLocation)
        }
        return log
    }

    /// Releases `/hold/<holdID>/…` requests now waiting, and lets later ones pass at once.
    func release(_ holdID: String, sourceLocation: SourceLocation = #_sourceLocation) {
        _ = controlData("/_release/\(Self.encoded(holdID))", sourceLocation: sourceLocation)
    }

    private func checkRunning(sourceLocation: SourceLocation) {
        if let startupFailure {
            Issue.record("FixtureServer is not running: \(startupFailure)", sourceLocation: sourceLocation)
        }
    }

    private func control<T: Decodable>(_ pathAndQuery: String, as type: T.Type, sourceLocation: SourceLocation) -> T? {
        guard let data = controlData(pathAndQuery, sourceLocation: sourceLocation) else { return nil }
        return decode(data, of: pathAndQuery, sourceLocation: sourceLocation)
    }

    /// An asynchronous `/_log` call that the server may hold for up to `waiting` seconds: a synchronous one would
    /// hold a thread of the cooperative pool (two, on two cores) while the tasks that should make the requests
    /// wait for one.
    private func loggedRequests(
        _ pathAndQuery: String, waiting: TimeInterval, sourceLocation: SourceLocation
    ) async -> [LoggedRequest] {
        guard let url = controlURL(pathAndQuery, sourceLocation: sourceLocation) else { return [] }
        var request = URLRequest(url: url)
        // The server answers at `waiting` at the latest; the margin covers a loaded machine.
        request.timeoutInterval = waiting + Self.controlTimeout
        let reply = await withCheckedContinuation { (continuation: CheckedContinuation<ControlReply, Never>) in
            longPollSession.dataTask(with: request) { data, response, error in
                continuation.resume(returning: ControlReply(data, response, error))
            }.resume()
        }
        guard let data = checked(reply, of: pathAndQuery, sourceLocation: sourceLocation) else { return [] }
        return decode(data, of: pathAndQuery, sourceLocation: sourceLocation) ?? []
    }

    /// A synchronous control call (not part of the measured traffic): data task + semaphore, bounded.
    private func controlData(_ pathAndQuery: String, sourceLocation: SourceLocation) -> Data? {
        guard let url = controlURL(pathAndQuery, sourceLocation: sourceLocation) else { return nil }
        let result = ControlResult()
        let done = DispatchSemaphore(value: 0)
        let task = controlSession.dataTask(with: url) { data, response, error in
            result.set(ControlReply(data, response, error))
            done.signal()
        }
        task.resume()
        guard done.wait(timeout: .now() + Self.controlTimeout + 5) == .success else {
            task.cancel()
            Issue.record("FixtureServer: control call \(pathAndQuery) timed out", sourceLocation: sourceLocation)
            return nil
        }
        return checked(result.get(), of: pathAndQuery, sourceLocation: sourceLocation)
    }

    /// The URL of a control call; nil (the failure recorded) when the server is not running.
    private func controlURL(_ pathAndQuery: String, sourceLocation: SourceLocation) -> URL? {
        checkRunning(sourceLocation: sourceLocation)
        guard startupFailure == nil else { return nil }
        return URL(string: baseURL.absoluteString + pathAndQuery)
    }

    /// The body of a successful control call; nil, with the failure recorded, otherwise.
    private func checked(_ reply: ControlReply?, of pathAndQuery: String, sourceLocation: SourceLocation) -> Data? {
        guard let reply, reply.failure == nil, reply.status == 200, let data = reply.data else {
            Issue.record(
                "FixtureServer: control call \(pathAndQuery) failed: status \(reply?.status.map(String.init) ?? "none"), \(reply?.failure ?? "no error")",
                sourceLocation: sourceLocation)
            return nil
        }
        return data
    }

    private func decode<T: Decodable>(_ data: Data, of pathAndQuery: String, sourceLocation: SourceLocation) -> T? {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            Issue.record("FixtureServer: cannot decode \(pathAndQuery): \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    private static func encoded(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
    }

    // MARK: Launch

    /// Why a launch failed, in words for the test log.
    struct LaunchFailure: Error {
        let message: String
    }

    /// A started server process: its port, and the pipes that keep it alive.
    struct Launched: Sendable {
        let port: Int
        let process: Process
        /// Closing this pipe's write end (or ending the test process) makes the server exit.
        let stdin: Pipe
        let stdout: Pipe
    }

    /// Tests/Support (the script and the fixture directory), found from this file's location.
    static var supportDirectory: URL {
        URL(fileURLWithPath: #filePath)         // Tests/OperationDownloaderTests/Support/FixtureServer.swift
            .deletingLastPathComponent()        // Tests/OperationDownloaderTests/Support
            .deletingLastPathComponent()        // Tests/OperationDownloaderTests
            .deletingLastPathComponent()        // Tests
            .appendingPathComponent("Support")  // Tests/Support
    }

    /// The package's root folder (Tests/Support's grandparent).
    static var packageRoot: URL { supportDirectory.deletingLastPathComponent().deletingLastPathComponent() }

    /// Tests/Support/Fixtures: the files served by `/images/<file>`, `/drip/<file>`, ...
    static var fixturesDirectory: URL { supportDirectory.appendingPathComponent("Fixtures") }

    /// The bytes of a fixture file, to compare with what was downloaded.
    static func fixtureData(_ name: String) throws -> Data {
        try Data(contentsOf: fixturesDirectory.appendingPathComponent(name))
    }

    /// Starts `fixture_server.py` with `interpreter` (found on PATH) and waits, bounded, for its port.
    /// Internal so that the self-tests can check failure reporting and shutdown on stdin EOF, and so that
    /// tests can start a second server with `extraArguments` (e.g. `--tls-cert`/`--tls-key` for HTTPS).
    static func launch(interpreter: String = "python3", extraArguments: [String] = []) -> Result<Launched, LaunchFailure> {
        let script = supportDirectory.appendingPathComponent("fixture_server.py")
        guard FileManager.default.fileExists(atPath: script.path) else {
            return .failure(LaunchFailure(message: "script not found at \(script.path)"))
        }
        let process = Process()
        // /usr/bin/env finds python3 on PATH; when it is missing, env exits 127 and stdout closes at once.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [interpreter, script.path, "--fixtures", fixturesDirectory.path] + extraArguments
        let stdinPipe = Pipe()
        let stdoutPipe = Pipe()
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        do {
            try ChildProcesses.run(process)
        } catch {
            return .failure(LaunchFailure(message: "cannot start \(interpreter) \(script.path): \(error)"))
        }

        // Read the first line on another thread so that a silent child cannot hang the tests.
        let reader = PortReader(handle: stdoutPipe.fileHandleForReading)
        let gotLine = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            reader.readFirstLine()
            gotLine.signal()
        }
        guard gotLine.wait(timeout: .now() + startupTimeout) == .success else {
            process.terminate()
            return .failure(LaunchFailure(message: "no PORT line from fixture_server.py within \(Int(startupTimeout)) s"))
        }
        let line = reader.line
        let prefix = "PORT "
        guard line.hasPrefix(prefix), let port = Int(line.dropFirst(prefix.count)), port > 0 else {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            let why = line.isEmpty
                ? "fixture_server.py exited (status \(process.terminationStatus)) before printing its port; is \(interpreter) on PATH?"
                : "unexpected first line from fixture_server.py: \(line)"
            return .failure(LaunchFailure(message: why))
        }
        return .success(Launched(port: port, process: process, stdin: stdinPipe, stdout: stdoutPipe))
    }
}

/// Reads bytes up to the first newline (bounded) from the child's stdout.
private final class PortReader: @unchecked Sendable {  // `storage` guarded by `lock`
    private let handle: FileHandle
    private let lock = NSLock()
    private var storage = ""

    init(handle: FileHandle) {
        self.handle = handle
    }

    var line: String {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }

    func readFirstLine() {
        var bytes = Data()
        // Bounded: the PORT line is short; stop at a newline, EOF, or 1 KB.
        while bytes.count < 1024 {
            let chunk = handle.readData(ofLength: 1)
            if chunk.isEmpty { break }
            if chunk.first == UInt8(ascii: "\n") { break }
            bytes.append(chunk)
        }
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        lock.lock()
        storage = text
        lock.unlock()
    }
}

/// The outcome of one control call, written on URLSession's queue and read by the waiting test.
/// What a control call got back.
private struct ControlReply: Sendable {
    let data: Data?
    let status: Int?
    let failure: String?

    init(_ data: Data?, _ response: URLResponse?, _ error: (any Error)?) {
        self.data = data
        status = (response as? HTTPURLResponse)?.statusCode
        failure = error.map { "\($0)" }
    }
}

/// The reply of a synchronous control call, handed from the task's thread to the waiting one.
private final class ControlResult: @unchecked Sendable {  // `reply` guarded by `lock`
    private let lock = NSLock()
    private var reply: ControlReply?

    func set(_ reply: ControlReply) { lock.withLock { self.reply = reply } }
    func get() -> ControlReply? { lock.withLock { reply } }
}

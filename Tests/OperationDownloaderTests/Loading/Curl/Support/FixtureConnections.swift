import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Connection counts of one tag (`GET /_connections?tag=`, Tests/Support/fixture_connections.py).
struct FixtureConnectionStats: Decodable, Sendable {
    /// Distinct TCP connections that served requests of the tag.
    let connections: Int
    /// The most of those open at once.
    let maxOpen: Int
    /// Open now.
    let open: Int
}

/// A request of the tag still being answered, and the body bytes it has written so far (`GET /_live?tag=`).
struct FixtureLiveRequest: Decodable, Sendable {
    let path: String
    let bytesSent: Int
}

/// Control calls of the connection bookkeeping, on any fixture server (the shared one, or one a test
/// launched: IPv6, TLS) given its base URL.
enum FixtureControl {
    static func connections(base: URL, tag: String, sourceLocation: SourceLocation = #_sourceLocation) -> FixtureConnectionStats? {
        get("/_connections?tag=\(tag)", base: base, sourceLocation: sourceLocation)
    }

    static func live(base: URL, tag: String, sourceLocation: SourceLocation = #_sourceLocation) -> [FixtureLiveRequest] {
        get("/_live?tag=\(tag)", base: base, sourceLocation: sourceLocation) ?? []
    }

    /// A synchronous GET with URLSession (not the transport under test), bounded.
    private static func get<T: Decodable>(_ pathAndQuery: String, base: URL, sourceLocation: SourceLocation) -> T? {
        guard let url = URL(string: base.absoluteString + pathAndQuery) else { return nil }
        let box = ResultBox()
        let done = DispatchSemaphore(value: 0)
        let task = session.dataTask(with: url) { data, _, _ in
            box.set(data)
            done.signal()
        }
        task.resume()
        guard done.wait(timeout: .now() + 20) == .success, let data = box.get() else {
            task.cancel()
            Issue.record("fixture control call \(pathAndQuery) failed", sourceLocation: sourceLocation)
            return nil
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            Issue.record("fixture control call \(pathAndQuery): \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.connectionProxyDictionary = [:]
        return URLSession(configuration: configuration)
    }()

    private final class ResultBox: @unchecked Sendable {  // `lock` guards `data`
        private let lock = NSLock()
        private var data: Data?
        func set(_ value: Data?) { lock.withLock { data = value } }
        func get() -> Data? { lock.withLock { data } }
    }
}

/// A second fixture server a test starts (IPv6, TLS): it ends when the test ends (stdin closed) or after
/// the launcher's `--max-seconds`.
final class LaunchedFixtureServer: @unchecked Sendable {  // immutable after init
    let launched: FixtureServer.Launched
    let baseURL: URL

    init(arguments: [String], scheme: String = "http", host: String = "127.0.0.1") throws {
        launched = try FixtureServer.launch(extraArguments: arguments + ["--max-seconds", "300"]).get()
        guard let url = URL(string: "\(scheme)://\(host):\(launched.port)") else { throw FixtureServer.LaunchFailure(message: "bad URL") }
        baseURL = url
    }

    func url(_ pathAndQuery: String) -> URL {
        URL(string: baseURL.absoluteString + pathAndQuery) ?? baseURL
    }

    /// Closes the server's stdin: it exits.
    func stop() {
        try? launched.stdin.fileHandleForWriting.close()
        launched.process.waitUntilExit()
    }
}

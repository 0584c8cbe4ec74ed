import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// Runs `ConformanceCase`s the way a download does: each step is an `HTTPCacheTransaction` (begin, then a
/// real request to the fixture server through URLSession, received / failed / completed), with a virtual
/// clock passed as `now` (the suite's three-second pauses cost no time) and a fresh cache directory per case.
/// Background revalidations (stale-while-revalidate) run right after the step that started them.
final class ConformanceRunner: Sendable {
    /// What the client got for one step.
    struct View {
        var status: Int?
        /// Lower-cased names.
        var headers: [String: String] = [:]
        var body = Data()
        /// Answered from storage without the server's answer to this step (fresh, stale, stale-if-error).
        var fromCache = false
    }

    let server = FixtureServer.shared
    private let client = FixtureHTTPClient()

    func finish() {
        client.invalidate()
    }

    /// nil when the case passes, else why not.
    func run(_ c: ConformanceCase) async -> String? {
        let directory = TemporaryCacheDirectory("conformance-\(c.id)")
        defer { directory.remove() }
        let cache = HTTPImageCache(directory: directory.url)
        let tag = UUID().uuidString
        let token = "body of \(c.id) \(tag.prefix(8))"
        let start = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        var times: [Date] = []
        var clock = start
        for step in c.steps {
            times.append(clock)
            if step.pauseAfter { clock += 3 }
        }
        let script = Self.script(c, times: times, token: token, url: { self.url(c, tag: tag, step: $0) })
        let background = BackgroundRevalidations()
        var views: [View] = []
        for (index, step) in c.steps.enumerated() {
            let now = times[index]
            var request = URLRequest(url: url(c, tag: tag, step: step))
            request.httpMethod = step.method
            for (name, value) in step.requestHeaders { request.addValue(value, forHTTPHeaderField: name) }
            for field in step.requestDates {
                let base = index > 0 ? times[index - 1] : now
                request.setValue(Self.resolve(.date(field.offset, rfc850: field.rfc850), at: base), forHTTPHeaderField: field.name)
            }
            request.setValue(String(index + 1), forHTTPHeaderField: "X-Cache-Step")
            request.setValue(script, forHTTPHeaderField: "X-Cache-Script")
            if step.cacheMode == .noCache { request.cachePolicy = .reloadRevalidatingCacheData }
            let view = await perform(request, cache: cache, now: now, responseAt: now + TimeInterval(step.responsePause),
                                     revalidator: background.revalidator)
            for pending in background.take() {
                var revalidation = pending.request
                revalidation.cachePolicy = .reloadRevalidatingCacheData
                _ = await perform(revalidation, cache: cache, now: now, responseAt: now, revalidator: nil)
                pending.done()
            }
            views.append(view)
        }
        cache.waitForQueuedWrites()
        let log = await requestLog(tag: tag)
        for (index, step) in c.steps.enumerated() {
            let sent = log.first { $0.headers["x-cache-step"] == String(index + 1) }
            let previous = index > 0 ? c.steps[index - 1] : nil
            if let failure = Self.check(step, number: index + 1, view: views[index], sent: sent, previous: previous,
                                        previousTime: index > 0 ? times[index - 1] : start, token: token) {
                return failure
            }
        }
        return nil
    }

    /// The server's log for `tag`, fetched through this runner's own session: the shared control call
    /// blocks its thread, which 300 cases would take from the cooperative pool other tests need.
    private func requestLog(tag: String) async -> [LoggedRequest] {
        let url = server.url("/_log?tag=\(tag)")
        let result = await client.fetch(url)
        return (try? JSONDecoder().decode([LoggedRequest].self, from: result.data)) ?? []
    }

    // MARK: One download

    private func perform(_ request: URLRequest, cache: HTTPImageCache, now: Date, responseAt: Date,
                         revalidator: HTTPCacheRevalidator?) async -> View {
        let transaction = HTTPCacheTransaction(request: request, cache: cache, useURLCache: true, ignoreCachedResponse: false,
                                               handleCookies: false, revalidator: revalidator)
        switch transaction.begin(now: now, acceptsStatus: { _ in true }) {
        case .serveFromCache(let stored):
            return Self.view(stored, fromCache: true)
        case .fail:
            return View()
        case .send(var toSend):
            // Bounded: a 304 that matches nothing is refetched at most twice by the transaction.
            for _ in 0..<4 {
                guard let url = toSend.url else { return View() }
                let result = await client.fetch(url, method: toSend.httpMethod ?? "GET", headers: toSend.allHTTPHeaderFields ?? [:],
                                                followsRedirects: false)
                guard let response = result.response, result.error == nil else {
                    if let error = result.error, let stale = transaction.failed(error, now: responseAt) {
                        return Self.view(stale, fromCache: true)
                    }
                    return View()
                }
                switch transaction.received(response, now: responseAt) {
                case .proceed:
                    transaction.completed(response, data: result.data, now: responseAt)
                    return View(status: response.statusCode, headers: Self.lowercased(response), body: result.data)
                case .serveFromCache(let stored):
                    return Self.view(stored, fromCache: stored.source != .revalidatedHTTPCache)
                case .refetch(let again):
                    toSend = again
                case .notModified:
                    return View(status: 304, headers: Self.lowercased(response))
                }
            }
            return View()
        }
    }

    private static func view(_ stored: CachedHTTPResponse, fromCache: Bool) -> View {
        View(status: stored.statusCode, headers: lowercased(stored.response), body: stored.data, fromCache: fromCache)
    }

    private static func lowercased(_ response: HTTPURLResponse) -> [String: String] {
        var headers: [String: String] = [:]
        for (key, value) in response.allHeaderFields {
            guard let name = key as? String else { continue }
            headers[name.lowercased()] = value as? String ?? "\(value)"
        }
        return headers
    }

    // MARK: The server's script

    /// `/cache/<id>[/<filename>]?tag=…[&test=<query argument>]` (the script travels in `X-Cache-Script`).
    private func url(_ c: ConformanceCase, tag: String, step: ConformanceStep) -> URL {
        var path = "/cache/\(c.id)" + (step.filename.map { "/" + $0 } ?? "")
        path += "?tag=\(tag)"
        if let query = step.queryArgument { path += "&test=\(Self.encoded(query))" }
        return server.url(path)
    }

    private static func encoded(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn:
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")) ?? value
    }

    /// The JSON script: step n answers with its status (304 for a step that expects revalidation), its header
    /// fields with dates resolved at the step's time, `Server-Now`, and its body.
    private static func script(_ c: ConformanceCase, times: [Date], token: String, url: (ConformanceStep) -> URL) -> String {
        var steps: [[String: Any]] = []
        for (index, step) in c.steps.enumerated() {
            let validated = step.expected == .etagValidated || step.expected == .lmValidated
            var headers: [[String]] = step.headers.map { field in
                var value = resolve(field.value, at: times[index])
                if step.magicLocations, ["location", "content-location"].contains(field.name.lowercased()) {
                    var target = step
                    target.filename = value.isEmpty ? step.filename : value
                    value = url(target).absoluteString
                }
                return [field.name, value]
            }
            headers.append(["Server-Now", String(Int(times[index].timeIntervalSince1970))])
            var entry: [String: Any] = ["s": validated ? 304 : (step.status ?? 200), "h": headers, "b": step.body ?? token]
            if step.disconnect { entry["disconnect"] = true }
            steps.append(entry)
        }
        let data = (try? JSONSerialization.data(withJSONObject: steps, options: [.sortedKeys])) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func resolve(_ value: ConformanceValue, at time: Date) -> String {
        switch value {
        case .text(let text): return text
        case .date(let offset, false): return HTTPDate.format(time.addingTimeInterval(TimeInterval(offset)))
        case .date(let offset, true): return rfc850Date(time.addingTimeInterval(TimeInterval(offset)))
        }
    }

    /// The obsolete RFC 850 form (RFC 9110 §5.6.7), e.g. `Sunday, 06-Nov-94 08:49:37 GMT`.
    static func rfc850Date(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT") ?? calendar.timeZone
        let c = calendar.dateComponents([.weekday, .day, .month, .year, .hour, .minute, .second], from: date)
        let days = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int?) -> String { String(format: "%02d", (n ?? 0) % 100) }
        return "\(days[((c.weekday ?? 1) - 1) % 7]), \(two(c.day))-\(months[((c.month ?? 1) - 1) % 12])-\(two(c.year)) "
            + "\(two(c.hour)):\(two(c.minute)):\(two(c.second)) GMT"
    }
}

/// Background revalidations started during a step (stale-while-revalidate), run by the runner afterwards.
final class BackgroundRevalidations: @unchecked Sendable {  // `pending` guarded by `lock`
    struct Pending {
        let request: URLRequest
        let done: @Sendable () -> Void
    }

    private let lock = NSLock()
    private var pending: [Pending] = []

    var revalidator: HTTPCacheRevalidator {
        HTTPCacheRevalidator { [self] request, _, _, done in
            lock.withLock { pending.append(Pending(request: request, done: done)) }
            return true
        }
    }

    func take() -> [Pending] {
        lock.withLock {
            defer { pending = [] }
            return pending
        }
    }
}

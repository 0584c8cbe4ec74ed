import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// The transaction's rules, one per test, with the server's part played by real `HTTPURLResponse`s and the
/// clock passed in (the fixture-server versions of the same rules run in CacheConformanceTests and
/// HTTPCacheDownloaderTests).
@Suite struct HTTPCacheRulesTests {
    typealias F = HTTPCacheFixtures
    let t0 = HTTPCacheFixtures.t0

    func transaction(_ url: String, _ cache: HTTPImageCache, headers: [String: String] = [:],
                     policy: URLRequest.CachePolicy = .useProtocolCachePolicy, method: String = "GET",
                     revalidator: HTTPCacheRevalidator? = nil) -> HTTPCacheTransaction {
        var request = F.request(url, headers: headers)
        request.cachePolicy = policy
        request.httpMethod = method
        return HTTPCacheTransaction(request: request, cache: cache, useURLCache: true, ignoreCachedResponse: false,
                                    handleCookies: false, revalidator: revalidator)
    }

    /// Stores `body` with `headers` (Date at `at`) through a transaction, as a download of `url` would.
    func store(_ url: String, _ cache: HTTPImageCache, status: Int = 200, headers: [String: String], body: Data,
               at: Date = HTTPCacheFixtures.t0) throws {
        let tx = transaction(url, cache)
        _ = tx.begin(now: at, acceptsStatus: { _ in true })
        let response = try F.response(url, status: status, headers: F.headers(date: at, headers))
        #expect(tx.received(response, now: at) == .proceed)
        tx.completed(response, data: body, now: at)
    }

    // MARK: Issue 12 point 10: the 304 refresh never waits for the disk

    /// The refreshed response is returned at once and served from memory; the write happens on the cache's
    /// I/O queue. A byte store that holds writes keeps that one until the test has seen `received` return.
    @Test func notModifiedRefreshReturnsWithoutWaitingForTheDiskWrite() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let (cache, storage) = HTTPImageCache.hooked(directory: dir.url)
        let url = "http://127.0.0.1:9/slow-disk.png"
        try store(url, cache, headers: ["Cache-Control": "no-cache", "ETag": "\"v\""], body: F.body(1, count: 5000))

        let writeStarted = DispatchSemaphore(value: 0)
        let releaseWrite = DispatchSemaphore(value: 0)
        storage.beforeWrite = { _ in
            writeStarted.signal()
            _ = releaseWrite.wait(timeout: .now() + 60)  // bounded: the test releases it below
        }
        defer { releaseWrite.signal() }
        let tx = transaction(url, cache)
        guard case .send(let conditional) = tx.begin(now: t0.addingTimeInterval(10)) else { Issue.record("expected a request"); return }
        #expect(conditional.value(forHTTPHeaderField: "If-None-Match") == "\"v\"")
        let notModified = try F.response(url, status: 304, headers: F.headers(date: t0.addingTimeInterval(10),
                                                                              ["Cache-Control": "max-age=600", "ETag": "\"v\""]))
        let returned = DispatchSemaphore(value: 0)
        let disposition = LockedBox<HTTPCacheTransaction.ResponseDisposition?>(nil)
        DispatchQueue.global().async {
            disposition.value = tx.received(notModified, now: self.t0.addingTimeInterval(10))
            returned.signal()
        }
        // Bounded waits guard against a hang; the order is the assertion: `received` returned while the
        // write it queued was still held.
        #expect(writeStarted.wait(timeout: .now() + 30) == .success)
        #expect(returned.wait(timeout: .now() + 30) == .success)
        guard case .serveFromCache(let refreshed)? = disposition.value else { Issue.record("expected the stored response"); return }
        #expect(refreshed.source == .revalidatedHTTPCache && refreshed.data == F.body(1, count: 5000))
        // Until the write lands, this cache serves the refreshed entry from memory; the file is still the old one.
        guard case .fresh = cache.lookup(for: F.request(url), now: t0.addingTimeInterval(20)) else {
            Issue.record("the refreshed entry should be fresh"); return
        }
        #expect(HTTPImageCache(directory: dir.url, memoryCapacity: 0).cachedResponse(for: F.request(url))?
            .response.value(forHTTPHeaderField: "Cache-Control") == "no-cache")
        releaseWrite.signal()
        cache.waitForQueuedWrites()
        #expect(HTTPImageCache(directory: dir.url, memoryCapacity: 0).cachedResponse(for: F.request(url))?
            .response.value(forHTTPHeaderField: "Cache-Control") == "max-age=600")
    }

    // MARK: 304 handling (RFC 9111 §3.2, §4.3.4)

    @Test func notModifiedNamingAnotherResponseFetchesAnew() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/other-etag.png"
        try store(url, cache, headers: ["Cache-Control": "no-cache", "ETag": "\"old\""], body: F.body(2, count: 100))
        let tx = transaction(url, cache, headers: ["Accept": "image/*"])
        _ = tx.begin(now: t0)
        let disposition = tx.received(try F.response(url, status: 304, headers: ["ETag": "\"new\""]), now: t0)
        guard case .refetch(let again) = disposition else { Issue.record("expected a refetch, got \(disposition)"); return }
        #expect(again.value(forHTTPHeaderField: "If-None-Match") == nil)
        #expect(again.value(forHTTPHeaderField: "Accept") == "image/*")
        // The refetched 200 is stored as usual.
        let fresh = try F.response(url, headers: F.headers(["Cache-Control": "max-age=60", "ETag": "\"new\""]))
        #expect(tx.received(fresh, now: t0) == .proceed)
        tx.completed(fresh, data: F.body(3, count: 100), now: t0)
        #expect(cache.cachedResponse(for: F.request(url))?.data == F.body(3, count: 100))
    }

    /// The stored ETag goes back as received; a bare one (not an entity-tag) in quotes, and so does a caller's own.
    @Test func conditionalRequestsSendTheStoredETagAsReceivedOrQuoted() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        for (i, (etag, sentTag)) in [("W/\"weak\"", "W/\"weak\""), ("\"strong\"", "\"strong\""), ("unquoted", "\"unquoted\"")].enumerated() {
            let url = "http://127.0.0.1:9/etag\(i).png"
            try store(url, cache, headers: ["Cache-Control": "no-cache", "ETag": etag], body: F.body(i, count: 10))
            guard case .send(let sent) = transaction(url, cache).begin(now: t0) else { Issue.record("expected a request"); return }
            #expect(sent.value(forHTTPHeaderField: "If-None-Match") == sentTag)
        }
        guard case .send(let forwarded) = transaction("http://127.0.0.1:9/etag-own.png", cache, headers: ["If-None-Match": "abc"]).begin(now: t0)
        else { Issue.record("expected a request"); return }
        #expect(forwarded.value(forHTTPHeaderField: "If-None-Match") == "\"abc\"")
    }

    // MARK: stale-while-revalidate (RFC 5861 §3)

    @Test func staleWhileRevalidateServesAtOnceAndRevalidatesOneAtATime() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/swr.png"
        try store(url, cache, headers: ["Cache-Control": "max-age=10, stale-while-revalidate=100", "ETag": "\"s\""],
                  body: F.body(4, count: 100))
        let started = LockedBox<[(URLRequest, @Sendable () -> Void)]>([])
        let revalidator = HTTPCacheRevalidator { request, _, _, done in
            started.mutate { $0.append((request, done)) }
            return true
        }
        for _ in 0..<3 {
            guard case .serveFromCache(let stale) = transaction(url, cache, revalidator: revalidator).begin(now: t0.addingTimeInterval(50))
            else { Issue.record("a stale response within the window is served at once"); return }
            #expect(stale.isStale && stale.source == .httpCache && stale.data == F.body(4, count: 100))
            #expect(stale.response.value(forHTTPHeaderField: "Age") == "50")
        }
        #expect(started.value.count == 1)
        #expect(started.value.first?.0.url?.absoluteString == url)
        started.value.first?.1()  // that revalidation ended: the next stale hit starts another
        _ = transaction(url, cache, revalidator: revalidator).begin(now: t0.addingTimeInterval(51))
        #expect(started.value.count == 2)
        // Past the window the response must be revalidated before use.
        guard case .send(let conditional) = transaction(url, cache, revalidator: revalidator).begin(now: t0.addingTimeInterval(111))
        else { Issue.record("past the window: a conditional request"); return }
        #expect(conditional.value(forHTTPHeaderField: "If-None-Match") == "\"s\"")
        // Without a revalidator (an operation made without a downloader) the request is made at once.
        guard case .send = transaction(url, cache).begin(now: t0.addingTimeInterval(60)) else {
            Issue.record("without a background revalidator: a foreground request"); return
        }
    }

    // MARK: stale-if-error (RFC 5861 §4) and a disconnected cache (RFC 9111 §4.2.4)

    @Test func staleIfErrorServesTheStoredResponseFor5xxAndFailures() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/sie.png"
        try store(url, cache, headers: ["Cache-Control": "max-age=10, stale-if-error=60"], body: F.body(5, count: 100))
        for status in [500, 502, 503, 504] {
            let tx = transaction(url, cache)
            _ = tx.begin(now: t0.addingTimeInterval(30))
            guard case .serveFromCache(let stale) = tx.received(try F.response(url, status: status), now: t0.addingTimeInterval(30))
            else { Issue.record("\(status) within stale-if-error"); return }
            #expect(stale.isStale && stale.data == F.body(5, count: 100))
            tx.completed(try F.response(url, status: status), data: Data(), now: t0)  // never stored over the good one
        }
        #expect(cache.cachedResponse(for: F.request(url))?.statusCode == 200)
        let failing = transaction(url, cache)
        _ = failing.begin(now: t0.addingTimeInterval(30))
        #expect(failing.failed(URLError(.cannotConnectToHost), now: t0.addingTimeInterval(30))?.isStale == true)
        #expect(failing.failed(URLError(.cancelled), now: t0.addingTimeInterval(30)) == nil)
        // 404 is no error of the origin; past the window an error is reported (the origin answered).
        let notFound = transaction(url, cache)
        _ = notFound.begin(now: t0.addingTimeInterval(30))
        #expect(notFound.received(try F.response(url, status: 404), now: t0.addingTimeInterval(30)) == .proceed)
        let late = transaction(url, cache)
        _ = late.begin(now: t0.addingTimeInterval(100))
        #expect(late.received(try F.response(url, status: 503), now: t0.addingTimeInterval(100)) == .proceed)
    }

    /// 502, 503 and 504 say the origin cannot answer now: a stored success stands in for them even without
    /// stale-if-error (a 500 does not; a stored error status is never put in place of another error).
    @Test func anUnavailableOriginIsAnsweredFromAStoredSuccess() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        for (status, stands) in [(502, true), (503, true), (504, true), (500, false), (404, false)] {
            let url = "http://127.0.0.1:9/unavailable-\(status).png"
            try store(url, cache, headers: ["Cache-Control": "max-age=1", "ETag": "\"u\""], body: F.body(status, count: 10))
            let tx = transaction(url, cache)
            _ = tx.begin(now: t0.addingTimeInterval(3600))
            let answered = tx.received(try F.response(url, status: status), now: t0.addingTimeInterval(3600))
            guard stands else {
                #expect(answered == .proceed, "\(status)")
                continue
            }
            guard case .serveFromCache(let stale) = answered else { Issue.record("\(status) not answered from storage"); continue }
            #expect(stale.isStale && stale.data == F.body(status, count: 10))
        }
        let storedError = "http://127.0.0.1:9/unavailable-stored-error.png"
        try store(storedError, cache, status: 503, headers: ["Cache-Control": "max-age=1"], body: F.body(1, count: 10))
        let tx = transaction(storedError, cache)
        _ = tx.begin(now: t0.addingTimeInterval(10))
        #expect(tx.received(try F.response(storedError, status: 503), now: t0.addingTimeInterval(10)) == .proceed)
    }

    @Test func mustRevalidateAndNoCacheForbidStaleOnError() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        for (i, cc) in ["max-age=1, must-revalidate, stale-if-error=600", "no-cache, stale-if-error=600", "max-age=1"].enumerated() {
            let url = "http://127.0.0.1:9/strict\(i).png"
            try store(url, cache, headers: ["Cache-Control": cc], body: F.body(i, count: 10))
            let tx = transaction(url, cache)
            _ = tx.begin(now: t0.addingTimeInterval(10))
            // A 503 says the origin is unavailable: like a dropped connection (below), for the last one only.
            let answered = tx.received(try F.response(url, status: 503), now: t0.addingTimeInterval(10))
            #expect((answered == .proceed) == (i != 2), "\(cc)")
            // A disconnected cache may serve stale, unless the response forbids it.
            let failing = transaction(url, cache)
            _ = failing.begin(now: t0.addingTimeInterval(10))
            let served = failing.failed(URLError(.networkConnectionLost), now: t0.addingTimeInterval(10)) != nil
            #expect(served == (i == 2), "\(cc)")
        }
        // A TLS failure is no disconnection (corelibs reports it as -1 "SSL certificate problem").
        let tls = URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "SSL certificate problem: self-signed certificate"])
        #expect(!HTTPFreshness.isDisconnection(tls))
        #expect(HTTPFreshness.isDisconnection(URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "transfer closed with 10 bytes remaining"])))
        #expect(!HTTPFreshness.isDisconnection(URLError(.serverCertificateUntrusted)))
    }

    // MARK: Statuses (RFC 9110 §15.1)

    @Test func aStoredNotFoundAnswersWithoutARequestWhileFresh() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/gone.png"
        let tx = transaction(url, cache)
        _ = tx.begin(now: t0)  // a download that accepts only 2xx
        #expect(tx.received(try F.response(url, status: 410, headers: F.headers(["Cache-Control": "max-age=60"])), now: t0) == .proceed)
        cache.waitForQueuedWrites()
        guard case .serveFromCache(let gone) = transaction(url, cache).begin(now: t0.addingTimeInterval(30)) else {
            Issue.record("a fresh stored 410 answers at once"); return
        }
        #expect(gone.statusCode == 410 && !gone.hasBody)
        // A download that wants the body of a 410 asks the server (the body was not stored).
        guard case .send = transaction(url, cache).begin(now: t0.addingTimeInterval(30), acceptsStatus: { _ in true }) else {
            Issue.record("a download accepting 410 needs its body"); return
        }
        guard case .send = transaction(url, cache).begin(now: t0.addingTimeInterval(61)) else {
            Issue.record("a stale 410 is asked again"); return
        }
    }

    @Test func heuristicFreshnessOnlyForHeuristicallyCacheableStatuses() throws {
        let lastModified = HTTPHeaderFields([("Last-Modified", HTTPDate.format(t0.addingTimeInterval(-10_000))), ("Date", HTTPDate.format(t0))])
        for status in [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501] {
            #expect(HTTPFreshness.freshnessLifetime(lastModified, statusCode: status, responseDate: t0) == 1000, "\(status)")
        }
        for status in [201, 202, 302, 307, 403, 500, 502, 503, 504, 599] {
            #expect(HTTPFreshness.freshnessLifetime(lastModified, statusCode: status, responseDate: t0) == 0, "\(status)")
        }
        // Never beside explicit freshness, and capped at a day.
        var explicit = lastModified
        explicit.set("Cache-Control", "max-age=5")
        #expect(HTTPFreshness.freshnessLifetime(explicit, statusCode: 200, responseDate: t0) == 5)
        let old = HTTPHeaderFields([("Last-Modified", HTTPDate.format(t0.addingTimeInterval(-86_400 * 365)))])
        #expect(HTTPFreshness.freshnessLifetime(old, statusCode: 200, responseDate: t0) == HTTPFreshness.heuristicCap)
    }

    // MARK: Request directives (RFC 9111 §5.2.1)

    @Test func requestDirectivesFromTheRequestsCacheControl() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/directives.png"
        try store(url, cache, headers: ["Cache-Control": "max-age=100", "ETag": "\"d\""], body: F.body(6, count: 10))
        func start(_ cc: String, at seconds: TimeInterval) -> HTTPCacheTransaction.Start {
            transaction(url, cache, headers: ["Cache-Control": cc]).begin(now: t0.addingTimeInterval(seconds))
        }
        guard case .serveFromCache(let accepted) = start("max-stale=60", at: 150), accepted.isStale else {
            Issue.record("max-stale accepts 50 s of staleness"); return
        }
        guard case .send = start("max-stale=10", at: 150) else { Issue.record("max-stale=10 does not"); return }
        guard case .serveFromCache = start("max-stale", at: 10_000) else { Issue.record("max-stale accepts any"); return }
        guard case .send = start("min-fresh=60", at: 50) else { Issue.record("min-fresh=60 with 50 s left"); return }
        guard case .send(let noCache) = start("no-cache", at: 1), noCache.value(forHTTPHeaderField: "If-None-Match") == "\"d\"" else {
            Issue.record("no-cache revalidates"); return
        }
        guard case .send(let noStore) = start("no-store", at: 1), noStore.value(forHTTPHeaderField: "If-None-Match") == nil else {
            Issue.record("no-store neither reads nor writes"); return
        }
        guard case .serveFromCache = start("only-if-cached", at: 1) else { Issue.record("only-if-cached, fresh"); return }
        guard case .serveFromCache(let timeout) = start("only-if-cached", at: 500), timeout.statusCode == 504 else {
            Issue.record("only-if-cached with nothing usable: 504"); return
        }
    }

    // MARK: Vary, invalidation (Range and partial content: HTTPCacheRangeRulesTests)

    @Test func severalVariantsOfOneURL() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/negotiated.img"
        for (i, accept) in ["image/avif,image/*", "image/webp,image/*", "image/png"].enumerated() {
            let tx = transaction(url, cache, headers: ["Accept": accept])
            _ = tx.begin(now: t0)
            let response = try F.response(url, headers: F.headers(["Cache-Control": "max-age=100", "Vary": "Accept"]))
            _ = tx.received(response, now: t0)
            tx.completed(response, data: F.body(10 + i, count: 50), now: t0)
        }
        for (i, accept) in ["image/avif, image/*", "Image/WebP,image/*", "image/png"].enumerated() {
            #expect(HTTPImageCache(directory: dir.url).cachedResponse(for: F.request(url, headers: ["Accept": accept]))?.data
                    == F.body(10 + i, count: 50), "\(accept)")
        }
        #expect(cache.cachedResponse(for: F.request(url, headers: ["Accept": "*/*"])) == nil)
        // A response without Vary replaces them all.
        try store(url, cache, headers: ["Cache-Control": "max-age=100"], body: F.body(20, count: 5))
        #expect(cache.cachedResponse(for: F.request(url, headers: ["Accept": "image/png"]))?.data == F.body(20, count: 5))
    }

    @Test func unsafeMethodsInvalidateTheURL() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/edited.png"
        for (method, status, invalidates) in [("POST", 500, false), ("PUT", 201, true), ("DELETE", 204, true)] {
            try store(url, cache, headers: ["Cache-Control": "max-age=100"], body: F.body(8, count: 10))
            let tx = transaction(url, cache, method: method)
            guard case .send = tx.begin(now: t0) else { Issue.record("\(method) is never answered from the cache"); return }
            _ = tx.received(try F.response(url, status: status), now: t0)
            #expect((cache.cachedResponse(for: F.request(url)) == nil) == invalidates, "\(method) \(status)")
        }
    }
}

/// A value shared between a test and the closures it hands out.
final class LockedBox<Value>: @unchecked Sendable {  // `stored` guarded by `lock`
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) {
        stored = value
    }

    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }

    func mutate(_ body: (inout Value) -> Void) {
        lock.withLock { body(&stored) }
    }
}

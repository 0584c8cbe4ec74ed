import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// The caller's own conditional requests answered from storage (RFC 9111 §4.3.2), responses to POST stored for
/// later GETs (RFC 9110 §9.3.3), and a 200 to HEAD freshening the stored GET response (RFC 9111 §4.3.5),
/// through the transaction with the clock passed in.
@Suite struct HTTPCacheConditionalRulesTests {
    typealias F = HTTPCacheFixtures
    let t0 = HTTPCacheFixtures.t0
    let body = HTTPCacheFixtures.body(9, count: 64)

    func begin(_ url: String, _ cache: HTTPImageCache, _ headers: [String: String], at offset: TimeInterval = 1,
               method: String = "GET") -> HTTPCacheTransaction.Start {
        F.transaction(url, cache, headers: headers, method: method).begin(now: t0.addingTimeInterval(offset))
    }

    @Test func theCallersOwnValidatorsAreAnsweredWithA304FromAFreshResponse() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/validators.png"
        let lastModified = HTTPDate.format(t0.addingTimeInterval(-3000))
        try F.exchange(url, cache, headers: ["Cache-Control": "max-age=100", "ETag": "\"v\"", "Last-Modified": lastModified], body: body)
        for headers in [["If-None-Match": "\"v\""], ["If-None-Match": "\"x\", W/\"v\""], ["If-None-Match": "*"],
                        ["If-Modified-Since": lastModified], ["If-Modified-Since": HTTPDate.format(t0)]] {
            guard case .serveFromCache(let answer) = begin(url, cache, headers) else { Issue.record("\(headers): no request"); continue }
            #expect(answer.statusCode == 304 && answer.data.isEmpty, "\(headers)")
            #expect(answer.response.value(forHTTPHeaderField: "ETag") == "\"v\"")
            #expect(answer.response.value(forHTTPHeaderField: "Cache-Control") == "max-age=100")
            #expect(answer.response.value(forHTTPHeaderField: "Age") == "1")
            // No content, so no content metadata (RFC 9110 §15.4.5).
            #expect(answer.response.value(forHTTPHeaderField: "Content-Type") == nil)
            #expect(answer.response.value(forHTTPHeaderField: "Content-Length") == nil)
        }
        // Validators naming something else: the stored response, whole.
        for headers in [["If-None-Match": "\"x\""], ["If-Modified-Since": HTTPDate.format(t0.addingTimeInterval(-4000))],
                        ["If-None-Match": "\"x\"", "If-Modified-Since": HTTPDate.format(t0)]] {
            guard case .serveFromCache(let answer) = begin(url, cache, headers) else { Issue.record("\(headers): no request"); continue }
            #expect(answer.statusCode == 200 && answer.data == body, "\(headers)")
        }
    }

    /// Without Last-Modified, If-Modified-Since is judged against the stored Date (RFC 9111 §4.3.2).
    @Test func withoutLastModifiedTheStoredDateIsCompared() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/no-last-modified.png"
        try F.exchange(url, cache, headers: ["Cache-Control": "max-age=100"], body: body)
        guard case .serveFromCache(let newer) = begin(url, cache, ["If-Modified-Since": HTTPDate.format(t0.addingTimeInterval(-3000))]),
              case .serveFromCache(let same) = begin(url, cache, ["If-Modified-Since": HTTPDate.format(t0)]) else {
            Issue.record("a fresh response answers without a request"); return
        }
        #expect(newer.statusCode == 200 && same.statusCode == 304)
    }

    /// A stale response is revalidated with the caller's validator; the origin's 304 is the caller's.
    @Test func aStaleResponseIsRevalidatedWithTheCallersValidator() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/stale-validators.png"
        let lastModified = HTTPDate.format(t0.addingTimeInterval(-3000))
        try F.exchange(url, cache, headers: ["Cache-Control": "max-age=2", "Last-Modified": lastModified], body: body)
        let tx = F.transaction(url, cache, headers: ["If-Modified-Since": lastModified])
        guard case .send(let request) = tx.begin(now: t0.addingTimeInterval(3)) else { Issue.record("a stale response is revalidated"); return }
        #expect(request.value(forHTTPHeaderField: "If-Modified-Since") == lastModified)
        let notModified = try F.response(url, status: 304, headers: F.headers(date: t0.addingTimeInterval(3)))
        #expect(tx.received(notModified, now: t0.addingTimeInterval(3)) == .notModified)
    }

    /// If-Match and If-Unmodified-Since are the origin's to evaluate (RFC 9111 §4.3.2): even a fresh stored
    /// response does not answer them.
    @Test func originPreconditionsGoToTheOrigin() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/origin-preconditions.png"
        try F.exchange(url, cache, headers: ["Cache-Control": "max-age=100", "ETag": "\"v\""], body: body)
        for headers in [["If-Match": "\"v\""], ["If-Unmodified-Since": HTTPDate.format(t0)]] {
            guard case .send(let request) = begin(url, cache, headers) else { Issue.record("\(headers) goes to the origin"); continue }
            #expect(request.value(forHTTPHeaderField: "If-None-Match") == nil)
        }
        #expect(!begin(url, cache, [:]).isSend)
    }

    /// Preconditions apply to 2xx answers only (RFC 9110 §13.2.1): a stored 404 is a 404 whatever they say.
    @Test func storedErrorStatusesIgnoreTheCallersValidators() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/missing.png"
        try F.exchange(url, cache, status: 404, headers: ["Cache-Control": "max-age=100", "ETag": "\"gone\""], body: Data("no".utf8))
        guard case .serveFromCache(let answer) = begin(url, cache, ["If-None-Match": "*"]) else { Issue.record("stored 404"); return }
        #expect(answer.statusCode == 404)
    }

    @Test func aPOSTResponseNamingItsURLIsStoredForLaterGETs() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/post.png"
        try F.exchange(url, cache, method: "POST", headers: ["Cache-Control": "max-age=100", "Content-Location": url], body: body)
        cache.waitForQueuedWrites()
        guard case .serveFromCache(let answer) = begin(url, cache, [:]) else { Issue.record("the POST's response answers a GET"); return }
        #expect(answer.statusCode == 200 && answer.data == body)
        // A POST is never answered from storage.
        #expect(begin(url, cache, [:], method: "POST").isSend)
    }

    @Test(arguments: [
        ["Cache-Control": "max-age=100"],
        ["Cache-Control": "max-age=100", "Content-Location": "/elsewhere.png"],
        ["Last-Modified": HTTPDate.format(HTTPCacheFixtures.t0.addingTimeInterval(-86_400)), "Content-Location": "/post-only.png"],
    ])
    func otherPOSTResponsesAreNotStored(_ headers: [String: String]) throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/post-only.png"
        try F.exchange(url, cache, method: "POST", headers: headers, body: body)
        cache.waitForQueuedWrites()
        #expect(cache.cachedResponse(for: F.request(url)) == nil)
    }
}

extension HTTPCacheConditionalRulesTests {
    /// A stale stored response (max-age=2 at t0, ETag "h", Template-A: 1), then a HEAD at t0+3 answered 200 with
    /// `head` fields; returns what a GET at t0+4 begins with.
    func getAfterHEAD(_ head: [String: String], _ url: String) throws -> HTTPCacheTransaction.Start {
        let dir = TemporaryCacheDirectory(url.filter(\.isLetter)); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        try F.exchange(url, cache, headers: ["Cache-Control": "max-age=2", "ETag": "\"h\"", "Template-A": "1"], body: body)
        try F.exchange(url, cache, method: "HEAD", headers: head, body: Data(), at: t0.addingTimeInterval(3))
        cache.waitForQueuedWrites()
        return F.transaction(url, cache).begin(now: t0.addingTimeInterval(4))
    }

    @Test func aHEADWithTheSameValidatorFreshensTheStoredResponse() throws {
        let url = "http://127.0.0.1:9/head-same.png"
        guard case .serveFromCache(let fresh) = try getAfterHEAD(["ETag": "\"h\"", "Cache-Control": "max-age=1000", "Template-A": "2",
                                                                   "Content-Length": String(body.count)], url) else {
            Issue.record("the HEAD's max-age makes the stored response fresh"); return
        }
        #expect(fresh.statusCode == 200 && fresh.data == body && !fresh.isStale)
        #expect(fresh.response.value(forHTTPHeaderField: "Template-A") == "2")
        #expect(fresh.response.value(forHTTPHeaderField: "Content-Length") == String(body.count))
    }

    @Test func aHEADWithAnotherValidatorRemovesTheStoredResponse() throws {
        guard case .send(let request) = try getAfterHEAD(["ETag": "\"other\"", "Cache-Control": "max-age=1000"],
                                                         "http://127.0.0.1:9/head-changed.png") else {
            Issue.record("a changed representation is fetched"); return
        }
        #expect(request.value(forHTTPHeaderField: "If-None-Match") == nil)
    }

    /// Its Content-Length alone proves nothing (the stored body is kept decoded): the stored response stays as it was.
    @Test func aHEADWithAnotherContentLengthLeavesTheStoredResponse() throws {
        guard case .send(let request) = try getAfterHEAD(["ETag": "\"h\"", "Cache-Control": "max-age=1000", "Content-Length": "7"],
                                                         "http://127.0.0.1:9/head-length.png") else {
            Issue.record("still stale: revalidated"); return
        }
        #expect(request.value(forHTTPHeaderField: "If-None-Match") == "\"h\"")
    }
}

extension HTTPCacheTransaction.Start {
    var isSend: Bool {
        if case .send = self { return true }
        return false
    }
}

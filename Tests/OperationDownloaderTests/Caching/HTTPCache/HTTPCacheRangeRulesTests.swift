import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// Range requests and partial content (RFC 9110 §14, RFC 9111 §3.3–§3.4) through the transaction, with the
/// server played by real `HTTPURLResponse`s and the clock passed in: parts served from a stored complete
/// response, 206s stored as the part that arrived, parts of one representation combined.
@Suite struct HTTPCacheRangeRulesTests {
    typealias F = HTTPCacheFixtures
    let t0 = HTTPCacheFixtures.t0
    let body = HTTPCacheFixtures.body(7, count: 100)

    func served(_ url: String, _ cache: HTTPImageCache, _ headers: [String: String], at offset: TimeInterval = 1) -> CachedHTTPResponse? {
        guard case .serveFromCache(let answer) = F.transaction(url, cache, headers: headers).begin(now: t0.addingTimeInterval(offset))
        else { return nil }
        return answer
    }

    func sent(_ url: String, _ cache: HTTPImageCache, _ headers: [String: String], at offset: TimeInterval = 1) -> URLRequest? {
        guard case .send(let request) = F.transaction(url, cache, headers: headers).begin(now: t0.addingTimeInterval(offset))
        else { return nil }
        return request
    }

    @Test func aRangeIsAnsweredFromAStoredCompleteResponse() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/complete.png"
        try F.exchange(url, cache, headers: ["Cache-Control": "max-age=100", "ETag": "\"r\"", "A": "1"], body: body)
        for (range, bytes) in [("bytes=10-19", 10...19), ("bytes=-5", 95...99), ("bytes=95-", 95...99), ("bytes=0-500", 0...99)] {
            let part = try #require(served(url, cache, ["Range": range]), "\(range)")
            #expect(part.statusCode == 206)
            #expect(part.data == body.subdata(in: bytes.lowerBound..<(bytes.upperBound + 1)))
            #expect(part.response.value(forHTTPHeaderField: "Content-Range") == "bytes \(bytes.lowerBound)-\(bytes.upperBound)/100")
            #expect(part.response.value(forHTTPHeaderField: "Content-Length") == String(bytes.count))
            #expect(part.response.value(forHTTPHeaderField: "A") == "1" && part.response.value(forHTTPHeaderField: "Age") == "1")
            #expect(part.source == .httpCache && !part.isStale)
        }
        // The stored response is untouched: a request without Range gets all of it.
        #expect(served(url, cache, [:])?.data == body)
    }

    /// Several ranges, another unit, an unsatisfiable range: the origin decides (a multipart answer, the whole,
    /// a 416), and its 416 leaves the stored response alone.
    @Test func rangesStorageDoesNotAnswerGoToTheOrigin() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/origin-decides.png"
        try F.exchange(url, cache, headers: ["Cache-Control": "max-age=100", "ETag": "\"r\""], body: body)
        for range in ["bytes=0-1,5-6", "items=0-1", "bytes=100-", "bytes=-0"] {
            let request = try #require(sent(url, cache, ["Range": range]), "\(range)")
            #expect(request.value(forHTTPHeaderField: "Range") == range)
            #expect(request.value(forHTTPHeaderField: "If-None-Match") == nil)
        }
        try F.exchange(url, cache, request: ["Range": "bytes=100-"], status: 416, headers: ["Content-Range": "bytes */100"], body: Data())
        #expect(served(url, cache, [:])?.data == body)
    }

    @Test func ifRangeChoosesBetweenThePartAndTheWhole() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/if-range.png"
        try F.exchange(url, cache, headers: ["Cache-Control": "max-age=100", "ETag": "\"r\""], body: body)
        #expect(served(url, cache, ["Range": "bytes=0-9", "If-Range": "\"r\""])?.statusCode == 206)
        let whole = try #require(served(url, cache, ["Range": "bytes=0-9", "If-Range": "\"changed\""]))
        #expect(whole.statusCode == 200 && whole.data == body)
        #expect(whole.response.value(forHTTPHeaderField: "Content-Range") == nil)
    }

    /// A stale complete response is revalidated with the Range kept; the 304 refreshes it and the part is served.
    @Test func aStaleCompleteResponseIsRevalidatedAndThePartServed() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/stale-range.png"
        try F.exchange(url, cache, headers: ["Cache-Control": "max-age=10", "ETag": "\"r\""], body: body)
        let tx = F.transaction(url, cache, headers: ["Range": "bytes=0-9"])
        guard case .send(let conditional) = tx.begin(now: t0.addingTimeInterval(50)) else { Issue.record("expected a request"); return }
        #expect(conditional.value(forHTTPHeaderField: "Range") == "bytes=0-9")
        #expect(conditional.value(forHTTPHeaderField: "If-None-Match") == "\"r\"")
        let notModified = try F.response(url, status: 304, headers: F.headers(date: t0.addingTimeInterval(50),
                                                                              ["Cache-Control": "max-age=600", "ETag": "\"r\""]))
        guard case .serveFromCache(let part) = tx.received(notModified, now: t0.addingTimeInterval(50)) else {
            Issue.record("the 304 answers with the part"); return
        }
        #expect(part.statusCode == 206 && part.data == body.prefix(10) && part.source == .revalidatedHTTPCache)
        // The stored response is the refreshed complete one.
        let whole = try #require(served(url, cache, [:], at: 60))
        #expect(whole.statusCode == 200 && whole.data == body)
    }

    /// Within stale-while-revalidate the part is served at once; the background revalidation is of the stored
    /// response itself: no Range, no caller validators.
    @Test func staleWhileRevalidateServesThePartAndRevalidatesTheWhole() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/swr-range.png"
        try F.exchange(url, cache, headers: ["Cache-Control": "max-age=10, stale-while-revalidate=100", "ETag": "\"s\""], body: body)
        let started = LockedBox<[URLRequest]>([])
        let revalidator = HTTPCacheRevalidator { request, _, _, _ in
            started.mutate { $0.append(request) }
            return true
        }
        var request = F.request(url, headers: ["Range": "bytes=0-9", "If-Range": "\"s\"", "Accept": "image/*"])
        request.cachePolicy = .useProtocolCachePolicy
        let tx = HTTPCacheTransaction(request: request, cache: cache, useURLCache: true, ignoreCachedResponse: false,
                                      handleCookies: false, revalidator: revalidator)
        guard case .serveFromCache(let part) = tx.begin(now: t0.addingTimeInterval(50)) else { Issue.record("served at once"); return }
        #expect(part.statusCode == 206 && part.isStale && part.data == body.prefix(10))
        let revalidation = try #require(started.value.first)
        #expect(revalidation.value(forHTTPHeaderField: "Range") == nil && revalidation.value(forHTTPHeaderField: "If-Range") == nil)
        #expect(revalidation.value(forHTTPHeaderField: "Accept") == "image/*")
    }

    @Test func aStoredPartAnswersOnlyRangesWithinIt() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/part.png"
        try F.exchange(url, cache, request: ["Range": "bytes=10-19"], status: 206,
                       headers: ["Cache-Control": "max-age=100", "ETag": "\"p\"", "Content-Range": "bytes 10-19/100"],
                       body: body.subdata(in: 10..<20))
        let part = try #require(served(url, cache, ["Range": "bytes=12-15"]))
        #expect(part.statusCode == 206 && part.data == body.subdata(in: 12..<16))
        #expect(part.response.value(forHTTPHeaderField: "Content-Range") == "bytes 12-15/100")
        #expect(served(url, cache, ["Range": "bytes=10-19"])?.data == body.subdata(in: 10..<20))
        // Beyond the part, or the whole: the origin, without the part's validators (a 304 could not complete it).
        for headers in [["Range": "bytes=5-15"], ["Range": "bytes=-5"], [:]] {
            let request = try #require(sent(url, cache, headers), "\(headers)")
            #expect(request.value(forHTTPHeaderField: "If-None-Match") == nil)
        }
        #expect(cache.cachedResponse(for: F.request(url))?.statusCode == 206)
        // The whole from the origin replaces the part.
        try F.exchange(url, cache, headers: ["Cache-Control": "max-age=100", "ETag": "\"p\""], body: body)
        #expect(served(url, cache, [:])?.data == body)
    }

    /// A body shorter than its Content-Range is the part that arrived (as from a transfer cut short); a
    /// longer one is malformed and not stored.
    @Test func aPartIsStoredAsTheBytesThatArrived() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let short = "http://127.0.0.1:9/short-part.png", long = "http://127.0.0.1:9/long-part.png"
        let headers = ["Cache-Control": "max-age=100", "Content-Range": "bytes 4-9/10"]
        try F.exchange(short, cache, request: ["Range": "bytes=4-"], status: 206, headers: headers, body: Data("01234".utf8))
        #expect(cache.cachedResponse(for: F.request(short))?.response.value(forHTTPHeaderField: "Content-Range") == "bytes 4-8/10")
        #expect(served(short, cache, ["Range": "bytes=6-8"])?.data == Data("234".utf8))
        #expect(sent(short, cache, ["Range": "bytes=6-"]) != nil)
        // The very Range it answered is answered again as the origin did: the part as it arrived.
        let again = try #require(served(short, cache, ["Range": "bytes=4-"]))
        #expect(again.statusCode == 206 && again.data == Data("01234".utf8))
        #expect(again.response.value(forHTTPHeaderField: "Content-Range") == "bytes 4-8/10")
        #expect(sent(short, cache, ["Range": "bytes=4-9"]) != nil)
        try F.exchange(long, cache, request: ["Range": "bytes=4-"], status: 206, headers: headers, body: Data("0123456".utf8))
        #expect(cache.cachedResponse(for: F.request(long)) == nil)
    }

    @Test func partsOfOneRepresentationAreCombined() throws {
        let dir = TemporaryCacheDirectory(); defer { dir.remove() }
        let cache = HTTPImageCache(directory: dir.url)
        let url = "http://127.0.0.1:9/combined.png"
        // Stored as a download of the part stores it (the cache would answer some of these Range requests itself).
        func part(_ range: ClosedRange<Int>, etag: String, extra: [String: String] = [:]) throws {
            let (first, last) = (range.lowerBound, range.upperBound)
            let fields = ["Cache-Control": "max-age=100", "ETag": etag, "Content-Range": "bytes \(first)-\(last)/100"]
            let response = try F.response(url, status: 206, headers: F.headers(fields.merging(extra) { $1 }))
            cache.store(response, data: body.subdata(in: first..<(last + 1)), for: F.request(url, headers: ["Range": "bytes=\(first)-\(last)"]),
                        requestDate: t0, responseDate: t0)
        }
        try part(0...39, etag: "\"c\"", extra: ["A": "1"])
        try part(30...69, etag: "\"c\"", extra: ["A": "2"])
        #expect(cache.cachedResponse(for: F.request(url))?.response.value(forHTTPHeaderField: "Content-Range") == "bytes 0-69/100")
        // Combined, the part is no longer what the last Range got from the origin: that Range gets its own bytes.
        #expect(served(url, cache, ["Range": "bytes=30-69"])?.data == body.subdata(in: 30..<70))
        #expect(served(url, cache, ["Range": "bytes=20-49"])?.data == body.subdata(in: 20..<50))
        try part(70...99, etag: "\"c\"")
        // Every byte held: the complete response, with the newest part's fields.
        let whole = try #require(served(url, cache, [:]))
        #expect(whole.statusCode == 200 && whole.data == body)
        #expect(whole.response.value(forHTTPHeaderField: "Content-Range") == nil)
        #expect(whole.response.value(forHTTPHeaderField: "Content-Length") == "100")
        #expect(whole.response.value(forHTTPHeaderField: "A") == "2")
        // A part of that representation never replaces it; a part of another one (another ETag) does.
        try part(0...9, etag: "\"c\"")
        #expect(served(url, cache, [:])?.data == body)
        try part(0...9, etag: "\"d\"")
        #expect(cache.cachedResponse(for: F.request(url))?.statusCode == 206)
        // Parts without a strong validator, or that neither touch nor overlap, are not combined: the newer stays.
        try part(50...59, etag: "W/\"d\"")
        try part(60...69, etag: "W/\"d\"")
        #expect(cache.cachedResponse(for: F.request(url))?.response.value(forHTTPHeaderField: "Content-Range") == "bytes 60-69/100")
        try part(0...9, etag: "\"e\"")
        try part(20...29, etag: "\"e\"")
        #expect(cache.cachedResponse(for: F.request(url))?.response.value(forHTTPHeaderField: "Content-Range") == "bytes 20-29/100")
    }
}

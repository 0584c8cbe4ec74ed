import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// One cookie storage for the suite (not `.shared`, which the user's programs own); cleared around each test.
@Suite(.serialized) struct CookieHandlingTests {
    typealias F = HTTPCacheFixtures
    let storage = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "OperationDownloaderTests.cookies")

    init() {
        clear()
    }

    func clear() {
        for cookie in storage.cookies ?? [] { storage.deleteCookie(cookie) }
    }

    @Test func setCookieFromOneResponseIsSentOnTheNextRequestToThatHost() throws {
        defer { clear() }
        let first = F.request("http://127.0.0.1:8080/img/1.png")
        let response = try F.response("http://127.0.0.1:8080/img/1.png", headers: ["Set-Cookie": "session=abc123; Path=/"])
        #expect(CookieHandling.cookieHeader(for: try #require(first.url), in: storage) == nil)
        CookieHandling.storeCookies(from: response, for: first, in: storage)

        let next = CookieHandling.addingCookies(to: F.request("http://127.0.0.1:8080/img/2.png"), from: storage)
        #expect(next.value(forHTTPHeaderField: "Cookie") == "session=abc123")
        // Another host gets nothing.
        let elsewhere = CookieHandling.addingCookies(to: F.request("http://localhost:8080/img/2.png"), from: storage)
        #expect(elsewhere.value(forHTTPHeaderField: "Cookie") == nil)
    }

    @Test func foldedSetCookieFieldsAreAllStored() throws {
        defer { clear() }
        let url = "http://127.0.0.1:8080/a.png"
        // URLSession folds several Set-Cookie fields into one, separated by commas (dates contain commas too).
        let response = try F.response(url, headers: [
            "Set-Cookie": "a=1; Path=/, b=2; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Path=/, c=3; Path=/",
        ])
        CookieHandling.storeCookies(from: response, for: F.request(url), in: storage)
        let header = try #require(CookieHandling.cookieHeader(for: F.url(url), in: storage))
        let pairs = Set(header.components(separatedBy: "; "))
        #expect(pairs == ["a=1", "b=2", "c=3"])
    }

    @Test func pathSecureAndExpiryAreHonoured() throws {
        defer { clear() }
        let url = "http://shop.example.com/images/a.png"
        let response = try F.response(url, headers: [
            "Set-Cookie": "images=1; Path=/images, other=2; Path=/other, secure=3; Path=/; Secure, all=4; Path=/",
        ])
        CookieHandling.storeCookies(from: response, for: F.request(url), in: storage)

        let underImages = try #require(CookieHandling.cookieHeader(for: F.url("http://shop.example.com/images/b.png"), in: storage))
        // Longest path first, then the rest; Secure only over https; another path never.
        #expect(underImages == "images=1; all=4")
        let httpsHeader = CookieHandling.cookieHeader(for: F.url("https://shop.example.com/images/b.png"), in: storage)
        #expect(httpsHeader?.components(separatedBy: "; ").first == "images=1")
        #expect(Set(httpsHeader?.components(separatedBy: "; ") ?? []) == ["images=1", "secure=3", "all=4"])
        #expect(CookieHandling.cookieHeader(for: F.url("http://shop.example.com/imagesX/b.png"), in: storage) == "all=4")
        // An expired cookie is not sent even if the storage still holds it.
        let future = Date(timeIntervalSinceNow: 10 * 365 * 86_400)
        #expect(CookieHandling.cookieHeader(for: F.url("http://shop.example.com/"), in: storage, now: future) == "all=4")
        let expiring = try F.response(url, headers: ["Set-Cookie": "soon=5; Path=/; Expires=\(HTTPDate.format(Date(timeIntervalSinceNow: 3600)))"])
        CookieHandling.storeCookies(from: expiring, for: F.request(url), in: storage)
        #expect(CookieHandling.cookieHeader(for: F.url("http://shop.example.com/"), in: storage)?.contains("soon=5") == true)
        #expect(CookieHandling.cookieHeader(for: F.url("http://shop.example.com/"), in: storage,
                                            now: Date(timeIntervalSinceNow: 7200))?.contains("soon=5") == false)
    }

    @Test func domainCookiesReachSubdomains() throws {
        defer { clear() }
        let url = "http://img.example.org/a.png"
        CookieHandling.storeCookies(from: try F.response(url, headers: ["Set-Cookie": "d=1; Domain=example.org; Path=/"]),
                                    for: F.request(url), in: storage)
        #expect(CookieHandling.cookieHeader(for: F.url("http://cdn.example.org/x.png"), in: storage) == "d=1")
        #expect(CookieHandling.cookieHeader(for: F.url("http://example.org/x.png"), in: storage) == "d=1")
        #expect(CookieHandling.cookieHeader(for: F.url("http://notexample.org/x.png"), in: storage) == nil)
    }

    @Test func existingCookieHeaderIsKeptAndExtended() throws {
        defer { clear() }
        let url = "http://127.0.0.1:8080/c.png"
        CookieHandling.storeCookies(from: try F.response(url, headers: ["Set-Cookie": "stored=1; Path=/"]), for: F.request(url),
                                    in: storage)
        let request = CookieHandling.addingCookies(to: F.request(url, headers: ["Cookie": "manual=0"]), from: storage)
        #expect(request.value(forHTTPHeaderField: "Cookie") == "manual=0; stored=1")
        // Nothing stored for the URL: the request is unchanged.
        let untouched = CookieHandling.addingCookies(to: F.request("http://127.0.0.2/c.png", headers: ["Cookie": "manual=0"]),
                                                     from: storage)
        #expect(untouched.value(forHTTPHeaderField: "Cookie") == "manual=0")
    }

    @Test func responsesWithoutSetCookieStoreNothing() throws {
        defer { clear() }
        let url = "http://127.0.0.1:8080/none.png"
        CookieHandling.storeCookies(from: try F.response(url, headers: ["Content-Type": "image/png"]), for: F.request(url), in: storage)
        #expect((storage.cookies ?? []).isEmpty)
    }

    @Test func acceptPolicyNeverStoresNothing() throws {
        defer {
            clear()
            storage.cookieAcceptPolicy = .always
        }
        storage.cookieAcceptPolicy = .never
        let url = "http://127.0.0.1:8080/policy.png"
        CookieHandling.storeCookies(from: try F.response(url, headers: ["Set-Cookie": "p=1; Path=/"]), for: F.request(url), in: storage)
        #expect(CookieHandling.cookieHeader(for: F.url(url), in: storage) == nil)
    }

    @Test func matchingRules() {
        #expect(CookieHandling.pathMatches("/images/a.png", cookiePath: "/images"))
        #expect(CookieHandling.pathMatches("/images", cookiePath: "/images"))
        #expect(CookieHandling.pathMatches("/images/a.png", cookiePath: "/images/"))
        #expect(!CookieHandling.pathMatches("/imagesX", cookiePath: "/images"))
        #expect(CookieHandling.pathMatches("/anything", cookiePath: ""))
        #expect(CookieHandling.domainMatches(host: "a.b.example.com", cookieDomain: ".example.com"))
        #expect(CookieHandling.domainMatches(host: "example.com", cookieDomain: ".Example.com"))
        #expect(!CookieHandling.domainMatches(host: "badexample.com", cookieDomain: ".example.com"))
        #expect(!CookieHandling.domainMatches(host: "a.example.com", cookieDomain: "example.com"))
    }
}

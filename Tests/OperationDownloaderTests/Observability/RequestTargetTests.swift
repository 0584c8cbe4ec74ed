import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// The request labels read the host and port from the URL's text in one pass: they must say what Foundation says
/// for every URL (and leave the unusual ones to Foundation).
@Suite struct RequestTargetTests {
    static let urls = [
        "http://127.0.0.1:38045/small/jpg/3.jpg?n=3", "https://images.example.com/a.png", "HTTPS://Example.COM/a",
        "http://user:pa:ss@host.test:8080/x", "http://host.test:/x", "http://h.test?q=1", "http://h.test#frag",
        "https://h.test:443", "http://[::1]:8080/a", "http://[fe80::1%25en0]/a", "http://xn--bcher-kva.example/b",
        "http://h%41st.test/a", "http://h.test:99999/a", "http://h.test:0080/a", "data:image/png;base64,AAAA",
        "http://@h.test/a", "http://a@b@h.test:81/a",
    ]

    @Test(arguments: urls)
    func theHostAndPortAreFoundations(_ text: String) throws {
        let url = try #require(URL(string: text))
        let target = RequestTarget(URLRequest(url: url), url: url)
        let expected = RequestTarget.hostAndPort(url)
        #expect(target.host == expected.host, "\(text)")
        #expect(target.port == expected.port, "\(text)")
    }

    @Test func methodsAreBounded() {
        #expect(RequestTarget.method(nil) == "GET")
        #expect(RequestTarget.method("HEAD") == "HEAD")
        #expect(RequestTarget.method("PROPFIND") == "_OTHER")
        #expect(RequestTarget.method("get") == "_OTHER")
    }

    /// A URL with the last one's origin reuses its endpoint without being parsed; every other pair of URLs in the
    /// list, in both orders, must get the endpoint of its own host, port and method.
    @Test func anEndpointFoundByTheLastOriginIsTheURLsOwn() throws {
        let texts = Self.urls + [
            "http://127.0.0.1:3804/a", "http://127.0.0.1:38045", "http://127.0.0.1:38045?x", "http://127.0.0.1/a",
            "http://127.0.0.10:38045/a", "https://images.example.com.evil.test/a", "http://host.test:8080/y",
        ]
        for first in texts {
            for second in texts {
                let endpoints = RequestEndpoints(limit: 100, sink: PrometheusMetrics())
                for (text, method) in [(first, "GET"), (second, "GET"), (second, "HEAD")] {
                    let url = try #require(URL(string: text))
                    var request = URLRequest(url: url)
                    request.httpMethod = method
                    let target = endpoints.endpoint(for: request, url: url).target
                    let expected = RequestTarget(request, url: url)
                    #expect(target == expected, "\(first) then \(text) \(method)")
                }
            }
        }
    }
}

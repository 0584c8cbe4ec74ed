import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import OperationDownloader
import Testing

/// The seam's own response value: what the operation reads from it without a Foundation response, and the
/// Foundation response made from it on demand, which must say the same as one built directly.
struct TransportResponseTests {
    private let url = URL(string: "http://127.0.0.1/a.jpg")!

    private func head(_ lines: [String]) -> TransportResponse? {
        var head = CurlResponseHead()
        for line in lines + [""] {
            let bytes = Array((line + "\r\n").utf8)
            _ = bytes.withUnsafeBytes { head.add($0) }
        }
        return head.response(for: url)
    }

    @Test func fieldsAreReadWithoutAFoundationResponse() throws {
        let response = try #require(head([
            "HTTP/1.1 206 Partial Content", "Content-Type: Image/JPEG; charset=binary", "content-length: 1234",
            "X-Twice: a", "x-twice: b",
        ]))
        #expect(response.statusCode == 206)
        #expect(response.httpVersion == "HTTP/1.1")
        #expect(response.mimeType == "image/jpeg")
        #expect(response.expectedContentLength == 1234)
        #expect(response.value(forHTTPHeaderField: "CONTENT-LENGTH") == "1234")
        #expect(response.value(forHTTPHeaderField: "X-Twice") == "a, b")
        #expect(response.value(forHTTPHeaderField: "Missing") == nil)
    }

    /// What corelibs' HTTPURLResponse reports for the same fields (status, MIME type, length) is what the
    /// operation reads from the package's value, including the odd cases.
    @Test(arguments: [
        ["Content-Type: image/png", "Content-Length: 12"],
        ["Content-Type: a/b;", "Content-Length: -3"],
        ["Content-Type: bogus", "Content-Length: abc"],
        ["Content-Length: 12", "Content-Length: 12"],
        [],
    ])
    func agreesWithFoundation(fields: [String]) throws {
        let response = try #require(head(["HTTP/2 200"] + fields))
        let built = try #require(response.httpURLResponse)
        #expect(built.statusCode == response.statusCode)
        #expect(built.mimeType == response.mimeType)
        #expect(built.expectedContentLength == response.expectedContentLength)
        #expect(built.url == url)
        #expect(response.httpURLResponse === built, "built once, then kept")
        #expect(response.urlResponse === built)
    }

    @Test func foundationResponsesAreHandedThrough() throws {
        let http = try #require(HTTPURLResponse(
            url: url, statusCode: 404, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "text/html", "ETag": "\"x\""]))
        let wrapped = TransportResponse(http)
        #expect(wrapped.urlResponse === http)
        #expect(wrapped.statusCode == 404)
        #expect(wrapped.mimeType == "text/html")
        #expect(wrapped.value(forHTTPHeaderField: "etag") == "\"x\"")

        let plain = URLResponse(url: url, mimeType: "image/png", expectedContentLength: 7, textEncodingName: nil)
        let data = TransportResponse(plain)
        #expect(data.statusCode == nil)
        #expect(data.httpURLResponse == nil)
        #expect(data.urlResponse === plain)
        #expect(data.expectedContentLength == 7)
    }

    @Test func headerNamesCompareAsASCII() {
        #expect(TransportResponse.equalsIgnoringASCIICase("Content-Type", "content-TYPE"))
        #expect(!TransportResponse.equalsIgnoringASCIICase("Content-Type", "Content-Typ"))
        #expect(!TransportResponse.equalsIgnoringASCIICase("a-b", "a\rb"))  // 0x2D vs 0x0D differ only in 0x20
        #expect(!TransportResponse.equalsIgnoringASCIICase("@", "`"))
    }
}

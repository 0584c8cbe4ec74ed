import CCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import OperationDownloader
import Testing
import TestRequirements

/// Broken servers give the right `URLError` through the curl transport, and the transport keeps working.
@Suite(.requires(.libcurl))
struct CurlFaultTests {
    let server = FixtureServer.shared

    struct Fault: Sendable, CustomTestStringConvertible {
        let name: String
        let path: String
        let expected: URLError.Code
        var idleTimeout: TimeInterval = 60
        var testDescription: String { name }
    }

    static let faults: [Fault] = [
        Fault(name: "RST mid-body", path: "/reset/baseline.jpg?after=20000", expected: .networkConnectionLost),
        Fault(name: "FIN mid-body", path: "/fin/baseline.jpg?after=20000", expected: .networkConnectionLost),
        Fault(name: "Content-Length longer than the body", path: "/bytes?n=1000&lie=5000", expected: .networkConnectionLost),
        Fault(name: "empty reply", path: "/stall?phase=headers&seconds=0", expected: .networkConnectionLost),
        Fault(name: "stall before headers", path: "/stall?phase=headers&seconds=30", expected: .timedOut, idleTimeout: 1),
        Fault(name: "stall mid-body", path: "/stall?phase=body&seconds=30", expected: .timedOut, idleTimeout: 1),
        Fault(name: "garbage instead of HTTP", path: "/garbage", expected: .badServerResponse),
        Fault(name: "chunk size not hex", path: "/chunked-error?kind=size", expected: .badServerResponse),
        Fault(name: "chunk shorter than announced", path: "/chunked-error?kind=short", expected: .networkConnectionLost),
        Fault(name: "chunked body without last chunk", path: "/chunked-error?kind=eof", expected: .networkConnectionLost),
    ]

    @Test(arguments: faults)
    func faultMapsToTheRightURLError(_ fault: Fault) async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        let tag = newTag()
        let separator = fault.path.contains("?") ? "&" : "?"
        let client = await harness.run(server.url(fault.path + separator + "tag=\(tag)")) {
            $0.idleTimeout = fault.idleTimeout
        }
        #expect(client.urlError?.code == fault.expected, "got \(String(describing: client.error))")
        #expect(client.completionCount == 1)
        #expect(client.urlError?.localizedDescription.isEmpty == false)
        #expect(client.urlError?.failingURL != nil)
        // libcurl never re-sends these on its own: exactly one request.
        #expect(server.requests(tag: tag).count == 1)

        let next = await harness.run(server.url("/images/tiny.png?tag=\(tag)&next=1"))
        #expect(next.error == nil && next.body.count > 0)
    }

    @Test func refusedConnection() async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        // Port 1 on loopback: nothing listens there (binding it needs privileges nobody uses in tests).
        let client = await harness.run(try #require(URL(string: "http://127.0.0.1:1/x.png")))
        #expect(client.urlError?.code == .cannotConnectToHost)
        #expect(client.events == [.complete(.cannotConnectToHost)])
    }

    @Test func nonHTTPSchemesNeverReachLibcurl() async throws {
        let harness = CurlHarness()
        defer { harness.invalidate() }
        for string in ["file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/", "http:///nohost"] {
            let client = await harness.run(try #require(URL(string: string)))
            #expect(client.urlError?.code == .unsupportedURL, "\(string): \(String(describing: client.error))")
        }
    }

    /// Codes the fixture server cannot produce, checked on the table itself.
    @Test func mappingTable() {
        func code(_ curl: Int32, errno: Int32 = 0, verify: Int = 0) -> URLError.Code {
            CurlErrorMapping.urlError(.init(
                code: Int(curl), message: "m", osErrno: errno, verifyResult: verify, url: URL(string: "http://a/")!)).code
        }
        #expect(code(6) == .cannotFindHost)
        #expect(code(5) == .cannotFindHost)
        #expect(code(7) == .cannotConnectToHost)
        #expect(code(7, errno: ETIMEDOUT) == .timedOut)
        #expect(code(28) == .timedOut)
        #expect(code(56, errno: ECONNRESET) == .networkConnectionLost)
        #expect(code(55, errno: EPIPE) == .networkConnectionLost)
        #expect(code(35) == .secureConnectionFailed)
        #expect(code(60, verify: 10) == .serverCertificateHasBadDate)
        #expect(code(60, verify: 9) == .serverCertificateNotYetValid)
        #expect(code(60, verify: 18) == .serverCertificateHasUnknownRoot)
        #expect(code(60, verify: 0) == .serverCertificateUntrusted)
        #expect(code(90) == .serverCertificateUntrusted)
        #expect(code(61) == .cannotDecodeContentData)
        #expect(code(63) == .dataLengthExceedsMaximum)
        #expect(code(98) == .clientCertificateRequired)
        #expect(code(92) == .networkConnectionLost)
        #expect(code(27) == .unknown)
        // A TLS connection closed without close_notify, where libcurl reports it (OpenSSL 3 without
        // SSL_OP_IGNORE_UNEXPECTED_EOF): a lost connection; other unreadable bytes are a bad response.
        let eof = CurlErrorMapping.urlError(.init(
            code: 56, message: "OpenSSL SSL_read: error:0A000126:SSL routines::unexpected eof while reading, errno 0",
            osErrno: 0, verifyResult: 0, url: URL(string: "https://a/")!))
        #expect(eof.code == .networkConnectionLost)
        #expect(code(56) == .badServerResponse)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

/// The one "connection lost" (issue 37): how each transport's report of a connection cut short becomes
/// `.networkConnectionLost` with the same words, and what stays as it was.
@Suite struct ConnectionLossTests {
    static let url = URL(string: "http://a.test/x.png")
    static func body(responded: Bool = true, received: Int = 100, expected: Int = 1000, encoding: String? = nil) -> ConnectionLoss.Body {
        var fields = [(name: "Content-Type", value: "image/png")]
        if let encoding { fields.append((name: "Content-Encoding", value: encoding)) }
        let response = TransportResponse(url: url!, statusCode: 200, httpVersion: "HTTP/1.1", fields: fields)
        return ConnectionLoss.Body(responded: responded, received: received, expected: expected, response: response)
    }

    static func code(_ error: (any Error)?) -> URLError.Code? { (error as? URLError)?.code }

    @Test func corelibsMinusOneWithLibcurlsWordsIsLost() {
        let closed = URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "transfer closed with outstanding read data remaining"])
        let error = ConnectionLoss.classify(closed, body: Self.body(expected: -1), url: Self.url)
        #expect(Self.code(error) == .networkConnectionLost)
        #expect((error as? URLError)?.localizedDescription == "the connection closed after 100 body bytes")
    }

    @Test func aBodyShortOfItsLengthIsLostWhateverTheMessage() {
        let generic = URLError(.unknown)
        #expect(Self.code(ConnectionLoss.classify(generic, body: Self.body(), url: Self.url)) == .networkConnectionLost)
        // A content-coded body's length counts encoded bytes: not comparable, so only the words could tell.
        #expect(Self.code(ConnectionLoss.classify(generic, body: Self.body(encoding: "gzip"), url: Self.url)) == .unknown)
        // Before any response, -1 without libcurl's words stays -1 (a TLS failure, say).
        #expect(Self.code(ConnectionLoss.classify(generic, body: Self.body(responded: false), url: Self.url)) == .unknown)
    }

    @Test func brokenFramingIsNotACutButAShortBadResponseIs() {
        let framing = URLError(.badServerResponse)
        #expect(Self.code(ConnectionLoss.classify(framing, body: Self.body(expected: -1), url: Self.url)) == .badServerResponse)
        #expect(Self.code(ConnectionLoss.classify(framing, body: Self.body(), url: Self.url)) == .networkConnectionLost)
    }

    @Test func aTransferEndingWithoutAResponseWasCutInItsHead() {
        let error = ConnectionLoss.classify(nil, body: Self.body(responded: false, received: 0), url: Self.url)
        #expect(Self.code(error) == .networkConnectionLost)
        #expect((error as? URLError)?.localizedDescription == "the connection closed before the response was complete")
        #expect(ConnectionLoss.classify(nil, body: Self.body(), url: Self.url) == nil, "a complete transfer is no error")
    }

    @Test func otherErrorsPassThrough() {
        for code: URLError.Code in [.timedOut, .cannotConnectToHost, .serverCertificateUntrusted, .cancelled] {
            #expect(Self.code(ConnectionLoss.classify(URLError(code), body: Self.body(), url: Self.url)) == code)
        }
        let lost = ConnectionLoss.classify(URLError(.networkConnectionLost), body: Self.body(), url: Self.url)
        #expect((lost as? URLError)?.localizedDescription == "the connection closed after 100 of 1000 body bytes")
        #expect(ImageDownloaderError.network(lost as! URLError).description
                == "connection lost (the connection closed after 100 of 1000 body bytes)")
    }
}

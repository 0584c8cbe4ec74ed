import Decoding
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OperationDownloader
import Testing
@testable import ImagedlCore

/// One wording for every error imagedl prints (issue 20, point 7): each `URLError` code it can meet in plain
/// words, never Foundation's "The operation could not be completed. (NSURLErrorDomain error -1007.)".
@Suite struct ErrorMessagesTests {
    @Test(arguments: [
        (URLError.Code.timedOut, "timed out"), (.cannotConnectToHost, "connection refused"),
        (.cannotFindHost, "host not found"), (.dnsLookupFailed, "DNS lookup failed"),
        (.networkConnectionLost, "connection lost"), (.notConnectedToInternet, "not connected to the internet"),
        (.httpTooManyRedirects, "too many redirects"), (.badURL, "bad URL"), (.unsupportedURL, "unsupported URL"),
        (.badServerResponse, "bad server response (not HTTP, or broken framing)"),
        (.cannotParseResponse, "cannot parse the server's response"), (.zeroByteResource, "empty response"),
        (.cannotDecodeContentData, "cannot decode the content encoding (gzip, deflate, br)"),
        (.cannotDecodeRawData, "cannot decode the response data"),
        (.secureConnectionFailed, "TLS handshake failed"),
        (.serverCertificateHasBadDate, "the server's certificate has expired"),
        (.serverCertificateNotYetValid, "the server's certificate is not yet valid"),
        (.serverCertificateUntrusted, "the server's certificate is not trusted"),
        (.serverCertificateHasUnknownRoot, "the server's certificate has an unknown root (self-signed?)"),
        (.clientCertificateRejected, "the server rejected the client certificate"),
        (.clientCertificateRequired, "the server requires a client certificate"),
        (.userAuthenticationRequired, "authentication required"), (.cancelled, "cancelled"),
        (.resourceUnavailable, "resource unavailable"), (.unknown, "network error"),
    ])
    func everyURLErrorCodeInPlainWords(_ example: (code: URLError.Code, words: String)) {
        // Bare, as corelibs hands them out, and inside the downloader's error.
        for error in [URLError(example.code), ImageDownloaderError.network(URLError(example.code))] as [any Error] {
            let text = ErrorMessages.describe(error)
            #expect(text == example.words)
            #expect(!text.contains("could not be completed") && !text.contains("NSURLErrorDomain"))
        }
    }

    /// The transport's own explanation follows where the words alone leave the reader guessing.
    @Test func theTransportsDetailFollowsWhereItHelps() {
        let tls = URLError(.serverCertificateUntrusted, userInfo: [NSLocalizedDescriptionKey: "SSL certificate problem: self-signed certificate"])
        #expect(ErrorMessages.describe(tls) == "the server's certificate is not trusted (SSL certificate problem: self-signed certificate)")
        let refused = URLError(.cannotConnectToHost, userInfo: [NSLocalizedDescriptionKey: "Failed to connect to 127.0.0.1 port 1"])
        #expect(ErrorMessages.describe(refused) == "connection refused")
        let generic = URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "The operation could not be completed. (NSURLErrorDomain error -1.)"])
        #expect(ErrorMessages.describe(generic) == "network error")
    }

    @Test func badImageDataSaysWhy() {
        #expect(ErrorMessages.describe(ImageDownloaderError.badImageData(.notAnImage("an HTML page")), mimeType: "text/html")
                == "not an image: the server sent text/html")
        #expect(ErrorMessages.describe(ImageDownloaderError.badImageData(.decoding(.unsupportedFormat)), mimeType: "image/jxl")
                == "no registered decoder for image/jxl")
        #expect(ErrorMessages.describe(ImageDownloaderError.badImageData(.truncated(receivedBytes: 10, partialImageAvailable: false)), mimeType: "image/jpeg")
                == "truncated: the data (10 bytes) ends before any pixel")
        #expect(ErrorMessages.describe(ImageDownloaderError.badImageData(.truncated(receivedBytes: 10, partialImageAvailable: true)))
                == "truncated: the data (10 bytes) ends before the image is complete (--allow-incomplete keeps the decoded part)")
        #expect(ErrorMessages.describe(ImageDownloaderError.invalidDownloadStatusCode(404)).hasPrefix("HTTP 404 "))
    }
}

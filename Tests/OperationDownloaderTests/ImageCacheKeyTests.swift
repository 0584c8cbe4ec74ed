import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import OperationDownloader

@Suite struct ImageCacheKeyTests {
    @Test func keyIsAbsoluteURLPlusAdditionalIdentifier() throws {
        let request = URLRequest(url: try #require(URL(string: "https://example.com/a.png?size=2")))
        #expect(imageCacheKey(for: request, additionalIdentifier: nil) == "https://example.com/a.png?size=2")
        #expect(imageCacheKey(for: request, additionalIdentifier: "") == "https://example.com/a.png?size=2")
        #expect(imageCacheKey(for: request, additionalIdentifier: "-thumb") == "https://example.com/a.png?size=2-thumb")
    }
}

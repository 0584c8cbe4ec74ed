import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import Testing
@testable import OperationDownloader

@Suite struct ImageCacheKeyTests {
    @Test func keyIsAbsoluteURLThenTheAdditionalIdentifierUnambiguously() throws {
        let request = URLRequest(url: try #require(URL(string: "https://example.com/a.png?size=2")))
        #expect(imageCacheKey(for: request, additionalIdentifier: nil) == "https://example.com/a.png?size=2")
        #expect(imageCacheKey(for: request, additionalIdentifier: "") == "https://example.com/a.png?size=2")
        #expect(imageCacheKey(for: request, additionalIdentifier: "-thumb") == "https://example.com/a.png?size=2\u{1F}-thumb")
    }

    /// Issue 12, point 10: ".../a" + "b" used to equal ".../ab".
    @Test func urlAndIdentifierNeverRunTogether() throws {
        let a = URLRequest(url: try #require(URL(string: "https://example.com/a")))
        let ab = URLRequest(url: try #require(URL(string: "https://example.com/ab")))
        #expect(imageCacheKey(for: a, additionalIdentifier: "b") != imageCacheKey(for: ab, additionalIdentifier: nil))
        let cache = AutoPurgingImageCache()
        cache.add(DecodedImageFixtures.pixel, for: a, withAdditionalIdentifier: "b")
        #expect(cache.image(for: ab, withAdditionalIdentifier: nil) == nil)
    }

    /// The variant joins the cache identifier so that no two (identifier, variant) pairs collide, and a plain
    /// decode keeps the bare identifier (so existing lookups by identifier still find it).
    @Test func variantIdentifiersAreUnambiguous() {
        let plain = ImageVariant(options: [], context: ImageDownloaderContext())
        let thumbnail = ImageVariant(options: [], context: ImageDownloaderContext(thumbnailPixelSize: CGSize(width: 8, height: 8)))
        let transformed = ImageVariant(options: [], context: ImageDownloaderContext(transformer: NamedTransformer(key: "x")))
        #expect(plain.additionalIdentifier(cacheIdentifier: nil) == nil)
        #expect(plain.additionalIdentifier(cacheIdentifier: "id") == "id")
        #expect(thumbnail.additionalIdentifier(cacheIdentifier: nil) != nil)
        let identifiers: [String?] = [nil, "id", "id\u{1E}transformer=x", "id%1E", "%"]
        var seen = Set<String?>()
        for identifier in identifiers {
            for variant in [plain, thumbnail, transformed] {
                #expect(seen.insert(variant.additionalIdentifier(cacheIdentifier: identifier)).inserted,
                        "\(String(describing: identifier)) \(variant.cacheKey)")
            }
        }
        // `.avoidDecodeImage` callers are answered with what a decoding caller cached.
        #expect(ImageVariant(options: .avoidDecodeImage, context: ImageDownloaderContext()).cacheKey == plain.cacheKey)
    }
}

private struct NamedTransformer: ImageTransformer {
    let key: String
    func transform(_ image: DecodedImage) throws -> DecodedImage { image }
}

enum DecodedImageFixtures {
    static let pixel = DecodedImage(width: 1, height: 1, pixels: [0, 0, 0, 255], format: .png)
}

import Foundation
import Testing
@testable import OperationDownloader

/// `DataURL`: RFC 2397 media types and parameters, percent escapes, forgiving base64, and typed failures for
/// hostile payloads (issue 20, point 4).
@Suite struct DataURLParsingTests {
    private func parse(_ text: String) throws -> DataURL {
        let url = try #require(URL(string: text), "not a URL: \(text.prefix(80))")
        return try DataURL(url)
    }

    /// Every byte the URL decodes to, in chunks of `chunkSize`, after `validate()` agreed on the count.
    private func decoded(_ text: String, chunkSize: Int = 5) throws -> Data {
        let parsed = try parse(text)
        let count = try parsed.validate()
        var data = Data()
        var sizes: [Int] = []
        parsed.decode(chunkSize: chunkSize) { chunk in
            sizes.append(chunk.count)
            data.append(chunk)
            return true
        }
        #expect(data.count == count, "validate() counted \(count), decode gave \(data.count)")
        #expect(sizes.dropLast().allSatisfy { $0 == chunkSize } && (sizes.last ?? 0) <= chunkSize, "\(sizes)")
        return data
    }

    @Test func mediaTypeAndParameters() throws {
        let parsed = try parse("data:Image/PNG;Charset=utf-8;name=%22a%20b%22;base64,AAAA")
        #expect(parsed.mimeType == "image/png")
        #expect(parsed.parameters == [.init(name: "charset", value: "utf-8"), .init(name: "name", value: "a b")])
        #expect(parsed.charset == "utf-8")
        #expect(parsed.isBase64)
        #expect(parsed.mediaType == "image/png;charset=utf-8;name=a b")
    }

    @Test func withoutAMediaTypeItIsUSASCIIText() throws {
        for text in ["data:,hello", "data:;base64,aGVsbG8=", "data:;charset=utf-8,hello", "data:nonsense,hello"] {
            let parsed = try parse(text)
            #expect(parsed.mimeType == "text/plain", "\(text)")
            #expect(try decoded(text) == Data("hello".utf8), "\(text)")
        }
        #expect(try parse("data:,x").charset == "US-ASCII")
        // RFC 2397: ";charset=..." alone keeps text/plain and names the charset.
        #expect(try parse("data:;charset=utf-8,x").charset == "utf-8")
    }

    @Test func percentEncodedData() throws {
        #expect(try decoded("data:,hello%20world%21") == Data("hello world!".utf8))
        #expect(try decoded("data:application/octet-stream,%00%FF%7f") == Data([0, 255, 127]))
        // A "%" without two hex digits stays as it is (WHATWG percent-decode). Checked on the decoder itself:
        // `URL(string:)` escapes every "%" of a string that has such a stray one.
        let out: [UInt8] = Array("100%25%2%zz%".utf8).withUnsafeBufferPointer { bytes in
            var index = 0
            var out: [UInt8] = []
            while index < bytes.count { out.append(DataURLDecoding.next(bytes, &index)) }
            return out
        }
        #expect(String(decoding: out, as: UTF8.self) == "100%%2%zz%")
    }

    @Test func forgivingBase64() throws {
        let expected = Data("any carnal pleas".utf8)
        for text in [
            "data:;base64,YW55IGNhcm5hbCBwbGVhcw==", "data:;base64,YW55IGNhcm5hbCBwbGVhcw",
            "data:;base64,YW55%20IGNh%0Acm5hbCBw%09bGVhcw%3D%3D", "data:;base64,YW55IGNhcm5hbCBwbGVhcw%3D%3D",
        ] {
            #expect(try decoded(text) == expected, "\(text)")
        }
        // "+" and "/" (also percent-escaped).
        #expect(try decoded("data:;base64,%2B%2F8%3D") == Data([0xFB, 0xFF]))
        #expect(try decoded("data:;base64,") == Data())
    }

    @Test func base64AgreesWithFoundationAtEverySizeAndChunking() throws {
        var generator = SystemRandomNumberGenerator()
        for size in [0, 1, 2, 3, 4, 5, 63, 64, 65, 1000, 65_537] {
            let bytes = Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let text = "data:image/png;base64," + bytes.base64EncodedString()
            for chunk in [1, 3, 4096, 64 * 1024] {
                #expect(try decoded(text, chunkSize: chunk) == bytes, "size \(size), chunk \(chunk)")
            }
        }
    }

    @Test func aFragmentIsNotData() throws {
        #expect(try decoded("data:,abc#def") == Data("abc".utf8))
    }

    /// Hostile or broken payloads: a typed failure saying what is wrong, never a trap.
    @Test(arguments: [
        ("data:image/png;base64,iVBO@@@@", "'@' is not a base64 character"),
        ("data:image/png;base64,A", "cannot be base64"),
        ("data:image/png;base64,AAAAA", "cannot be base64"),
        ("data:image/png;base64,AA=A", "data after '='"),
        ("data:image/png;base64,AA===", "more than two '='"),
        ("data:image/png;base64,AAA==", "cannot be base64"),
        ("data:image/png;base64,AA%00A", "byte 0x0 is not a base64 character"),
    ])
    func invalidBase64IsATypedFailure(_ example: (url: String, says: String)) throws {
        let parsed = try parse(example.url)
        #expect {
            try parsed.validate()
        } throws: { error in
            (error as? DataURL.Failure)?.description.contains(example.says) == true
        }
    }

    @Test func withoutACommaItIsNoDataURL() throws {
        let url = try #require(URL(string: "data:image/png;base64"))
        #expect(throws: DataURL.Failure.self) { try DataURL(url) }
    }

    /// The size is known before anything is decoded (so `maximumResponseSize` applies first): 4 MiB of
    /// payload decode to exactly 3 MiB, counted without a copy.
    @Test func theDecodedSizeIsCountedWithoutDecoding() throws {
        let payload = String(repeating: "QUJD", count: 1 << 20)
        let parsed = try parse("data:application/octet-stream;base64," + payload)
        #expect(try parsed.validate() == 3 << 20)
    }
}

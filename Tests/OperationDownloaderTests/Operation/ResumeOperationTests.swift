import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Decoding
import Testing
@testable import OperationDownloader

/// A body cut short is retried, and resumed with `Range`/`If-Range` where the first response allows it (issue 37,
/// Docs/Reliability.md "Resume"), on the scripted transport and a manual clock. The matrix: where the cut falls ×
/// which validator the first response had × what the server answers the ranged request × progressive decoding
/// on/off × a progress handler on/off. Each case checks the requests (count, `Range`, `If-Range`), that the
/// bytes delivered are exactly one version of the image (never two spliced), one answer, and progress.
@Suite struct ResumeOperationTests {
    static let original = ScriptedHarness.fixture("image.png")
    /// Another version of the image (same size, other bytes): what a changed URL serves.
    static let changed = ScriptedHarness.fixture("adam7.png")
    static let etag = "\"v1\""
    static let lastModified = "Tue, 01 Sep 2026 10:00:00 GMT"
    static let date = "Tue, 01 Sep 2026 10:00:05 GMT"

    enum Cut: String, CaseIterable {
        /// The connection closes inside the response head: no response at all.
        case insideHeader
        /// Headers, then the end before any body byte.
        case atZeroBytes
        /// Half the body, then corelibs' -1 with libcurl's message.
        case midBody
        /// Every byte but the last.
        case oneByteShort
        /// A chunked body (no Content-Length) cut inside a chunk.
        case insideChunk
    }

    enum Validator: String, CaseIterable { case strongETag, lastModified, weakETag, none }

    /// What the server answers a ranged request.
    enum Answer: String, CaseIterable {
        /// The rest, as asked.
        case rest
        /// A 206 starting one byte later.
        case otherStart
        /// A 206 of a longer representation.
        case otherTotal
        /// A multipart/byteranges 206.
        case multipart
        /// A 206 of the rest naming another version (ETag or Last-Modified).
        case otherVersion
        /// A 200 with the whole of a changed image.
        case changedWhole
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let cut: Cut
        let validator: Validator
        let answer: Answer
        let progressive: Bool
        let reportsProgress: Bool
        var testDescription: String {
            "\(cut) \(validator) \(answer)\(progressive ? " progressive" : "")\(reportsProgress ? " progress" : "")"
        }

        /// Bytes the first attempt delivered.
        var sent: Int {
            switch cut {
            case .insideHeader, .atZeroBytes: 0
            case .midBody: ResumeOperationTests.original.count / 2
            case .oneByteShort: ResumeOperationTests.original.count - 1
            case .insideChunk: 30_000
            }
        }

        /// Whether the retry asks for the rest: bytes kept, a known length, a strong validator.
        var resumes: Bool {
            sent > 0 && cut != .insideChunk && (validator == .strongETag || validator == .lastModified)
        }
    }

    static let cases: [Case] = Cut.allCases.flatMap { cut in
        Validator.allCases.flatMap { validator in
            Answer.allCases.flatMap { answer in
                [false, true].flatMap { progressive in
                    [false, true].map { Case(cut: cut, validator: validator, answer: answer, progressive: progressive, reportsProgress: $0) }
                }
            }
        }
    }

    static func validatorHeaders(_ validator: Validator, version: String = "v1") -> [String: String] {
        let modified = version == "v1" ? lastModified : "Wed, 02 Sep 2026 10:00:00 GMT"
        switch validator {
        case .strongETag: return ["ETag": "\"\(version)\""]
        case .lastModified: return ["Last-Modified": modified, "Date": date]
        case .weakETag: return ["ETag": "W/\"\(version)\""]
        case .none: return [:]
        }
    }

    static func headers(_ validator: Validator, length: Int?, version: String = "v1") -> [String: String] {
        var headers = ["Content-Type": "image/png", "Accept-Ranges": "bytes", "Date": date]
        if let length { headers["Content-Length"] = "\(length)" }
        headers.merge(validatorHeaders(validator, version: version)) { $1 }
        return headers
    }

    /// The whole image on `transfer`, as a 200.
    static func sendWhole(_ data: Data, on transfer: ScriptedTransfer, validator: Validator, version: String = "v1") {
        transfer.respond(headers: headers(validator, length: data.count, version: version))
        transfer.send(data, inChunks: 5)
        transfer.complete()
    }

    /// Docs/Reliability.md states the table's size: a case list that shrinks (a dropped cut, validator or
    /// answer) fails here, not silently.
    @Test func theResumeTableHas480Cases() {
        #expect(Self.cases.count == 480)
        #expect(Set(Self.cases.map { "\($0.cut)|\($0.validator)|\($0.answer)|\($0.progressive)|\($0.reportsProgress)" }).count == 480)
    }

    @Test(arguments: cases)
    func aCutBodyIsRetriedAndResumedWhereAllowed(_ c: Case) async throws {
        let harness = ScriptedHarness {
            $0.retryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: 4, initialDelay: 0)
            $0.progressiveDecodingInterval = 0
        }
        let recorder = AsyncRecorder()
        let token = harness.downloader.downloadImage(
            ScriptedHarness.url(), options: c.progressive ? [.progressiveLoad] : [], context: nil,
            progress: c.reportsProgress ? recorder.progress : nil, completed: recorder.completed)
        let original = Self.original
        let first = try #require(await harness.transport.transfer(0))
        #expect(first.request.urlRequest.value(forHTTPHeaderField: "Range") == nil)
        switch c.cut {
        case .insideHeader:
            first.complete()  // libcurl takes a head cut before its end as a complete response without body
        case .atZeroBytes:
            first.respond(headers: Self.headers(c.validator, length: original.count))
            first.complete(error: URLError(.networkConnectionLost))
        case .midBody:
            first.respond(headers: Self.headers(c.validator, length: original.count))
            first.send(original.prefix(c.sent), inChunks: 4)
            first.complete(error: URLError(.unknown, userInfo: [
                NSLocalizedDescriptionKey: "transfer closed with \(original.count - c.sent) bytes remaining to read"]))
        case .oneByteShort:
            first.respond(headers: Self.headers(c.validator, length: original.count))
            first.send(original.prefix(c.sent), inChunks: 4)
            first.complete(error: URLError(.networkConnectionLost))
        case .insideChunk:
            first.respond(headers: Self.headers(c.validator, length: nil))
            first.send(original.prefix(c.sent), inChunks: 4)
            first.complete(error: URLError(.unknown, userInfo: [
                NSLocalizedDescriptionKey: "transfer closed with outstanding read data remaining"]))
        }
        harness.clock.advance(by: 0)
        let second = try #require(await harness.transport.transfer(1))
        let range = second.request.urlRequest.value(forHTTPHeaderField: "Range")
        let ifRange = second.request.urlRequest.value(forHTTPHeaderField: "If-Range")
        var requests = 2
        var expected = original
        var resumedFrom: Int?
        if c.resumes {
            #expect(range == "bytes=\(c.sent)-")
            #expect(ifRange == (c.validator == .strongETag ? Self.etag : Self.lastModified))
            let rest = original.dropFirst(c.sent)
            var headers = Self.headers(c.validator, length: rest.count)
            headers["Content-Range"] = "bytes \(c.sent)-\(original.count - 1)/\(original.count)"
            switch c.answer {
            case .rest:
                resumedFrom = c.sent
            case .otherStart:
                headers["Content-Range"] = "bytes \(c.sent + 1)-\(original.count - 1)/\(original.count)"
            case .otherTotal:
                headers["Content-Range"] = "bytes \(c.sent)-\(original.count)/\(original.count + 1)"
            case .multipart:
                headers["Content-Type"] = "multipart/byteranges; boundary=B"
            case .otherVersion:
                headers.merge(Self.validatorHeaders(c.validator, version: "v2")) { $1 }
            case .changedWhole:
                expected = Self.changed
            }
            if c.answer == .changedWhole {
                Self.sendWhole(Self.changed, on: second, validator: c.validator, version: "v2")
            } else {
                second.respond(status: 206, headers: headers)
                if c.answer == .rest {
                    second.send(Data(rest), inChunks: 3)
                    second.complete()
                } else {
                    // Discarded at its head: the whole is asked for again, without Range.
                    #expect(second.isCancelled)
                    let third = try #require(await harness.transport.transfer(2))
                    #expect(third.request.urlRequest.value(forHTTPHeaderField: "Range") == nil)
                    #expect(third.request.urlRequest.value(forHTTPHeaderField: "If-Range") == nil)
                    Self.sendWhole(original, on: third, validator: c.validator)
                    requests = 3
                }
            }
        } else {
            #expect(range == nil && ifRange == nil)
            Self.sendWhole(original, on: second, validator: c.validator)
        }
        await recorder.completion()
        await harness.drained()
        #expect(recorder.finals.count == 1)
        let final = try #require(recorder.final)
        #expect(final.error == nil, "\(String(describing: final.error))")
        #expect(final.data == expected, "the bytes are exactly one version of the image")
        #expect(final.image?.width == 160 && final.image?.isIncomplete == false)
        #expect(harness.transport.transfers.count == requests)
        #expect(token?.metrics?.attemptCount == requests)
        #expect(token?.metrics?.resumedFromByte == resumedFrom)
        #expect(token?.metrics?.receivedBytes == expected.count)
        if c.reportsProgress {
            let progress = recorder.progressList
            #expect(progress.last.map { $0.0 == expected.count && $0.1 == expected.count } == true, "\(progress.suffix(3))")
            if resumedFrom != nil {
                // Progress goes on from the bytes kept: it never goes back.
                let received = progress.map(\.0)
                #expect(zip(received, received.dropFirst()).allSatisfy { $0 <= $1 }, "\(received)")
            }
        } else {
            #expect(recorder.progressList.isEmpty)
        }
        if !c.progressive { #expect(recorder.partials.isEmpty) }
    }

    // MARK: - Partial images

    /// Rows of a partial image of a non-interlaced PNG that hold pixels (the rest is still transparent).
    private static func decodedRows(_ image: DecodedImage) -> Int {
        let rowBytes = image.width * 4
        var rows = 0
        for row in 0..<image.height where image.pixels[(row * rowBytes)..<((row + 1) * rowBytes)].contains(where: { $0 != 0 }) {
            rows = row + 1
        }
        return rows
    }

    /// A download that starts over (no validator: the retry fetches from byte 0) never shows an older partial
    /// image after a newer one: the new decoders deliver partial images only once past the bytes behind the
    /// newest one delivered.
    @Test func aRestartNeverShowsAnOlderPartialImage() async throws {
        let harness = ScriptedHarness {
            $0.retryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: 2, initialDelay: 0)
            $0.progressiveDecodingInterval = 0
        }
        let recorder = AsyncRecorder()
        let token = harness.downloader.downloadImage(
            ScriptedHarness.url(), options: [.progressiveLoad], context: nil, progress: nil, completed: recorder.completed)
        let operation = try #require(token?.operation as? ImageDownloaderOperation)
        let original = Self.original
        /// Sends `data` in 2 KB pieces, each decoded (and its partial image delivered) before the next.
        func paced(_ transfer: ScriptedTransfer, _ data: Data) async {
            for offset in stride(from: 0, to: data.count, by: 2_000) {
                transfer.send(data.subdata(in: offset..<min(data.count, offset + 2_000)))
                await drain(operation.coderQueue)
                await harness.drained()
            }
        }
        let first = try #require(await harness.transport.transfer(0))
        first.respond(headers: Self.headers(.none, length: original.count))
        await paced(first, original.prefix(40_000))
        let before = recorder.partials.count
        #expect(before >= 10)
        first.complete(error: URLError(.networkConnectionLost))
        harness.clock.advance(by: 0)
        let second = try #require(await harness.transport.transfer(1))
        #expect(second.request.urlRequest.value(forHTTPHeaderField: "Range") == nil)
        second.respond(headers: Self.headers(.none, length: original.count))
        await paced(second, original)
        second.complete()
        await recorder.completion()
        await harness.drained()
        let rows = recorder.partials.map(Self.decodedRows)
        #expect(rows.count > before, "the second attempt delivers partial images once past the first")
        #expect(zip(rows, rows.dropFirst()).allSatisfy { $0 <= $1 }, "partial images went back: \(rows)")
        #expect(recorder.final?.data == original && recorder.final?.image?.isIncomplete == false)
    }

    /// A resumed body goes on with the same incremental decoder: the partial images before and after the cut
    /// come from one decode, and the last one is not older than the first attempt's.
    @Test func aResumedBodyKeepsItsIncrementalDecoder() async throws {
        let harness = ScriptedHarness {
            $0.retryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: 2, initialDelay: 0)
            $0.progressiveDecodingInterval = 0
        }
        let recorder = AsyncRecorder()
        let token = harness.downloader.downloadImage(
            ScriptedHarness.url(), options: [.progressiveLoad], context: nil, progress: nil, completed: recorder.completed)
        let original = Self.original
        let first = try #require(await harness.transport.transfer(0))
        first.respond(headers: Self.headers(.strongETag, length: original.count))
        first.send(original.prefix(20_000), inChunks: 10)
        await recorder.wait { !$0.partials.isEmpty }
        first.complete(error: URLError(.networkConnectionLost))
        harness.clock.advance(by: 0)
        let second = try #require(await harness.transport.transfer(1))
        #expect(second.request.urlRequest.value(forHTTPHeaderField: "Range") == "bytes=20000-")
        var headers = Self.headers(.strongETag, length: original.count - 20_000)
        headers["Content-Range"] = "bytes 20000-\(original.count - 1)/\(original.count)"
        second.respond(status: 206, headers: headers)
        second.send(Data(original.dropFirst(20_000)), inChunks: 10)
        second.complete()
        await recorder.completion()
        await harness.drained()
        let rows = recorder.partials.map(Self.decodedRows)
        #expect(zip(rows, rows.dropFirst()).allSatisfy { $0 <= $1 }, "\(rows)")
        #expect(recorder.final?.data == original)
        #expect(token?.metrics?.resumedFromByte == 20_000 && token?.metrics?.statusCode == 206)
    }

    // MARK: - What is never resumed

    enum NotResumed: String, CaseIterable, CustomTestStringConvertible {
        case noAcceptRanges, gzip, callerRange, post
        var testDescription: String { rawValue }
    }

    /// No `Accept-Ranges: bytes`, a content-coded body (the range would count encoded bytes), a caller's own
    /// `Range`, a method other than GET: the retry starts from byte 0, without `Range`.
    @Test(arguments: NotResumed.allCases)
    func theseStartOver(_ reason: NotResumed) async throws {
        let harness = ScriptedHarness { $0.retryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: 2, initialDelay: 0) }
        var request = URLRequest(url: ScriptedHarness.url())
        if reason == .callerRange { request.setValue("bytes=0-", forHTTPHeaderField: "Range") }
        if reason == .post { request.httpMethod = "POST" }
        let recorder = AsyncRecorder()
        harness.downloader.downloadImage(with: request, completed: recorder.completed)
        let original = Self.original
        let first = try #require(await harness.transport.transfer(0))
        var headers = Self.headers(.strongETag, length: original.count)
        if reason == .noAcceptRanges { headers["Accept-Ranges"] = nil }
        if reason == .gzip { headers["Content-Encoding"] = "gzip" }
        first.respond(headers: headers)
        first.send(original.prefix(10_000))
        first.complete(error: URLError(.networkConnectionLost))
        harness.clock.advance(by: 0)
        let second = try #require(await harness.transport.transfer(1))
        #expect(second.request.urlRequest.value(forHTTPHeaderField: "If-Range") == nil)
        #expect(second.request.urlRequest.value(forHTTPHeaderField: "Range") == (reason == .callerRange ? "bytes=0-" : nil))
        Self.sendWhole(original, on: second, validator: .strongETag)
        await recorder.completion()
        #expect(recorder.final?.data == original)
    }

    /// A 416 to the ranged request: the whole is asked for again, at once.
    @Test func a416StartsOverWithoutRange() async throws {
        let harness = ScriptedHarness { $0.retryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: 2, initialDelay: 0) }
        let (recorder, token) = harness.download()
        let original = Self.original
        let first = try #require(await harness.transport.transfer(0))
        first.respond(headers: Self.headers(.strongETag, length: original.count))
        first.send(original.prefix(10_000))
        first.complete(error: URLError(.networkConnectionLost))
        harness.clock.advance(by: 0)
        let second = try #require(await harness.transport.transfer(1))
        second.respond(status: 416, headers: ["Content-Range": "bytes */\(original.count)"])
        let third = try #require(await harness.transport.transfer(2))
        #expect(third.request.urlRequest.value(forHTTPHeaderField: "Range") == nil)
        Self.sendWhole(original, on: third, validator: .strongETag)
        await recorder.completion()
        #expect(recorder.final?.data == original && token?.metrics?.attemptCount == 3)
    }

    /// An error status to the ranged request is retried as usual, and the bytes kept wait for the next attempt.
    @Test func anErrorStatusKeepsTheBytesForTheNextAttempt() async throws {
        let harness = ScriptedHarness { $0.retryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: 3, initialDelay: 0) }
        let (recorder, token) = harness.download()
        let original = Self.original
        let first = try #require(await harness.transport.transfer(0))
        first.respond(headers: Self.headers(.strongETag, length: original.count))
        first.send(original.prefix(10_000))
        first.complete(error: URLError(.networkConnectionLost))
        harness.clock.advance(by: 0)
        try #require(await harness.transport.transfer(1)).respond(status: 503, headers: ["Content-Type": "text/plain"])
        harness.clock.advance(by: 0)
        let third = try #require(await harness.transport.transfer(2))
        #expect(third.request.urlRequest.value(forHTTPHeaderField: "Range") == "bytes=10000-")
        var headers = Self.headers(.strongETag, length: original.count - 10_000)
        headers["Content-Range"] = "bytes 10000-\(original.count - 1)/\(original.count)"
        third.respond(status: 206, headers: headers)
        third.send(Data(original.dropFirst(10_000)))
        third.complete()
        await recorder.completion()
        #expect(recorder.final?.data == original)
        #expect(token?.metrics?.attemptCount == 3 && token?.metrics?.resumedFromByte == 10_000)
    }

    /// A resumed body is stored in the HTTP cache whole, under the `200` it continues, and served from there.
    @Test func aResumedBodyIsStoredWhole() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resume-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = HTTPImageCache(directory: folder)
        let harness = ScriptedHarness {
            $0.retryPolicy = ImageDownloaderRetryPolicy(maximumAttempts: 2, initialDelay: 0)
            $0.httpCache = cache
        }
        let (recorder, _) = harness.download(options: .useURLCache)
        let original = Self.original
        let first = try #require(await harness.transport.transfer(0))
        var headers = Self.headers(.strongETag, length: original.count)
        headers["Cache-Control"] = "max-age=600"
        headers["Date"] = HTTPDate.format(Date())  // fresh now
        first.respond(headers: headers)
        first.send(original.prefix(10_000))
        first.complete(error: URLError(.networkConnectionLost))
        harness.clock.advance(by: 0)
        let second = try #require(await harness.transport.transfer(1))
        var rest = Self.headers(.strongETag, length: original.count - 10_000)
        rest["Content-Range"] = "bytes 10000-\(original.count - 1)/\(original.count)"
        second.respond(status: 206, headers: rest)
        second.send(Data(original.dropFirst(10_000)))
        second.complete()
        await recorder.completion()
        #expect(recorder.final?.data == original)
        // The next download is the cache's: the whole body, no request.
        let (again, token) = harness.download(options: .useURLCache)
        await again.completion()
        #expect(again.final?.data == original)
        #expect(token?.metrics?.source == .httpCache && token?.metrics?.attemptCount == 0)
        #expect(harness.transport.transfers.count == 2)
    }
}
